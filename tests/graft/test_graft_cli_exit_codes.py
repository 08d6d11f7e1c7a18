"""`py4 graft` exit codes: bad input is exit 2 as for every py4 command; exit 1
is kept for a graft that does not verify (a result, as `boa certify` exits 1 when not certified)."""

from __future__ import annotations

import pytest
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
    # Not a TypeError traceback from dict([...]) (exit 1).
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
    monkeypatch.setattr("py4.graft.config.resolve_graft_config", lambda *a, **k: None)
    res = CliRunner().invoke(app, ["graft", "--out", str(tmp_path / "o"), "--no-progress"])
    assert isinstance(res.exception, RuntimeError) and res.exit_code != 2
    assert "error: index out of range" not in res.output


@pytest.mark.parametrize("text, kind", [("[]\n", "list"), ("0\n", "int"), ("false\n", "bool")])
def test_a_config_file_holding_an_empty_list_zero_or_false_is_not_taken_for_an_empty_file(tmp_path, text, kind):
    # `[]`, `0` and `false` are values, not "no config" (a truthiness test would read them as {}).
    config = tmp_path / "graft.yaml"
    config.write_text(text, encoding="utf-8")
    res = CliRunner().invoke(app, ["graft", "--config", str(config), "--mid", "m", "--it", "i", "--base", "b",
                                   "--out", str(tmp_path / "o"), "--no-progress"])
    assert res.exit_code == 2, res.output
    assert f"<root>: expected a mapping of GraftConfig fields, got {kind}" in res.output


@pytest.mark.parametrize("value, kind", [("5", "int"), ("[]", "list"), ("false", "bool")])
def test_a_checkpoint_that_is_neither_a_path_nor_a_mapping_names_the_field(tmp_path, value, kind):
    # `mid: 5` with --mid on the command line is named, not dict(5)'s TypeError traceback;
    # `mid: []` and `mid: false` are named too, not taken for an empty mapping.
    config = tmp_path / "graft.yaml"
    config.write_text(f"mid: {value}\nit: i\nbase: b\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["graft", "--config", str(config), "--mid", "m", "--out", str(tmp_path / "o"),
                                   "--no-progress"])
    assert res.exit_code == 2, res.output
    assert f"mid: expected a folder or Hub id, or a mapping with path and revision, got {kind}" in res.output
    assert "Traceback" not in res.output and isinstance(res.exception, SystemExit)


def test_a_checkpoint_given_as_a_path_in_the_file_takes_the_flags_revision(tmp_path):
    from py4.graft.config import resolve_graft_config

    config = tmp_path / "graft.yaml"
    config.write_text("mid: m\nit: google/gemma-3-1b-it\nbase: b\nout: o\n", encoding="utf-8")
    cfg = resolve_graft_config(config, {"it.revision": "abc", "lambda_": 0.0, "overwrite": None}, ["lambda_=0.5"])
    assert (cfg.it.path, cfg.it.revision, cfg.lambda_) == ("google/gemma-3-1b-it", "abc", 0.5)  # overrides win
    assert cfg.overwrite is False  # None leaves a field alone
