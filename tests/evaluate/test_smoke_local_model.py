"""A tiny local -it model through real episodes, end to end (transformers, chat template, parsing, Boa)."""

from __future__ import annotations

import json

import pytest

from py4.data.smoke_instructions import PROBLEM_TEMPLATES
from py4.episodes import EpisodeConfig, OUTCOMES
from py4.evaluate.harness import EvalConfig, run
from py4.problems.schema import Problem


def smoke_problems() -> list[Problem]:
    """Problems in the shape the tiny -it model was taught (its SFT episodes' templates)."""
    return [template.problem(f"smoke/{i}", 3 + i, template.names[0], "test_heldin", ["P4-12"])
            for i, template in enumerate(PROBLEM_TEMPLATES[:3])]


@pytest.mark.smoke
@pytest.mark.timeout(1800)  # the first run builds the smoke assets (minutes on a busy 2-core machine)
def test_tiny_model_runs_episodes_end_to_end(smoke_assets, tmp_path):
    from py4.evaluate.local_model import LocalModelPolicy

    policy = LocalModelPolicy(str(smoke_assets / "it"), temperature=0.0, batch_size=4)
    config = EvalConfig(splits=["test_heldin"], episode=EpisodeConfig(token_budget=600, max_turn_tokens=200,
                                                                      enable_thinking=False))
    results = run(config, tmp_path / "eval", progress=False, policy=policy,
                  problems={"test_heldin": smoke_problems()})
    split = results["splits"]["test_heldin"]
    assert split["episodes"] == 3 and sum(split["outcomes"].values()) == 3
    records = [json.loads(line) for line in (tmp_path / "eval" / "transcripts.jsonl").read_text().splitlines()]
    for record in records:
        assert record["outcome"] in OUTCOMES
        assert record["turns"] and all(t["tokens"] > 0 for t in record["turns"])
        assert record["tokens_used"] >= sum(t["tokens"] for t in record["turns"])
        assert record["messages"][0]["role"] == "system" and record["messages"][2]["role"] == "assistant"
    # the -it model was taught the format: its turns carry tool calls that the schema parser reads
    calls = [c for r in records for t in r["turns"] for c in t["calls"]]
    assert calls and any(c.get("error") is None for c in calls), records[0]["turns"]
    assert any(e.get("tool") in ("run_code", "submit") for r in records for e in r["events"])
