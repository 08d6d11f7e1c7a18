"""Trackers: every name transformers accepts is accepted when its package is installed, refused
by the config otherwise; a checkpoint's evaluation results reach its training run's TensorBoard,
Trackio, W&B and MLflow runs (those three tests install their extra into a throwaway venv on top
of this one, the ``extra_venv`` fixture: ``make install`` leaves them out, since trackio pins
pillow below the 13 the venv has and wandb and mlflow are large)."""

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

    from py4.tracking import EVAL_LOG_DIR, log_to_training_run

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


def test_a_tracker_the_evaluations_environment_lacks_is_said_so(tmp_path, monkeypatch):
    """The training ran where wandb, mlflow and trackio were installed, the evaluation runs where
    they are not: its record says so, and the evaluation goes on."""
    from py4.tracking import TRACKER_RUNS, log_to_training_run

    for name in ("wandb", "mlflow", "trackio"):
        monkeypatch.setitem(__import__("sys").modules, name, None)  # `import name` raises ImportError
    run = tmp_path / "sft"
    (run / "model").mkdir(parents=True)
    (run / "run_manifest.json").write_text(json.dumps({
        "kind": "sft", "status": "done", "result": {"global_step": 7},
        "config": {"run": {"output_dir": str(run), "report_to": ["wandb", "mlflow", "trackio"]}}}))
    (run / TRACKER_RUNS).write_text(json.dumps({"wandb": {"id": "abc", "project": "p"},
                                                "mlflow": {"run_id": "r", "tracking_uri": "file:x"}}))
    said = log_to_training_run(run / "model", {"x": 1.0}, "eval")
    for extra in ("py4[wandb]", "py4[mlflow]", "py4[tracking]"):
        assert f"its package is not installed here: pip install '{extra}'" in said, said


