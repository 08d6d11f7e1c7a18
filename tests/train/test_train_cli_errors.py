"""`py4 train`: a user's error is one line ``error: …`` naming the file or field, exit 2;
anything else is a bug and keeps its traceback (the command catches only Py4Error)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from py4.cli import app

runner = CliRunner()


def _error_line(result) -> str:
    """The command's stderr, which must be exactly one line ``error: …`` (no wrapping, no traceback)."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def _midtrain_config(tmp_path: Path, **data: str) -> Path:
    """A midtrain config whose data folder exists (the model folder need not: errors come first)."""
    folder = tmp_path / "mix"
    folder.mkdir(exist_ok=True)
    block = ", ".join(f"{k}: {v}" for k, v in {"path": str(folder), **data}.items())
    config = tmp_path / "midtrain.yaml"
    config.write_text(f"model: {{path: {tmp_path / 'no-model'}}}\ndata: {{{block}}}\n"
                      f"optimisation: {{optim: adamw_torch}}\nrun: {{output_dir: {tmp_path / 'out'}}}\n")
    return config


def test_unknown_stage_is_one_line(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("{}\n")
    line = _error_line(runner.invoke(app, ["train", "sfy", "--config", str(config)]))
    assert "unknown stage 'sfy'; did you mean 'sft'?" in line and "midtrain" in line


def test_missing_config_file_names_it(tmp_path):
    missing = tmp_path / "nowhere" / "sft.yaml"
    result = runner.invoke(app, ["train", "sft", "--config", str(missing)])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: invalid config {missing}") and "file not found" in result.stderr


def test_malformed_schedule_names_the_file_and_line(tmp_path):
    schedule = tmp_path / "step_schedule.json"
    schedule.write_text('{\n  "max_steps": 12,\n  "warmup_steps": oops\n}\n')
    line = _error_line(runner.invoke(app, ["train", "midtrain", "--config",
                                           str(_midtrain_config(tmp_path, schedule=str(schedule)))]))
    assert f"{schedule}:3: invalid JSON" in line


def test_schedule_without_max_steps_names_the_field(tmp_path):
    schedule = tmp_path / "step_schedule.json"
    schedule.write_text(json.dumps({"max_steps": "12"}))
    line = _error_line(runner.invoke(app, ["train", "midtrain", "--config",
                                           str(_midtrain_config(tmp_path, schedule=str(schedule)))]))
    assert str(schedule) in line and "'max_steps'" in line and "integer" in line


def test_schedule_guard_is_one_line(tmp_path):
    schedule = tmp_path / "step_schedule.json"
    schedule.write_text(json.dumps({"max_steps": 12}))
    config = _midtrain_config(tmp_path, schedule=str(schedule))
    line = _error_line(runner.invoke(app, ["train", "midtrain", "--config", str(config), "optimisation.max_steps=5"]))
    assert "max_steps 5 in the config differs from max_steps 12" in line and str(schedule) in line


def test_missing_model_folder_is_one_line(tmp_path):
    line = _error_line(runner.invoke(app, ["train", "midtrain", "--config", str(_midtrain_config(tmp_path))]))
    assert f"model.path: model folder not found: {tmp_path / 'no-model'}" in line


def test_a_folder_that_is_no_model_is_one_line(tmp_path):
    """A model.path that exists but holds no saved model: named with its field before transformers
    fails with a ValueError about a missing model_type."""
    (tmp_path / "no-model").mkdir()
    line = _error_line(runner.invoke(app, ["train", "midtrain", "--config", str(_midtrain_config(tmp_path))]))
    assert f"model.path: {tmp_path / 'no-model'} is not a saved model (no config.json" in line


@pytest.mark.parametrize("bug", [KeyError("input_ids"), ValueError("expected a 2-D tensor"), RuntimeError("oops")])
def test_a_bug_inside_a_stage_keeps_its_traceback(tmp_path, monkeypatch, bug):
    """A KeyError in a collator, a ValueError from torch: not a user error, so not one line, not exit 2."""
    import py4.train.midtrain

    def broken(config, callbacks=()):
        raise bug

    monkeypatch.setattr(py4.train.midtrain, "run", broken)
    result = runner.invoke(app, ["train", "midtrain", "--config", str(_midtrain_config(tmp_path))])
    assert result.exception is bug and result.exit_code == 1
    assert "error:" not in result.stderr


def test_python_m_py4_is_the_py4_command(tmp_path):
    """``python -m py4 train …`` (what accelerate launches on several GPUs, and how a campaign starts
    a run in a child process) is the ``py4`` command: its words, its program name, its errors."""
    import subprocess
    import sys

    config = tmp_path / "c.yaml"
    config.write_text("{}\n")
    proc = subprocess.run([sys.executable, "-m", "py4", "train", "sfy", "--config", str(config)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [proc.stderr.strip()] and "unknown stage 'sfy'" in proc.stderr
    usage = subprocess.run([sys.executable, "-m", "py4", "train", "--help"], capture_output=True, text=True,
                           timeout=120)
    assert usage.returncode == 0 and "Usage: py4 train" in usage.stdout, usage.stdout + usage.stderr


@pytest.mark.smoke
def test_chat_template_without_markers_is_named_before_the_weights_load(smoke_assets, tmp_path):
    """SFT on chat rows needs assistant-only labels: a tokenizer whose template has no generation
    markers and is no known family's is one line naming the model folder (ChatTemplateError)."""
    import shutil

    model = tmp_path / "model"
    shutil.copytree(smoke_assets / "base", model)
    (model / "chat_template.jinja").write_text("{% for m in messages %}{{ m['content'] }}\n{% endfor %}")
    config = tmp_path / "sft.yaml"
    config.write_text(f"model: {{path: {model}}}\nchat_data: {{path: {smoke_assets / 'instructions'}}}\n"
                      f"optimisation: {{optim: adamw_torch, max_steps: 1}}\nrun: {{output_dir: {tmp_path / 'out'}}}\n")
    line = _error_line(runner.invoke(app, ["train", "sft", "--config", str(config)]))
    assert line.startswith(f"error: model {model}: ") and "no {% generation %}" in line
    assert not (tmp_path / "out" / "model").exists()


@pytest.mark.smoke
def test_a_reward_function_that_is_not_there_names_its_field(smoke_assets, tmp_path):
    config = tmp_path / "grpo.yaml"
    config.write_text(f"model: {{path: {smoke_assets / 'it'}}}\n"
                      "reward_functions: [{function: 'no_such_module_xyz:f'}]\n"
                      f"problems: {{limit: 2}}\ngrpo: {{num_generations: 2, problems_per_step: 2}}\n"
                      f"optimisation: {{grad_accum: 4, max_steps: 1}}\nrun: {{output_dir: {tmp_path / 'out'}}}\n")
    line = _error_line(runner.invoke(app, ["train", "grpo", "--config", str(config)]))
    assert "reward_functions[0].function: 'no_such_module_xyz:f' not found" in line


@pytest.mark.smoke
def test_resume_at_a_folder_that_is_not_a_checkpoint_is_one_line_before_the_weights_load(smoke_assets, tmp_path,
                                                                                         monkeypatch):
    """The Trainer's own ValueError ("Can't find a valid checkpoint") comes after the weights load,
    as a traceback; run.resume is checked first and named."""
    from py4.train import loading

    def no_weights(*args, **kwargs):
        raise AssertionError("the weights were loaded before run.resume was checked")

    monkeypatch.setattr(loading, "load_model", no_weights)
    (tmp_path / "notackpt").mkdir()
    config = tmp_path / "sft.yaml"
    config.write_text(f"model: {{path: {smoke_assets / 'it'}}}\n"
                      f"chat_data: {{path: {smoke_assets / 'instructions'}, limit: 8}}\n"
                      "optimisation: {optim: adamw_torch, max_steps: 1}\n"
                      f"run: {{output_dir: {tmp_path / 'out'}, resume: {tmp_path / 'notackpt'}, report_to: []}}\n")
    line = _error_line(runner.invoke(app, ["train", "sft", "--config", str(config)]))
    assert line.startswith(f"error: run.resume: {tmp_path / 'notackpt'} is not a checkpoint folder "
                           "(no trainer_state.json; expected a checkpoint-N folder")
