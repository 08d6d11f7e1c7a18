"""Trackers: every name transformers accepts is accepted when its package is installed, refused
by the config otherwise; a checkpoint's evaluation results reach its training run's TensorBoard."""

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
