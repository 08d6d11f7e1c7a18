"""A campaign's evaluation stage writes its episodes as an Inspect log in its run folder, as
``py4 eval --inspect-log`` does, so that the report can link each evaluation's transcripts."""

from __future__ import annotations

from pathlib import Path

import pytest

from py4 import stages
from py4.overrides import overrides

pytest.importorskip("inspect_ai")


def test_eval_stage_writes_an_inspect_log_of_its_episodes(tmp_path):
    from inspect_ai.log import read_eval_log

    from py4.evaluate.harness import INSPECT_LOG

    out = tmp_path / "eval"
    call = stages.StageCall(stage="eval", options={"out": str(out), "policy": "gold", "split": ["test_heldout"],
                                                   "progress": False},
                            overrides=tuple(overrides({"limit": 2})))
    results = stages.run_call(call)
    [log_file] = sorted(Path(out, INSPECT_LOG).glob("*.eval"))
    log = read_eval_log(str(log_file))
    assert len(log.samples) == results["overall"]["episodes"] == 2
    assert {s.scores["boa_certification"].value["certified"] for s in log.samples} == {1.0}  # gold certifies
