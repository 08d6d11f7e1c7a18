"""A real model through one of Inspect's own providers (``hf/``): the tiny smoke -it model."""

from __future__ import annotations

import pytest
from inspect_ai import eval as inspect_eval

from py4.inspect_tasks.scorer import SCORER_NAME
from py4.inspect_tasks.tasks import python4_task


@pytest.mark.smoke
def test_smoke_model_through_inspects_hf_provider(smoke_assets, tmp_path):
    task = python4_task("test_heldout", limit=1, max_turn_tokens=32, token_budget=48)
    [log] = inspect_eval(task, model="hf/local", model_args={"model_path": str(smoke_assets / "it"), "device": "cpu"},
                         log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    [sample] = log.samples
    meta = sample.scores[SCORER_NAME].metadata
    # The untrained tiny model writes no complete call: each turn is at most max_turn_tokens
    # (the per-turn max_tokens the solver asks for) and the episode ends as py4's would.
    assert meta["outcome"] in ("no_submission", "truncated", "uncertified")
    assert 0 < meta["tokens_used"] and all(t["tokens"] <= 32 for t in sample.store["py4_episode"]["turns"])
    assert sample.messages[0].role == "system" and sample.messages[2].role == "assistant"
