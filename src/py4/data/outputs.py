"""The common tail of every data run: the data manifest and the step schedule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from py4.data.configs import ScheduleSpec
from py4.data.errors import DataError
from py4.data.packed_io import DATA_MANIFEST
from py4.data.schedule import StepSchedule, compute_schedule, write_step_schedule
from py4.runs import atomic_write_json, provenance_fields

__all__ = ["write_outputs", "schedule_from_spec"]


def schedule_from_spec(spec: ScheduleSpec, *, seq_len: int, total_tokens: int) -> StepSchedule:
    return compute_schedule(seq_len=seq_len, micro_batch=spec.micro_batch, grad_accum=spec.grad_accum,
                            gpus=spec.gpus, rounding=spec.rounding, total_tokens=total_tokens,
                            epochs=spec.epochs, warmup=spec.warmup, max_steps_cap=spec.max_steps_cap)


def write_outputs(out_dir: str | Path, manifest: dict[str, Any], schedule_spec: ScheduleSpec | None,
                  seq_len: int, schedule_tokens: int, expected_max_steps: int | None = None) -> StepSchedule | None:
    """Write ``manifest.json`` (and ``step_schedule.json`` when a schedule is configured).

    Raises ValueError when the computed max steps differ from ``expected_max_steps``.
    """
    schedule = None
    if schedule_spec is not None:
        schedule = schedule_from_spec(schedule_spec, seq_len=seq_len, total_tokens=schedule_tokens)
        write_step_schedule(out_dir, schedule)
        manifest["step_schedule"] = schedule.to_json()
    manifest.update(provenance_fields(("py4", "datasets", "tokenizers", "transformers", "pyarrow", "numpy")))
    atomic_write_json(Path(out_dir) / DATA_MANIFEST, manifest)
    if expected_max_steps is not None and schedule is not None and schedule.max_steps != expected_max_steps:
        raise DataError(f"max_steps {schedule.max_steps} differs from the expected {expected_max_steps}")
    return schedule
