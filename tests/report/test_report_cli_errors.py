"""`py4 report` user errors are one line and exit 2; a bug keeps its traceback."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from py4.cli import app


def _report(*args: str):
    return CliRunner().invoke(app, ["report", *args])


def test_a_missing_campaign_file_is_named(tmp_path):
    missing = tmp_path / "nowhere.yaml"
    for command in ("hyperparameters", "results"):
        result = _report(command, str(missing))
        assert result.exit_code == 2, result.output
        assert result.output.startswith(f"error: invalid config {missing}") and "file not found" in result.output


def test_an_unknown_format_is_named(tmp_path):
    result = _report("hyperparameters", str(tmp_path / "c.yaml"), "--format", "html")
    assert result.exit_code == 2 and result.output.strip() == "error: --format must be json, latex or md, got 'html'"


def test_a_table_error_names_its_file(tmp_path, monkeypatch):
    import py4.report.hyperparameters
    from py4.report.hyperparameters import TableError

    def disagreeing(file):
        raise TableError(f"{file}: models.*.prop_corpus is required for the table")

    monkeypatch.setattr(py4.report.hyperparameters, "build_table", disagreeing)
    campaign = tmp_path / "campaign.yaml"
    result = _report("hyperparameters", str(campaign))
    assert result.exit_code == 2
    assert result.output.strip() == f"error: {campaign}: models.*.prop_corpus is required for the table"


def test_a_bug_in_the_table_keeps_its_traceback(tmp_path, monkeypatch):
    """A KeyError while building the table is a bug (configs are read through their types), not
    'error: …' and exit 2."""
    import py4.report.hyperparameters

    def bug(file):
        raise KeyError("seq_len")

    monkeypatch.setattr(py4.report.hyperparameters, "build_table", bug)
    result = _report("hyperparameters", str(tmp_path / "campaign.yaml"))
    assert isinstance(result.exception, KeyError) and result.exit_code != 2
    assert "error: 'seq_len'" not in result.output


def test_a_table_error_is_a_user_error():
    """TableError is a Py4Error (exit 2 under cli_errors wherever it is raised), not a ValueError that
    each command had to convert: py4 report hyperparameters caught it to re-raise it as one."""
    from py4.errors import Py4Error
    from py4.report.hyperparameters import TableError

    error = TableError("configs/campaign/c.yaml: no grpo section")
    assert isinstance(error, Py4Error) and error.exit_code == 2
    assert not isinstance(error, ValueError)


def test_disagreeing_configs_are_named_end_to_end(tmp_path, monkeypatch):
    """The real table (no stand-in): a midtrain max_steps that disagrees with its schedule, one line, exit 2."""
    import shutil

    root = Path(__file__).resolve().parents[2]
    shutil.copytree(root / "configs", tmp_path / "configs")
    midtrain = tmp_path / "configs/train/gemma4_12b/midtrain_iso.yaml"
    midtrain.write_text(midtrain.read_text().replace("max_steps: 306", "max_steps: 305"))
    monkeypatch.chdir(tmp_path)  # the table reads the configs the campaign names relative to here
    result = _report("hyperparameters", "configs/campaign/python4.yaml")
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: configs/train/gemma4_12b/midtrain_iso.yaml: optimisation.max_steps 305")
    assert result.output.count("\n") == 1