def test_a_model_no_training_run_wrote_is_said_so(tmp_path):
    from py4.tracking import log_to_training_run

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
from py4.tracking import log_to_training_run, run_name, trackio_project

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
def test_evaluation_and_probe_results_reach_the_training_runs_trackio_run(tmp_path, extra_venv):
    """A model trained with report_to=[trackio] (a real Trainer with py4's arguments, Trackio's
    local store), then evaluated and probed: the results are in the same Trackio run as the
    training's own logs, at its last step, read back with Trackio's reader."""
    import os
    import subprocess

    python = extra_venv("trackio>=0.43.0")  # the `tracking` extra, which make install leaves out

    env = {**os.environ, "TRACKIO_DIR": str(tmp_path / "trackio"), "HF_HUB_OFFLINE": "1"}
    env.pop("TRACKIO_SPACE_ID", None)
    env.pop("TRACKIO_SERVER_URL", None)
    proc = subprocess.run([str(python), "-c", _TRACKIO_SCENARIO, str(tmp_path)], env=env, capture_output=True,
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


_WANDB_MLFLOW_SCENARIO = r'''
import json, sys
from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments

from py4.train.callbacks import TrackerRuns
from py4.train.common import Optimisation, RunSettings, trainer_kwargs
from py4.train.loading import device_settings
from py4.tracking import log_to_training_run

run = Path(sys.argv[1]) / "sft"
settings = RunSettings(output_dir=str(run), report_to=["wandb", "mlflow"], save_steps=10**6, progress_bar=False)
kwargs = trainer_kwargs(Optimisation(optim="adamw_torch", micro_batch=2), settings, device_settings(), 3)
torch.manual_seed(0)
model = LlamaForCausalLM(LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                     num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=16))
rows = [{"input_ids": torch.randint(0, 32, (8,)), "labels": torch.randint(0, 32, (8,))} for _ in range(6)]
trainer = Trainer(model=model, args=TrainingArguments(**kwargs), train_dataset=rows, callbacks=[TrackerRuns()])
step = trainer.train().global_step
trainer.save_model(str(run / "model"))
import wandb
wandb.finish()  # the training process ends here in a stage; the evaluation is another process
(run / "run_manifest.json").write_text(json.dumps({
    "kind": "sft", "status": "done", "result": {"global_step": step},
    "config": {"run": settings.model_dump(mode="json")}}))
print(json.dumps({"step": step}))
'''

_EVALUATE = r'''
import json, sys
from pathlib import Path

from py4.tracking import log_to_training_run

model = Path(sys.argv[1]) / "sft" / "model"
print(json.dumps([log_to_training_run(model, {"test_heldin/certified_rate": 0.25}, "eval"),
                  log_to_training_run(model, {"probe_accuracy/all": 0.75}, "probes")]))
'''


_READ_BACK = r'''
import json, struct, sys
from pathlib import Path

from mlflow.tracking import MlflowClient
from wandb.proto import wandb_internal_pb2


def wandb_records(path):
    """The records of a W&B run file (`run-ID.wandb`), parsed with W&B's own record protobuf from
    the LevelDB log framing W&B writes them in: a 7-byte `:W&B` header, then 32 KiB blocks of
    records split into FULL/FIRST/MIDDLE/LAST chunks behind 7-byte headers (W&B has no reader
    of its offline files in Python, and its public API reads the server only)."""
    data = path.read_bytes()
    assert data[:4] == b":W&B"
    pos, block, pending = 7, 32768, b""
    while pos + 7 <= len(data):
        left = block - pos % block
        if left < 7:
            pos += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        if kind == 0:
            pos += left
            continue
        chunk, pos = data[pos + 7:pos + 7 + length], pos + 7 + length
        pending = chunk if kind in (1, 2) else pending + chunk
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            yield record


root = Path(sys.argv[1])
recorded = json.loads((root / "sft" / "tracker_runs.json").read_text())
run_id = recorded["wandb"]["id"]
folders = sorted((root / "wandb-dir" / "wandb").glob(f"offline-run-*-{run_id}"))
rows, ids = [], set()
for folder in folders:
    for record in wandb_records(folder / f"run-{run_id}.wandb"):
        if record.HasField("run"):
            ids.add(record.run.run_id)
        if record.HasField("history"):
            rows.append({item.key or "/".join(item.nested_key): json.loads(item.value_json)
                         for item in record.history.item})
client = MlflowClient(recorded["mlflow"]["tracking_uri"])
history = {key: [[m.step, m.value] for m in client.get_metric_history(recorded["mlflow"]["run_id"], key)]
           for key in ("loss", "eval/test_heldin/certified_rate", "probes/probe_accuracy/all")}
print(json.dumps({"wandb_id": run_id, "folders": len(folders), "ids": sorted(ids), "rows": rows,
                  "mlflow": history}))
'''


# A throwaway venv (pip: wandb, mlflow-skinny) and a real tiny training in a subprocess: 43 s with the
# venv's build at load 5 on the 2-core machine, 176 s at load 20 (2026-12-05); pip's downloads are
# not this code's speed, hence the longer bound.
@pytest.mark.timeout(900)
def test_evaluation_and_probe_results_reach_the_training_runs_wandb_and_mlflow_runs(tmp_path, extra_venv):
    """A model trained with report_to=[wandb, mlflow] (a real Trainer with py4's arguments and the
    stages' TrackerRuns callback; W&B offline, MLflow's local file store), then evaluated and probed
    in another process: the results are in the training's own W&B run id and MLflow run, at its
    last step, read back from W&B's run files and with MlflowClient."""
    import os
    import subprocess

    python = extra_venv("wandb>=0.31.0", "mlflow-skinny>=3.18.0")
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_DIR": str(tmp_path / "wandb-dir"), "WANDB_SILENT": "true",
           # MLflow's file store, which 3.x keeps in maintenance mode behind this opt-out: its
           # database stores need sqlalchemy, which mlflow-skinny leaves out.
           "MLFLOW_TRACKING_URI": f"file:{tmp_path / 'mlruns'}", "MLFLOW_ALLOW_FILE_STORE": "true",
           "HF_HUB_OFFLINE": "1"}
    for name in ("WANDB_RUN_ID", "WANDB_RESUME", "MLFLOW_RUN_ID", "MLFLOW_EXPERIMENT_NAME", "WANDB_API_KEY"):
        env.pop(name, None)
    (tmp_path / "wandb-dir").mkdir()
    outs = []
    for script in (_WANDB_MLFLOW_SCENARIO, _EVALUATE, _READ_BACK):
        proc = subprocess.run([str(python), "-c", script, str(tmp_path)], env=env, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        outs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    step, said, read = outs[0]["step"], outs[1], outs[2]
    assert all("wandb" in line and "not wandb" not in line for line in said), said
    assert all("mlflow" in line and "not mlflow" not in line for line in said), said

    # W&B: the training's run folder and the evaluation's (offline, a resumed run is a new local
    # folder with the same run id, which `wandb sync` appends to that run).
    assert read["folders"] >= 2 and read["ids"] == [read["wandb_id"]]
    rows = read["rows"]
    assert any("train/loss" in row for row in rows)  # the Trainer's own logs, same run id
    [evaluated] = [row for row in rows if "eval/test_heldin/certified_rate" in row]
    [probed] = [row for row in rows if "probes/probe_accuracy/all" in row]
    assert (evaluated["train/global_step"], evaluated["eval/test_heldin/certified_rate"]) == (step, 0.25)
    assert (probed["train/global_step"], probed["probes/probe_accuracy/all"]) == (step, 0.75)

    # MLflow (read with MlflowClient): the same run the Trainer logged its loss to.
    history = read["mlflow"]
    assert history["loss"]
    assert history["eval/test_heldin/certified_rate"] == [[step, 0.25]]
    assert history["probes/probe_accuracy/all"] == [[step, 0.75]]
