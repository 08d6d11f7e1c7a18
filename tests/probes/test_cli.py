"""`py4 probes eval` end to end on the tiny smoke base model, with the base beside and a compare run."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner


@pytest.mark.smoke
def test_probes_eval_writes_results_with_base_and_comparison(smoke_assets, tmp_path):
    from py4.cli import app

    base = str(smoke_assets / "base")
    runner = CliRunner()
    first = runner.invoke(app, ["probes", "eval", "--model", base, "--out", str(tmp_path / "a"),
                                "--limit", "30", "--no-progress"])
    assert first.exit_code == 0, first.output
    assert "No base scored" in (tmp_path / "a" / "results.md").read_text()  # no floor is said, not hidden
    second = runner.invoke(app, ["probes", "eval", "--model", base, "--base", base, "--compare",
                                 str(tmp_path / "a" / "results.json"), "--out", str(tmp_path / "b"),
                                 "--limit", "30", "--no-progress"])
    assert second.exit_code == 0, second.output
    results = json.loads((tmp_path / "b" / "results.json").read_text())
    assert results["summary"]["all"]["pairs"] == len(results["scores"]) >= 30
    assert results["minus_base"]["all"]["difference"] == 0  # the same model: no difference
    assert results["minus_compare"]["all"]["ci_low"] == 0 == results["minus_compare"]["all"]["ci_high"]
    assert set(results["summary"]["by_kind"]) == {"syntax", "semantic"}
    assert "held-in" in (tmp_path / "b" / "results.md").read_text()


def test_user_errors_name_the_flag_and_what_was_expected(tmp_path):
    from py4.cli import app
    from py4.problems.probe_set.build import probe_paths

    runner = CliRunner()
    missing = runner.invoke(app, ["eval", "probes", "--model", str(tmp_path / "nope"), "--out", str(tmp_path / "o")])
    assert missing.exit_code == 2 and "--model" in missing.output and "no such folder" in missing.output
    other = tmp_path / "other.json"
    probe_set = json.loads(probe_paths()[1].read_text())["jsonl_sha256"]  # the same set, too few pairs
    other.write_text(json.dumps({"probes": {"jsonl_sha256": probe_set}, "scores": [{"id": "P4-01/00/bare"}]}))
    compare = runner.invoke(app, ["eval", "probes", "--model", str(tmp_path / "nope"), "--compare", str(other),
                                  "--out", str(tmp_path / "o"), "--limit", "10"])
    assert compare.exit_code == 2 and str(other) in compare.output and "same --limit" in compare.output
    garbage = tmp_path / "garbage.json"
    garbage.write_text("[1, 2]")
    bad = runner.invoke(app, ["probes", "eval", "--model", "x", "--compare", str(garbage),
                              "--out", str(tmp_path / "o")])
    assert bad.exit_code == 2 and "`scores` list" in bad.output


def test_a_bug_while_scoring_keeps_its_traceback(tmp_path, monkeypatch):
    """Only Py4Errors become one line and exit 2 (py4.errors.cli_errors); a bug propagates."""
    import py4.probes.evaluate
    from py4.cli import app

    def bug(*args, **kwargs):
        raise RuntimeError("shape mismatch in the span log-probabilities")

    monkeypatch.setattr(py4.probes.evaluate, "evaluate_probes", bug)
    for command in (["eval", "probes"], ["probes", "eval"]):
        result = CliRunner().invoke(app, [*command, "--model", "x", "--out", str(tmp_path / "o")])
        assert isinstance(result.exception, RuntimeError) and result.exit_code != 2
        assert "error: shape mismatch" not in result.output
