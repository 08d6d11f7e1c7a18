"""Verification of a finished graft, independent of the streaming engine.

Every checked tensor is re-read from the inputs and from the output through
safetensors' own ``safe_open`` and recomputed with plain torch expressions; the stored
bytes must be bit-identical. The layout checks compare the output index with the plan,
and the -it files with their copies.
"""

from __future__ import annotations

import contextlib
import random
from dataclasses import dataclass, field
from pathlib import Path

import torch

from py4.fileio import read_weight_map
from py4.graft.checkpoint import DTYPES, INDEX_NAME, Checkpoint, GraftError, TensorEntry, open_checkpoints
from py4.graft.config import GraftConfig
from py4.graft.plan import ON_BASE, Decision, build_plan
from py4.runs import file_sha256

__all__ = ["VerifyResult", "verify_graft"]

_VERIFY_CHUNK = 1 << 22  # elements recomputed at once


@dataclass
class VerifyResult:
    checked: list[str] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)  # "name: what differs"

    @property
    def ok(self) -> bool:
        return not self.mismatches


def _rows(shape: tuple[int, ...]) -> list[tuple[int, int] | None]:
    """Row ranges of about _VERIFY_CHUNK elements (None: a 0-d tensor, read whole)."""
    if not shape:
        return [None]
    per_row = 1
    for d in shape[1:]:
        per_row *= d
    step = max(1, _VERIFY_CHUNK // max(per_row, 1))
    return [(lo, min(lo + step, shape[0])) for lo in range(0, shape[0], step)]


def _read(stack: contextlib.ExitStack, path: Path, name: str, rows: tuple[int, int] | None) -> torch.Tensor:
    from safetensors import safe_open

    handle = stack.enter_context(safe_open(str(path), framework="pt"))
    return handle.get_tensor(name) if rows is None else handle.get_slice(name)[rows[0]:rows[1]]


def _expected(d: Decision, stack: contextlib.ExitStack, config: GraftConfig, rows) -> torch.Tensor:
    out_dtype = DTYPES[d.out_dtype].torch_dtype

    def read(entry: TensorEntry) -> torch.Tensor:
        return _read(stack, entry.file, entry.stored_name, rows)

    acc = getattr(torch, config.accumulate_dtype)
    lam = torch.tensor(config.lambda_, dtype=acc)
    if d.action == "graft":
        mid = read(d.sources["mid"])
        if d.mid_round:  # mid rounded to the -it dtype first, as a save in that dtype would
            mid = mid.to(DTYPES[d.mid_round].torch_dtype)
        mid, it, base = mid.to(acc), read(d.sources["it"]).to(acc), read(d.sources["base"]).to(acc)
        return (mid + lam * (it - base)).to(out_dtype)
    if d.action == ON_BASE:
        it, base = read(d.sources["it"]).to(acc), read(d.sources["base"]).to(acc)
        return (base + lam * (it - base)).to(out_dtype)
    (entry,) = d.sources.values()
    return read(entry).to(out_dtype)


def _bits(t: torch.Tensor) -> torch.Tensor:
    # Compare bit patterns, so that NaNs and signed zeros count as what they are.
    return t.contiguous().view(torch.uint8)


def _check_tensor(d: Decision, stored_file: Path, config: GraftConfig) -> str | None:
    from safetensors import safe_open

    with safe_open(str(stored_file), framework="pt") as handle:
        meta = handle.get_slice(d.name)
        shape, dtype = tuple(meta.get_shape()), meta.get_dtype()
    if shape != d.shape or dtype != d.out_dtype:
        return f"{d.name}: stored {list(shape)} {dtype}, expected {list(d.shape)} {d.out_dtype}"
    for rows in _rows(d.shape):
        # Fresh handles per chunk: pages that safe_open maps stay resident (and count as
        # this process's memory) until the mapping is closed.
        with contextlib.ExitStack() as stack:
            stored = _read(stack, stored_file, d.name, rows)
            if not torch.equal(_bits(stored), _bits(_expected(d, stack, config, rows))):
                where = f" (rows {rows[0]}..{rows[1] - 1})" if rows else ""
                return f"{d.name}: stored values differ from the recomputed {d.action}{where}"
    return None


def _check_layout(config: GraftConfig, decisions: list[Decision], weight_map: dict[str, str],
                  checkpoints: dict[str, Checkpoint]) -> list[str]:
    problems = []
    planned = {d.name for d in decisions if d.action != "skip"}
    problems += [f"{n}: planned but absent from the output index" for n in sorted(planned - set(weight_map))]
    problems += [f"{n}: in the output index but not planned (skipped or unknown)"
                 for n in sorted(set(weight_map) - planned)]
    out = Path(config.out)
    for name in config.aux_files:
        src = checkpoints["it"].folder / name
        if src.is_file() and (not (out / name).is_file() or file_sha256(out / name) != file_sha256(src)):
            problems.append(f"{name}: the output's copy differs from the -it model's")
    return problems


def verify_graft(config: GraftConfig, *, sample: int | None, seed: int = 0,
                 checkpoints: dict[str, Checkpoint] | None = None) -> VerifyResult:
    """Recompute ``sample`` seeded-random stored tensors (all when None) and compare bit for bit.

    Raises GraftError when the output has no index (not a finished graft).
    """
    out = Path(config.out)
    index_path = out / INDEX_NAME
    if not index_path.is_file():
        raise GraftError(f"{out}: no {INDEX_NAME}; not a finished graft")
    weight_map = read_weight_map(index_path, error=GraftError)
    checkpoints = checkpoints or open_checkpoints(config)
    plan = build_plan(config, checkpoints)
    result = VerifyResult(mismatches=_check_layout(config, plan.decisions, weight_map, checkpoints))
    kept = [d for d in plan.decisions if d.action != "skip" and d.name in weight_map]
    chosen = kept if sample is None else random.Random(seed).sample(kept, min(sample, len(kept)))
    for d in chosen:
        problem = _check_tensor(d, out / weight_map[d.name], config)
        result.checked.append(d.name)
        if problem:
            result.mismatches.append(problem)
    return result
