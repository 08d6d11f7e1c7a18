"""`py4 eval` end to end with a scripted policy: the run folder and its files."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from py4.cli import app
from py4.runs import read_manifest


def test_py4_eval_gold_writes_results_table_transcripts_and_manifest(tmp_path):
    out = tmp_path / "eval"
    result = CliRunner().invoke(app, ["eval", "--split", "test_heldin", "--split", "test_heldout", "--policy", "gold",
                                      "--samples", "2", "--temperature", "0.5", "--limit", "3", "--out", str(out),
                                      "--no-progress", "episode.diagnostics=verbatim"])
    assert result.exit_code == 0, result.output
    assert "test_heldin: certified 1.000" in result.output
    results = json.loads((out / "results.json").read_text())
    for split in ("test_heldin", "test_heldout"):
        s = results["splits"][split]
        assert s["certified_rate"] == 1.0 and s["pass_at_k"] == {"1": 1.0, "2": 1.0}
        assert s["outcomes"] == {"certified": 6, "uncertified": 0, "no_submission": 0, "truncated": 0}
        assert s["mean_reward"] == 1.0 and s["per_rule"]
    assert results["sampling"]["temperature"] == 0.5 and results["episode"]["diagnostics"] == "verbatim"
    assert len(results["bank"]["sha256"]) == 64 and results["boa"]["implementation"]
    lines = (out / "transcripts.jsonl").read_text().splitlines()
    assert len(lines) == 12 and json.loads(lines[0])["messages"][2]["tool_calls"][0]["function"]["name"] == "submit"
    assert "| test_heldout |" in (out / "results.md").read_text()
    manifest = read_manifest(out)
    assert manifest["status"] == "done" and manifest["kind"] == "eval"
    assert manifest["inputs"]["bank"]["jsonl_sha256"] == results["bank"]["sha256"]
    assert (out / "resolved_config.yaml").exists()


def test_py4_eval_errors_are_clear(tmp_path):
    runner = CliRunner()
    bad_split = runner.invoke(app, ["eval", "--split", "test_nowhere", "--policy", "gold",
                                    "--out", str(tmp_path / "a")])
    assert bad_split.exit_code == 2 and "unknown split 'test_nowhere'" in bad_split.output
    no_model = runner.invoke(app, ["eval", "--split", "test_heldin", "--policy", "local", "--out", str(tmp_path / "b")])
    assert no_model.exit_code == 2 and "needs policy.model" in no_model.output
    bad_policy = runner.invoke(app, ["eval", "--policy", "oracle", "--out", str(tmp_path / "c")])
    assert bad_policy.exit_code == 2 and "policy.name" in bad_policy.output
