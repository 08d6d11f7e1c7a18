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
