"""Experiment trackers: which `run.report_to` values a stage accepts, and the results of a
checkpoint's evaluation and probes logged to the tracker of the run that trained it.

The accepted names are the installed transformers' own (`INTEGRATION_TO_CALLBACK`: tensorboard,
wandb, trackio, mlflow, …), each checked for its package when the config loads, so a
tracker that cannot start is refused before any weights load, naming the extra to install.

Results go, at the run's last step, to the training run's
- TensorBoard logs (`OUTPUT_DIR/runs/py4-evaluation`, beside the Trainer's own logs);
- Trackio run: the Trainer names every run `run_name` of its output folder (its
  ``TrainingArguments.run_name``) in the project transformers gives Trackio (``project``, default
  ``huggingface``), and the evaluation resumes that run by name (``resume="must"``) wherever
  Trackio keeps it (``TRACKIO_DIR`` locally, or the Space / server the environment names, as for
  the training);
- W&B run: W&B and MLflow give a run a random id, so the training writes the ids of its runs to
  `OUTPUT_DIR/tracker_runs.json` (``py4.train.callbacks.TrackerRuns``) and the evaluation resumes that id
  (``resume="must"``; under ``WANDB_MODE=offline`` W&B starts a local run folder with the same
  id beside the training's, which ``wandb sync`` appends to that run). The results are logged
  with ``train/global_step`` as their step, the step metric transformers defines for every W&B
  metric, since W&B drops a resumed run's rows logged at a step it has passed;
- MLflow run: the recorded run id in the recorded tracking URI, through ``MlflowClient``.
Other trackers (comet_ml, neptune, …) are not logged to; the evaluation says so in its record.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# Trackers whose availability check in transformers is not named is_<tracker>_available.
_AVAILABILITY = {"comet_ml": "is_comet_available", "flyte": "is_flytekit_available",
                 "azure_ml": "is_azureml_available"}
_EXTRAS = {"trackio": "pip install 'py4[tracking]' (trackio)", "wandb": "pip install 'py4[wandb]'",
           "mlflow": "pip install 'py4[mlflow]'"}
EVAL_LOG_DIR = "py4-evaluation"
TRACKER_RUNS = "tracker_runs.json"
LOGGED = ("tensorboard", "trackio", "wandb", "mlflow")
"""The trackers a checkpoint's evaluation and probe results are logged to."""


def check_trackers(names: list[str]) -> list[str]:
    """`names` if each is a tracker transformers knows and its package is installed.

    Raises ValueError naming the unknown or missing tracker and what would fix it.
    """
    from transformers.integrations import integration_utils

    known = integration_utils.INTEGRATION_TO_CALLBACK
    for name in names:
        if name not in known:
            raise ValueError(f"{name!r} is not a tracker transformers supports; expected one of "
                             f"{', '.join(sorted(known))} (or [] for none)")
        available = getattr(integration_utils, _AVAILABILITY.get(name, f"is_{name}_available"), None)
        if available is not None and not available():
            raise ValueError(f"{name!r}: its package is not installed here "
                             f"({_EXTRAS.get(name, f'pip install {name}')})")
    return names


def run_name(output_dir: str) -> str:
    """A training run's name in its trackers: its output folder as the config gives it."""
    return str(output_dir)


def trackio_project() -> str:
    """The Trackio project transformers logs a Trainer's runs to (``TrainingArguments.project``'s default)."""
    from transformers import TrainingArguments

    field = TrainingArguments.__dataclass_fields__.get("project")
    return str(field.default) if field is not None else "huggingface"


def _log_trackio(run: dict[str, Any], metrics: dict[str, float], step: int) -> str:
    import trackio

    project, name = trackio_project(), run_name(run.get("output_dir") or "")
    try:
        trackio.init(project=project, name=name, resume="must", auto_log_cpu=False, auto_log_gpu=False)
    except ValueError as exc:  # no such run where Trackio looks now (another TRACKIO_DIR, a deleted project)
        return f"not trackio ({exc})"
    try:
        trackio.log(dict(metrics), step=step)
    finally:
        trackio.finish()
    return f"trackio {project}/{name} (step {step})"


