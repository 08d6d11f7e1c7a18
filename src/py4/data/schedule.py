"""Step schedules: how many optimizer steps a stage takes, written as ``step_schedule.json``.

Two ways to count, both exactly as the campaign counted:

- **tokens** (midtraining, SFT): ``tokens_per_step = seq_len x micro_batch x grad_accum x
  gpus`` (packed sequences of ``seq_len``), ``max_steps = rounding(total_tokens x epochs /
  tokens_per_step)``. The campaign used ``ceil`` for the Gemma iso-token and control arms
  and ``floor`` everywhere else (306 = ceil(80,090,880 / 262,144); 164 = floor(43,176,856
  / 262,144); GLM: floor of its own tokenizer's counts).
- **rows** (EFT, no packing): ``global_batch = micro_batch x grad_accum x gpus`` rows,
  ``max_steps = rounding(rows / global_batch) x epochs`` (1,024 rows / 32 x 2 = 64).

An optional ``max_steps_cap`` bounds the steps (the SFT's 48 steps of 2,097,152 tokens
bind inside one nominal epoch of Dolci). Warmup follows transformers: an integer >= 1
is a step count; a float in [0, 1) is a ratio and gives ``ceil(ratio x max_steps)``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Literal

from py4.data.errors import DataError
from py4.fileio import read_json_object
from py4.runs import atomic_write_json

__all__ = ["StepSchedule", "compute_schedule", "write_step_schedule", "read_step_schedule",
           "parse_count", "SCHEDULE_FILE"]

SCHEDULE_FILE = "step_schedule.json"
Rounding = Literal["ceil", "floor"]


@dataclass(frozen=True)
class StepSchedule:
    """What a training stage needs to know about its length (the ``step_schedule.json`` fields)."""

    unit: Literal["tokens", "rows"]
    seq_len: int
    micro_batch: int
    grad_accum: int
    gpus: int
    sequences_per_step: int
    tokens_per_step: int
    total_tokens: int | None
    rows: int | None
    epochs: int
    rounding: Rounding
    uncapped_steps: int
    max_steps_cap: int | None
    max_steps: int
    warmup_steps: int
    warmup_ratio: float | None
    tokens_trained: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _round_div(numerator: int, denominator: int, rounding: Rounding) -> int:
    # Integer arithmetic: float division would misround counts near a step boundary.
    if rounding == "floor":
        return numerator // denominator
    if rounding == "ceil":
        return -(-numerator // denominator)
    raise DataError(f"rounding must be 'ceil' or 'floor', got {rounding!r}")


def _warmup(warmup: float | int | None, max_steps: int) -> tuple[int, float | None]:
    if warmup is None or warmup == 0:
        return 0, None
    if warmup < 0:
        raise DataError(f"warmup must be >= 0 (steps, or a ratio below 1), got {warmup}")
    if warmup >= 1:
        if float(warmup) != int(warmup):
            raise DataError(f"warmup >= 1 is a step count and must be whole, got {warmup}")
        return int(warmup), None
    return math.ceil(max_steps * float(warmup)), float(warmup)


def compute_schedule(*, seq_len: int, micro_batch: int, grad_accum: int, gpus: int,
                     rounding: Rounding = "floor", total_tokens: int | None = None,
                     rows: int | None = None, epochs: int = 1,
                     warmup: float | int | None = None,
                     max_steps_cap: int | None = None) -> StepSchedule:
    """Compute a stage's step schedule from token (or row) counts.

    Give exactly one of ``total_tokens`` (packed stages) or ``rows`` (unpacked, one row
    per sequence slot). Raises ValueError on a non-positive size, both or neither of
    ``total_tokens``/``rows``, an unknown rounding, or a schedule of zero steps.
    """
    for name, value in (("seq_len", seq_len), ("micro_batch", micro_batch),
                        ("grad_accum", grad_accum), ("gpus", gpus), ("epochs", epochs)):
        if not isinstance(value, int) or value < 1:
            raise DataError(f"{name} must be a positive integer, got {value!r}")
    if (total_tokens is None) == (rows is None):
        raise DataError("give exactly one of total_tokens (packed) or rows (unpacked)")
    if max_steps_cap is not None and max_steps_cap < 1:
        raise DataError(f"max_steps_cap must be >= 1, got {max_steps_cap}")
    sequences_per_step = micro_batch * grad_accum * gpus
    tokens_per_step = seq_len * sequences_per_step
    if total_tokens is not None:
        if int(total_tokens) != total_tokens or total_tokens < 1:
            raise DataError(f"total_tokens must be a positive integer, got {total_tokens!r}")
        unit = "tokens"
        uncapped = _round_div(int(total_tokens) * epochs, tokens_per_step, rounding)
    else:
        if int(rows) != rows or rows < 1:
            raise DataError(f"rows must be a positive integer, got {rows!r}")
        unit = "rows"
        uncapped = _round_div(int(rows), sequences_per_step, rounding) * epochs
    if uncapped < 1:
        size = f"{total_tokens} tokens" if unit == "tokens" else f"{rows} rows"
        raise DataError(f"{size} make zero steps of {tokens_per_step if unit == 'tokens' else sequences_per_step} "
                         f"{unit} with {rounding} rounding")
    max_steps = min(uncapped, max_steps_cap) if max_steps_cap is not None else uncapped
    warmup_steps, warmup_ratio = _warmup(warmup, max_steps)
    return StepSchedule(
        unit=unit, seq_len=seq_len, micro_batch=micro_batch, grad_accum=grad_accum, gpus=gpus,
        sequences_per_step=sequences_per_step, tokens_per_step=tokens_per_step,
        total_tokens=int(total_tokens) if total_tokens is not None else None,
        rows=int(rows) if rows is not None else None, epochs=epochs, rounding=rounding,
        uncapped_steps=uncapped, max_steps_cap=max_steps_cap, max_steps=max_steps,
        warmup_steps=warmup_steps, warmup_ratio=warmup_ratio,
        tokens_trained=max_steps * tokens_per_step,
    )


def write_step_schedule(out_dir: str | Path, schedule: StepSchedule) -> Path:
    """Write ``out_dir/step_schedule.json`` atomically and return its path."""
    return atomic_write_json(Path(out_dir) / SCHEDULE_FILE, schedule.to_json())


def read_step_schedule(path: str | Path) -> StepSchedule:
    """Read a ``step_schedule.json`` (or the one in a folder); raises DataError (a ValueError)
    naming the file and the line, or the fields missing or unknown."""
    path = Path(path)
    if path.is_dir():
        path = path / SCHEDULE_FILE
    data = read_json_object(path, missing="no step schedule (py4 data schedule writes it)", error=DataError)
    names = [f.name for f in fields(StepSchedule)]
    missing = [name for name in names if name not in data]
    unknown = sorted(set(data) - set(names))
    if missing or unknown:
        raise DataError(f"{path}: not a step schedule: missing field(s) {missing}, unknown field(s) {unknown} "
                        f"(expected the fields py4 data schedule writes: {', '.join(names)})")
    return StepSchedule(**data)


_SUFFIXES = {"k": 10**3, "m": 10**6, "b": 10**9, "g": 10**9}


def parse_count(text: str | int) -> int:
    """``"80090880"``, ``"80,090,880"``, ``"77.05M"``, ``"1.5k"`` -> int; raises ValueError.

    A suffixed decimal must land on a whole number (``77.05M`` is 77,050,000).
    """
    if isinstance(text, int):
        return text
    cleaned = str(text).strip().replace(",", "").replace("_", "")
    if not cleaned:
        raise DataError("empty count")
    multiplier = _SUFFIXES.get(cleaned[-1].lower())
    number = cleaned[:-1] if multiplier else cleaned
    from decimal import Decimal, InvalidOperation

    try:
        value = Decimal(number) * (multiplier or 1)
    except InvalidOperation:
        raise DataError(f"not a count: {text!r} (expected e.g. 80090880, 80,090,880 or 77.05M)") from None
    if value != value.to_integral_value():
        raise DataError(f"count {text!r} is not a whole number of tokens")
    return int(value)
