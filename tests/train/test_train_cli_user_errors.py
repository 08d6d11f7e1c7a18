"""`py4 train` user errors: a data.path that does not exist is named as given, not as the
config file's default schedule beside it."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from py4.cli import app

ROOT = Path(__file__).resolve().parents[2]


def test_missing_data_path_is_named_as_given(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    missing = tmp_path / "nonexistent"
    res = CliRunner().invoke(app, ["train", "midtrain", "--config", "configs/train/smoke/midtrain.yaml",
                                   f"data.path={missing}"])
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())  # rich wraps long lines
    assert f"data.path '{missing}'" in text and "does not exist" in text
    assert "mix_iso/step_schedule.json" not in text


def test_help_shows_no_python_types_and_says_the_defaults():
    for command in (["train"], ["eval"], ["campaign", "plan"], ["graft"]):
        res = CliRunner().invoke(app, [*command, "--help"])
        assert res.exit_code == 0, command
        assert "<bool>" not in res.output and "<list[str]>" not in res.output and "<str>" not in res.output, command
    help_text = " ".join(CliRunner().invoke(app, ["eval", "--help"]).output.split())
    assert "KEY=VALUE..." in help_text and "(default 1)" in help_text and "(default 0.7)" in help_text


def test_a_finished_stage_prints_a_summary_not_a_repr():
    from py4.stages import result_summary as _summary
    from py4.train.packed import StageResult

    result = StageResult(output_dir="runs/mid", model_dir="runs/mid/model", global_step=12, train_loss=2.34567,
                         lr_peak=1e-3, lr_end=1e-4, trainable_parameters=10, adapted_modules=0, resumed_from=None)
    assert _summary(result) == "12 steps, train loss 2.3457 -> runs/mid/model"
    assert "StageResult(" not in _summary(result)
