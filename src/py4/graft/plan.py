"""The graft plan: what happens to every tensor, and which output shard holds it.

The plan is computed from the three checkpoints' headers alone, before any data is
read, and it is deterministic: names in natural order, shards filled greedily up to
``max_shard_size``, tensors inside a shard in safetensors' own order. Because the
layout is known up front, every shard can be written (and re-written on resume) on
its own, and an interrupted run produces the same bytes as an uninterrupted one.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field

from py4.graft.checkpoint import DTYPES, ROLES, TORCH_TO_CODE, Checkpoint, GraftError, TensorEntry
from py4.graft.config import GraftConfig

__all__ = ["Decision", "ShardPlan", "GraftPlan", "build_plan", "natural_key", "shard_header"]

# Which policy field governs a tensor, by the set of checkpoints that hold it.
_SITUATIONS: dict[frozenset[str], str] = {
    frozenset({"it"}): "only_in_it",
    frozenset({"mid"}): "only_in_mid",
    frozenset({"base"}): "only_in_base",
    frozenset({"mid", "it"}): "missing_in_base",
    frozenset({"it", "base"}): "missing_in_mid",
    frozenset({"mid", "base"}): "missing_in_it",
}
_MAX_LISTED_PROBLEMS = 25


def natural_key(name: str) -> tuple:
    """Sort key that puts ``layers.2`` before ``layers.10``."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name))


