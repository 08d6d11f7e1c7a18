"""``py4 eval --inspect-log DIR``: the transcripts as an Inspect log that inspect_ai reads back."""

from __future__ import annotations

import json

from inspect_ai.log import list_eval_logs, read_eval_log
from typer.testing import CliRunner

from py4.cli import app
from py4.inspect_tasks.scorer import SCORER_NAME, py4_summary


def test_py4_eval_writes_an_inspect_log_that_reads_back(tmp_path):
    out, logs = tmp_path / "eval", tmp_path / "inspect-logs"
    done = CliRunner().invoke(app, ["eval", "--split", "test_heldin,test_heldout", "--policy", "gold", "--limit", "2",
                                    "--samples", "2", "--out", str(out), "--no-progress",
                                    "--inspect-log", str(logs)])
    assert done.exit_code == 0, done.output
    results = json.loads((out / "results.json").read_text())
    records = [json.loads(line) for line in (out / "transcripts.jsonl").open()]

    [info] = list_eval_logs(str(logs))
    log = read_eval_log(info)
    assert log.status == "success" and log.eval.model == "py4/gold" and log.eval.config.epochs == 2
    assert log.eval.eval_id and log.eval.run_id  # the viewer tells logs apart by them
    assert len(log.samples) == len(records) == 8  # 2 splits x 2 problems x 2 samples
    assert py4_summary(log) == {"splits": results["splits"], "overall": results["overall"]}
    assert log.results.metadata["py4"]["splits"] == results["splits"]
    by_key = {(r["problem_id"], r["sample"] + 1): r for r in records}
    assert sorted((s.id, s.epoch) for s in log.samples) == sorted(by_key)
    for sample in log.samples:
        record = by_key[(sample.id, sample.epoch)]
        assert [m.role for m in sample.messages] == [m["role"] for m in record["messages"]]
        [call] = sample.messages[2].tool_calls
        assert call.function == "submit" and call.arguments["code"] == record["events"][0]["code"]
        score = sample.scores[SCORER_NAME]
        assert score.value == {"certified": 1.0, "reward": 1.0}
        assert score.explanation == record["events"][0]["answer"]
    manifest = json.loads((out / "run_manifest.json").read_text())
    assert manifest["outputs"]["inspect_log"]["path"] == info.name.removeprefix("file://")


def test_inspect_log_without_inspect_ai_says_what_to_install(tmp_path, monkeypatch):
    import importlib.util

    import pytest

    from py4.config import load_config
    from py4.evaluate.harness import EvalConfig, run

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "inspect_ai" else real(name, *a))
    cfg = load_config(EvalConfig, None, ["policy.name=gold", "splits=[test_heldin]", "limit=1"])
    with pytest.raises(ValueError, match=r"pip install -e '\.\[inspect\]'"):
        run(cfg, tmp_path / "eval", progress=False, inspect_log=tmp_path / "logs")
    assert not (tmp_path / "eval" / "transcripts.jsonl").exists()  # refused before any episode ran
