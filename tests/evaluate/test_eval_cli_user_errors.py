"""`py4 eval` user errors: say what is missing, never score by default."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from py4.cli import app


@pytest.fixture(autouse=True)
def _stop_boa_workers():
    """`py4 eval` in-process starts the shared Boa pool; stop it with the test that started it."""
    yield
    from py4.episodes.pool import close_shared_executors

    close_shared_executors()


def _eval(*args: str):
    return CliRunner().invoke(app, ["eval", *args, "--no-progress"])


def test_no_model_and_no_policy_is_an_error_naming_both(tmp_path):
    # Forgetting --model must not score the gold solutions (certified 1.000).
    result = _eval("--split", "test_heldin", "--limit", "1", "--out", str(tmp_path / "x"))
    assert result.exit_code == 2, result.output
    assert "--model" in result.output and "--policy" in result.output
    assert "certified" not in result.output
    assert not (tmp_path / "x" / "results.json").exists()


def test_a_policy_named_in_the_config_or_an_override_is_enough(tmp_path):
    config = tmp_path / "eval.yaml"
    config.write_text("policy: {name: gold}\nlimit: 1\nsplits: [test_heldin]\n")
    by_file = _eval("--config", str(config), "--out", str(tmp_path / "a"))
    assert by_file.exit_code == 0, by_file.output
    by_override = _eval("--split", "test_heldin", "--out", str(tmp_path / "b"), "limit=1", "policy.name=gold")
    assert by_override.exit_code == 0, by_override.output


def test_a_config_without_a_policy_is_an_error_too(tmp_path):
    config = tmp_path / "eval.yaml"
    config.write_text("limit: 1\n")
    result = _eval("--config", str(config), "--out", str(tmp_path / "a"))
    assert result.exit_code == 2 and "--model" in result.output and "--policy" in result.output


def test_a_missing_model_folder_is_named(tmp_path):
    missing = tmp_path / "missing" / "dir"
    result = _eval("--split", "test_heldin", "--limit", "1", "--model", str(missing), "--out", str(tmp_path / "x"))
    assert result.exit_code == 2, result.output
    assert str(missing) in result.output and "Repo id" not in result.output
    assert "no such folder" in result.output


def test_an_unknown_policy_lists_the_known_ones_and_not_the_defaults(tmp_path):
    result = _eval("--split", "test_heldin", "--policy", "golden", "--out", str(tmp_path / "x"))
    assert result.exit_code == 2, result.output
    assert "<defaults of EvalConfig>" not in result.output
    assert "'golden'" in result.output
    for name in ("gold", "python3", "local", "endpoint"):
        assert name in result.output


def test_a_missing_bank_names_its_file_and_exits_2(tmp_path):
    result = _eval("--policy", "gold", "--split", "test_heldin", "--out", str(tmp_path / "x"),
                   f"bank_dir={tmp_path / 'no-bank'}")
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ") and str(tmp_path / "no-bank") in result.output
    assert "Traceback" not in result.output


def test_unknown_splits_are_named_before_any_episode(tmp_path):
    result = _eval("--policy", "gold", "--split", "test_heldin,test_helout", "--out", str(tmp_path / "x"))
    assert result.exit_code == 2, result.output
    assert "invalid config from the command line" in result.output
    assert "splits: unknown split 'test_helout'" in result.output and "test_heldout" in result.output
    assert not (tmp_path / "x").exists()


def test_a_bug_during_the_evaluation_keeps_its_traceback(tmp_path, monkeypatch):
    """A ValueError or RuntimeError inside the run is a bug, not 'error: …' and exit 2."""
    import py4.evaluate.harness

    def bug(*args, **kwargs):
        raise ValueError("operands could not be broadcast together")

    monkeypatch.setattr(py4.evaluate.harness, "run", bug)
    result = _eval("--policy", "gold", "--split", "test_heldin", "--out", str(tmp_path / "x"))
    assert isinstance(result.exception, ValueError) and result.exit_code != 2
    assert "error: operands" not in result.output


@pytest.mark.smoke
def test_a_model_without_a_chat_template_is_named_not_a_traceback(tmp_path, smoke_assets):
    # A base model's tokenizer has no chat template: apply_chat_template's ValueError is named,
    # not shown as a traceback (exit 1).
    import shutil

    base = tmp_path / "base"
    shutil.copytree(smoke_assets / "base", base)
    (base / "chat_template.jinja").unlink()
    result = _eval("--model", str(base), "--split", "test_heldin", "--limit", "1", "--out", str(tmp_path / "x"))
    assert result.exit_code == 2, result.output
    assert str(base) in result.output and "no chat template" in result.output