@dataclass(frozen=True)
class Decision:
    """What the graft does with one tensor name."""

    name: str
    action: str  # graft | take_mid | take_it | skip
    reason: str  # why, for every action but a plain graft
    shape: tuple[int, ...] = ()
    out_dtype: str = ""  # safetensors dtype code of the stored result
    sources: dict[str, TensorEntry] = field(default_factory=dict)  # role -> input read

    @property
    def out_bytes(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n * DTYPES[self.out_dtype].itemsize if self.action != "skip" else 0


@dataclass
class ShardPlan:
    file_name: str
    tensors: list[Decision]  # in the order their bytes appear in the file
    header: bytes  # the 8-byte length prefix and the padded JSON header
    size: int  # bytes of the whole file


@dataclass
class GraftPlan:
    decisions: list[Decision]  # every name, in natural order, skipped ones included
    shards: list[ShardPlan]
    fingerprint: str  # changes whenever the inputs or anything that affects the output change

    @property
    def total_size(self) -> int:
        return sum(d.out_bytes for d in self.decisions)

    def by_action(self, action: str) -> list[Decision]:
        return [d for d in self.decisions if d.action == action]


def _output_code(config: GraftConfig) -> str:
    return TORCH_TO_CODE[config.output_dtype]


def _take(name: str, role: str, entry: TensorEntry, reason: str, config: GraftConfig) -> Decision:
    # Floating tensors are stored in the output dtype like grafted ones; others as they are.
    code = _output_code(config) if entry.info.is_float else entry.dtype
    return Decision(name, f"take_{role}", reason, entry.shape, code, {role: entry})


def _apply(name: str, choice: str, reason: str, entries: dict[str, TensorEntry], config: GraftConfig,
           policy_field: str) -> Decision:
    if choice == "error":
        raise GraftError(f"{name}: {reason} (policy {policy_field}=error)")
    if choice == "skip":
        return Decision(name, "skip", reason)
    role = choice.removeprefix("take_")
    return _take(name, role, entries[role], reason, config)


def _shared_decision(name: str, entries: dict[str, TensorEntry], config: GraftConfig) -> Decision:
    shapes = {role: list(e.shape) for role, e in entries.items()}
    if len({tuple(s) for s in shapes.values()}) > 1:
        reason = "shape mismatch: " + ", ".join(f"{r} {shapes[r]}" for r in ROLES)
        return _apply(name, config.mismatch.shape, reason, entries, config, "mismatch.shape")
    dtypes = {role: e.dtype for role, e in entries.items()}
    if not all(e.info.is_float for e in entries.values()):
        reason = "not a floating tensor: " + ", ".join(f"{r} {dtypes[r]}" for r in ROLES)
        return _apply(name, config.mismatch.non_float, reason, entries, config, "mismatch.non_float")
    if len(set(dtypes.values())) > 1 and config.mismatch.dtype != "compute":
        reason = "dtype mismatch: " + ", ".join(f"{r} {dtypes[r]}" for r in ROLES)
        return _apply(name, config.mismatch.dtype, reason, entries, config, "mismatch.dtype")
    return Decision(name, "graft", "", entries["mid"].shape, _output_code(config), dict(entries))


def _decide(name: str, checkpoints: dict[str, Checkpoint], config: GraftConfig) -> Decision:
    entries = {role: c.tensors[name] for role, c in checkpoints.items() if name in c.tensors}
    if len(entries) == len(ROLES):
        return _shared_decision(name, entries, config)
    situation = _SITUATIONS[frozenset(entries)]
    reason = situation.replace("_", " ")
    return _apply(name, getattr(config.missing, situation), reason, entries, config, f"missing.{situation}")


def shard_header(tensors: list[Decision], metadata: dict[str, str]) -> bytes:
    """The safetensors header for ``tensors`` laid out in the given order.

    Compact JSON, ``__metadata__`` first, padded with spaces to a multiple of 8 bytes:
    byte for byte what ``safetensors.torch.save_file`` writes for the same tensors.
    """
    body: dict[str, object] = {"__metadata__": metadata}
    offset = 0
    for d in tensors:
        body[d.name] = {"dtype": d.out_dtype, "shape": list(d.shape), "data_offsets": [offset, offset + d.out_bytes]}
        offset += d.out_bytes
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
    text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text


def _layout_shards(kept: list[Decision], max_bytes: int) -> list[ShardPlan]:
    groups: list[list[Decision]] = []
    current: list[Decision] = []
    current_bytes = 0
    for d in kept:
        if current and current_bytes + d.out_bytes > max_bytes:
            groups.append(current)
            current, current_bytes = [], 0
        current.append(d)
        current_bytes += d.out_bytes
    if current:
        groups.append(current)
    shards = []
    for i, group in enumerate(groups, start=1):
        ordered = sorted(group, key=lambda d: (-DTYPES[d.out_dtype].rank, d.name))
        header = shard_header(ordered, {"format": "pt"})
        name = f"model-{i:05d}-of-{len(groups):05d}.safetensors"
        shards.append(ShardPlan(name, ordered, header, len(header) + sum(d.out_bytes for d in group)))
    return shards


def _fingerprint(config: GraftConfig, checkpoints: dict[str, Checkpoint], shards: list[ShardPlan]) -> str:
    files = {}
    for role, ckpt in checkpoints.items():
        for path in ckpt.weight_files:
            stat = path.stat()
            files[f"{role}/{path.name}"] = [stat.st_size, stat.st_mtime_ns]
    payload = {
        "lambda": config.lambda_, "accumulate_dtype": config.accumulate_dtype,
        "output_dtype": config.output_dtype, "inputs": files,
        "sources": {s.file_name: [[d.name, d.action, {r: [e.file.name, e.begin, e.dtype] for r, e in d.sources.items()}]
                                  for d in s.tensors] for s in shards},
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def build_plan(config: GraftConfig, checkpoints: dict[str, Checkpoint]) -> GraftPlan:
    """Decide every tensor and lay out the output shards.

    Raises GraftError listing every tensor whose policy is ``error`` (shape, dtype,
    non-float or missing), each with its name and what differs.
    """
    names = sorted(set().union(*(c.tensors for c in checkpoints.values())), key=natural_key)
    decisions, problems = [], []
    for name in names:
        try:
            decisions.append(_decide(name, checkpoints, config))
        except GraftError as exc:
            problems.append(str(exc))
    if problems:
        listed = "\n".join(f"  - {p}" for p in problems[:_MAX_LISTED_PROBLEMS])
        more = f"\n  ... and {len(problems) - _MAX_LISTED_PROBLEMS} more" if len(problems) > _MAX_LISTED_PROBLEMS else ""
        raise GraftError(f"{len(problems)} tensor(s) cannot be grafted as configured:\n{listed}{more}")
    kept = [d for d in decisions if d.action != "skip"]
    if not any(d.action == "graft" for d in kept):
        raise GraftError("no tensor is shared by name by mid, it and base: check the inputs and rename rules")
    shards = _layout_shards(kept, config.max_shard_bytes)
    return GraftPlan(decisions, shards, _fingerprint(config, checkpoints, shards))
