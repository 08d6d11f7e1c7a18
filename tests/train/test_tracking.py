"""Trackers: every name transformers accepts is accepted when its package is installed, refused
by the config otherwise; a checkpoint's evaluation results reach its training run's TensorBoard
and Trackio run (the Trackio test runs where the ``tracking`` extra is installed: ``make install``
leaves it out, since trackio pins pillow below the 13 the venv has)."""

from __future__ import annotations

import json

import pytest

from py4.config import ConfigError
from py4.train.common import RunSettings


def test_every_tracker_transformers_knows_is_a_valid_name(monkeypatch):
    from transformers.integrations import integration_utils

    monkeypatch.setattr(integration_utils, "is_trackio_available", lambda: True)
    assert RunSettings(output_dir="o", report_to=["trackio", "tensorboard"]).report_to == ["trackio", "tensorboard"]
    assert RunSettings(output_dir="o", report_to=[]).report_to == []


def test_a_tracker_whose_package_is_missing_is_refused_naming_the_extra(monkeypatch):
    from transformers.integrations import integration_utils

    monkeypatch.setattr(integration_utils, "is_trackio_available", lambda: False)
    with pytest.raises(ValueError, match=r"trackio.*py4\[tracking\]"):
        RunSettings(output_dir="o", report_to=["trackio"])


def test_an_unknown_tracker_is_refused_listing_the_known_ones():
    with pytest.raises(ValueError, match="not a tracker transformers supports.*tensorboard.*trackio"):
        RunSettings(output_dir="o", report_to=["tensorbored"])


def test_a_stage_config_names_the_field_of_a_bad_tracker(tmp_path):
    from py4.config import load_config
    from py4.train.sft import SFTStageConfig

    config = tmp_path / "sft.yaml"
    config.write_text("model: {path: m}\ndata: {path: d}\nrun: {output_dir: o, report_to: [tensorbored]}\n")
    with pytest.raises(ConfigError, match="report_to"):
        load_config(SFTStageConfig, config, [])


def test_evaluation_results_reach_the_training_runs_tensorboard(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from py4.train.tracking import EVAL_LOG_DIR, log_to_training_run

    run = tmp_path / "sft"
    (run / "model").mkdir(parents=True)
    (run / "run_manifest.json").write_text(json.dumps({
        "kind": "sft", "status": "done", "result": {"global_step": 7},
        "config": {"run": {"output_dir": str(run), "report_to": ["tensorboard", "wandb"]}}}))
    said = log_to_training_run(run / "model", {"test_heldin/certified_rate": 0.25}, "eval")
    assert "tensorboard" in said and "not wandb" in said
    events = EventAccumulator(str(run / "runs" / EVAL_LOG_DIR))
    events.Reload()
    [scalar] = events.Scalars("eval/test_heldin/certified_rate")
    assert (scalar.step, scalar.value) == (7, 0.25)


def test_a_model_no_training_run_wrote_is_said_so(tmp_path):
    from py4.train.tracking import log_to_training_run

    assert "not written by a py4 training run" in log_to_training_run(tmp_path, {"x": 1.0}, "probes")
    assert "not written by a py4 training run" in log_to_training_run("served-name", {"x": 1.0}, "eval")


_TRACKIO_SCENARIO = r'''
import json, sys
from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments

from py4.train.common import RunSettings, trainer_kwargs
from py4.train.loading import device_settings
from py4.train.common import Optimisation
from py4.train.tracking import log_to_training_run, run_name, trackio_project

root = Path(sys.argv[1])
run = root / "sft"
settings = RunSettings(output_dir=str(run), report_to=["trackio"], save_steps=10**6, progress_bar=False)
kwargs = trainer_kwargs(Optimisation(optim="adamw_torch", micro_batch=2), settings, device_settings(), 3)
torch.manual_seed(0)
model = LlamaForCausalLM(LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                     num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=16))
rows = [{"input_ids": torch.randint(0, 32, (8,)), "labels": torch.randint(0, 32, (8,))} for _ in range(6)]
trainer = Trainer(model=model, args=TrainingArguments(**kwargs), train_dataset=rows)
step = trainer.train().global_step
trainer.save_model(str(run / "model"))
(run / "run_manifest.json").write_text(json.dumps({
    "kind": "sft", "status": "done", "result": {"global_step": step},
    "config": {"run": settings.model_dump(mode="json")}}))

said = [log_to_training_run(run / "model", {"test_heldin/certified_rate": 0.25}, "eval"),
        log_to_training_run(run / "model", {"probe_accuracy/all": 0.75}, "probes")]

from trackio.sqlite_storage import SQLiteStorage  # Trackio's own reader of its store

project = trackio_project()
print(json.dumps({"said": said, "step": step, "runs": SQLiteStorage.get_runs(project),
                  "name": run_name(str(run)), "logs": SQLiteStorage.get_logs(project, run_name(str(run)))},
                 default=str))
'''


@pytest.mark.slow  # a real (tiny) training in a subprocess: 2 min on a loaded 2-core machine
def test_evaluation_and_probe_results_reach_the_training_runs_trackio_run(tmp_path):
    """A model trained with report_to=[trackio] (a real Trainer with py4's arguments, Trackio's
    local store), then evaluated and probed: the results are in the same Trackio run as the
    training's own logs, at its last step, read back with Trackio's reader."""
    pytest.importorskip("trackio", reason="trackio is an optional extra (pip install 'py4[tracking]')")
    import os
    import subprocess
    import sys

    env = {**os.environ, "TRACKIO_DIR": str(tmp_path / "trackio"), "HF_HUB_OFFLINE": "1"}
    env.pop("TRACKIO_SPACE_ID", None)
    env.pop("TRACKIO_SERVER_URL", None)
    proc = subprocess.run([sys.executable, "-c", _TRACKIO_SCENARIO, str(tmp_path)], env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["runs"] == [out["name"]]  # one run: the evaluation resumed the training's, made none of its own
    assert all("trackio" in line and "not trackio" not in line for line in out["said"]), out["said"]
    logs = out["logs"]
    assert any("train/loss" in row for row in logs)  # the Trainer's own logs, same run
    [evaluated] = [row for row in logs if "eval/test_heldin/certified_rate" in row]
    [probed] = [row for row in logs if "probes/probe_accuracy/all" in row]
    assert (evaluated["step"], evaluated["eval/test_heldin/certified_rate"]) == (out["step"], 0.25)
    assert (probed["step"], probed["probes/probe_accuracy/all"]) == (out["step"], 0.75)
