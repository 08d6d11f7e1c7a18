"""`py4 train` and `py4 smoke assets` command lines: errors are clear and exit with status 2."""

from __future__ import annotations

from typer.testing import CliRunner

from py4.cli import app

runner = CliRunner()


def test_train_unknown_stage_lists_the_stages(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("{}\n")
    result = runner.invoke(app, ["train", "sfy", "--config", str(config)])
    assert result.exit_code == 2
    assert "did you mean 'sft'" in result.output and "midtrain" in result.output


def test_train_bad_config_names_the_field(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("model: {path: x}\ndata: {path: d}\nrun: {output_dir: o}\n")
    result = runner.invoke(app, ["train", "midtrain", "--config", str(config), "optimisation.warmpu=3"])
    assert result.exit_code == 2 and "did you mean 'warmup'" in result.output


def test_train_missing_model_folder_is_reported(tmp_path):
    config, data = tmp_path / "c.yaml", tmp_path / "d"
    data.mkdir()  # the data folder exists (a missing one is named first), the model folder does not
    config.write_text(f"model: {{path: {tmp_path / 'nope'}}}\ndata: {{path: {data}}}\n"
                      f"run: {{output_dir: {tmp_path / 'o'}}}\n")
    result = runner.invoke(app, ["train", "midtrain", "--config", str(config)])
    assert result.exit_code == 2 and "not found" in result.output


def test_smoke_assets_rejects_unknown_override(tmp_path):
    result = runner.invoke(app, ["smoke", "assets", "--out", str(tmp_path), "it_training.stepz=3"])
    assert result.exit_code == 2 and "did you mean 'steps'" in result.output
    assert not (tmp_path / "smoke_manifest.json").exists()
