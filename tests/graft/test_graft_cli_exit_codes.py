"""`py4 graft` exit codes (issue 21, trip 9): bad input is exit 2 as for every py4 command; exit 1
is kept for a graft that does not verify (a result, as `boa certify` exits 1 when not certified)."""

from __future__ import annotations

from typer.testing import CliRunner

from py4.cli import app


def test_inputs_that_do_not_exist_exit_2(tmp_path):
    res = CliRunner().invoke(app, ["graft", "--mid", str(tmp_path / "nowhere"), "--it", str(tmp_path / "it"),
                                   "--base", str(tmp_path / "base"), "--out", str(tmp_path / "o"), "--no-progress"])
    assert res.exit_code == 2, res.output
    assert "is neither an existing folder nor a Hub id" in res.output and "Traceback" not in res.output


def test_verify_without_a_graft_exits_2(tmp_path):
    res = CliRunner().invoke(app, ["graft", "verify", "--out", str(tmp_path / "none")])
    assert res.exit_code == 2 and "resolved_config.yaml: not found" in res.output
