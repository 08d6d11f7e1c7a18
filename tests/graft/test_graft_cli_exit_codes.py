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


def test_a_config_that_is_not_a_mapping_names_the_file_and_exits_2(tmp_path):
    # It used to reach dict([...]) and end in a TypeError traceback (exit 1).
    config = tmp_path / "graft.yaml"
    config.write_text("- lambda_: 0.5\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["graft", "--config", str(config), "--out", str(tmp_path / "o"), "--no-progress"])
    assert res.exit_code == 2, res.output
    assert res.output.startswith(f"error: invalid config {config}") and "expected a mapping" in res.output
    assert "got list" in res.output and "Traceback" not in res.output


def test_graft_errors_are_user_errors():
    from py4.errors import Py4Error
    from py4.graft.checkpoint import GraftError

    assert issubclass(GraftError, Py4Error) and issubclass(GraftError, ValueError)


def test_a_bug_in_the_graft_keeps_its_traceback(tmp_path, monkeypatch):
    """Only user errors (Py4Error) become one line; anything else propagates with its traceback."""
    import py4.graft.engine

    def bug(cfg, show_progress=True):
        raise RuntimeError("index out of range in the shard planner")

    monkeypatch.setattr(py4.graft.engine, "run", bug)
    monkeypatch.setattr("py4.graft.cli._resolve_config", lambda *a, **k: None)
    res = CliRunner().invoke(app, ["graft", "--out", str(tmp_path / "o"), "--no-progress"])
    assert isinstance(res.exception, RuntimeError) and res.exit_code != 2
    assert "error: index out of range" not in res.output