def record_tracker_runs(output_dir: str | Path, trackers: list[str]) -> dict[str, Any]:
    """Write the W&B and MLflow runs this process logs to (those among `trackers` with an active
    run) to `output_dir/TRACKER_RUNS`; returns what it wrote ({} writes nothing)."""
    import sys

    runs: dict[str, Any] = {}
    wandb = sys.modules.get("wandb") if "wandb" in trackers else None
    if wandb is not None and getattr(wandb, "run", None) is not None:
        run = wandb.run
        runs["wandb"] = {"id": run.id, "project": run.project, "entity": run.entity or None,
                         "dir": run.settings.root_dir}
    mlflow = sys.modules.get("mlflow") if "mlflow" in trackers else None
    active = mlflow.active_run() if mlflow is not None else None
    if active is not None:
        runs["mlflow"] = {"run_id": active.info.run_id, "experiment_id": active.info.experiment_id,
                          "tracking_uri": mlflow.get_tracking_uri()}
    if runs:
        from py4.fileio import atomic_write_json

        folder = Path(output_dir)
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_json(folder / TRACKER_RUNS, runs)
    return runs


def _log_wandb(record: dict[str, Any], metrics: dict[str, float], step: int) -> str:
    import wandb

    try:
        run = wandb.init(id=record["id"], project=record["project"], entity=record.get("entity"),
                         dir=record.get("dir"), resume="must", settings=wandb.Settings(console="off"))
    except wandb.errors.Error as exc:  # no such run on the server this process reaches
        return f"not wandb ({exc})"
    try:
        run.define_metric("train/global_step")
        run.define_metric("*", step_metric="train/global_step", step_sync=True)
        run.log({**metrics, "train/global_step": step})
    finally:
        run.finish()
    return f"wandb {record['project']}/{record['id']} (step {step})"


def _log_mlflow(record: dict[str, Any], metrics: dict[str, float], step: int) -> str:
    import time

    from mlflow.entities import Metric
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    stamp = int(time.time() * 1000)
    try:
        MlflowClient(tracking_uri=record["tracking_uri"]).log_batch(
            record["run_id"], metrics=[Metric(name, float(value), stamp, step) for name, value in metrics.items()])
    except MlflowException as exc:  # no such run in that store
        return f"not mlflow ({exc.message})"
    return f"mlflow {record['tracking_uri']} run {record['run_id']} (step {step})"


def training_run_of(model: str | Path) -> tuple[Path, dict[str, Any]] | None:
    """(run folder, manifest) of the training run that wrote `model` (`RUN/model`), if any."""
    from py4.runs import read_manifest

    folder = Path(model)
    if not folder.is_dir():
        return None
    for run_dir in (folder.parent, folder):
        manifest = read_manifest(run_dir)
        if manifest and isinstance(manifest.get("config"), dict) and "run" in manifest["config"]:
            return run_dir, manifest
    return None


def log_to_training_run(model: str | Path, metrics: dict[str, float], source: str) -> str:
    """Log `metrics` (name → number) to the trackers of the run that trained `model`; returns
    a line saying where they went (or why nowhere)."""
    found = training_run_of(model)
    if found is None:
        return f"{source}: {model} was not written by a py4 training run; no tracker to log to"
    run_dir, manifest = found
    trackers = list(manifest["config"]["run"].get("report_to") or [])
    step = int((manifest.get("result") or {}).get("global_step") or 0)
    output_dir = Path(manifest["config"]["run"].get("output_dir") or run_dir)
    said = []
    if "tensorboard" in trackers:
        from torch.utils.tensorboard import SummaryWriter

        log_dir = output_dir / "runs" / EVAL_LOG_DIR
        with SummaryWriter(log_dir=str(log_dir)) as writer:
            for name, value in metrics.items():
                writer.add_scalar(f"{source}/{name}", value, global_step=step)
        said.append(f"tensorboard {log_dir} (step {step})")
    prefixed = {f"{source}/{k}": v for k, v in metrics.items()}
    recorded = _recorded_runs(output_dir)
    for tracker in ("trackio", "wandb", "mlflow"):
        if tracker not in trackers:
            continue
        record = manifest["config"]["run"] if tracker == "trackio" else recorded.get(tracker)
        try:
            said.append(_LOGGERS[tracker](record, prefixed, step) if record else
                        f"not {tracker} (the training recorded no {tracker} run in {TRACKER_RUNS})")
        except ImportError:  # the evaluation's environment lacks the tracker the training had
            said.append(f"not {tracker} (its package is not installed here: {_EXTRAS[tracker]})")
    others = [t for t in trackers if t not in LOGGED]
    if others:
        said.append(f"not {', '.join(others)} (py4 logs results to {', '.join(LOGGED)} only)")
    return f"{source}: " + ("; ".join(said) if said else f"{run_dir} reports to no tracker")


_LOGGERS = {"trackio": _log_trackio, "wandb": _log_wandb, "mlflow": _log_mlflow}


def _recorded_runs(output_dir: Path) -> dict[str, Any]:
    from py4.fileio import read_json_object

    path = output_dir / TRACKER_RUNS
    return read_json_object(path) if path.is_file() else {}
