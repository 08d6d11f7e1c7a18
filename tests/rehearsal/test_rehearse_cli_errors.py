"""`py4 campaign rehearse` user errors are one line and exit 2; a bug keeps its traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from py4.cli import app

ROOT = Path(__file__).resolve().parents[2]
CAMPAIGN = "configs/campaign/python4.yaml"


@pytest.fixture(autouse=True)
def _in_the_repository(monkeypatch):
    monkeypatch.chdir(ROOT)  # the default rehearsal config is configs/rehearsal/<campaign file name>


def _rehearse(*args: str):
    return CliRunner().invoke(app, ["campaign", "rehearse", CAMPAIGN, *args])


def test_an_unknown_model_is_named_with_the_known_ones(tmp_path):
    result = _rehearse("--model", "gemma9_1t", "--out", str(tmp_path / "r"))
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"error: --model 'gemma9_1t': not a model of {CAMPAIGN} (")
    assert "gemma4_12b" in result.output and "Traceback" not in result.output


def test_a_missing_rehearsal_config_is_named(tmp_path):
    missing = tmp_path / "sizes.yaml"
    result = _rehearse("--config", str(missing), "--out", str(tmp_path / "r"))
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"error: invalid config {missing}") and "file not found" in result.output


def test_a_bug_in_the_rehearsal_keeps_its_traceback(tmp_path, monkeypatch):
    """A ValueError inside the rehearsal is a bug, not 'error: …' and exit 2."""
    import py4.rehearsal.rehearse

    def bug(*args, **kwargs):
        raise ValueError("too many values to unpack")

    monkeypatch.setattr(py4.rehearsal.rehearse, "rehearse", bug)
    result = _rehearse("--out", str(tmp_path / "r"))
    assert isinstance(result.exception, ValueError) and result.exit_code != 2
    assert "error: too many values" not in result.output
