"""The graft plan: what happens to every tensor, and which output shard holds it.

Actions: ``graft`` (``W_mid + lambda_ (W_it - W_base)``; with ``mid_round`` set, mid is
first rounded to the -it dtype), ``base_plus_chat_vector`` (``W_base + lambda_ (W_it -
W_base)`` for a tensor mid lacks), ``take_mid`` / ``take_it`` (a copy) and ``skip``.

The plan is computed from the three checkpoints' headers (and the -it ``config.json``)
alone, before any data is read, and it is deterministic: names in natural order, shards filled greedily up to
``max_shard_size``, tensors inside a shard in safetensors' own order. Because the
layout is known up front, every shard can be written (and re-written on resume) on
its own, and an interrupted run produces the same bytes as an uninterrupted one.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from py4.graft.checkpoint import DTYPES, ROLES, TORCH_TO_CODE, Checkpoint, GraftError, TensorEntry
from py4.fileio import read_json_object
from py4.graft.config import GraftConfig

__all__ = ["Decision", "ShardPlan", "GraftPlan", "build_plan", "natural_key", "shard_header", "mtp_prefixes",
           "ON_BASE"]

ON_BASE = "base_plus_chat_vector"  # the action (and policy value) W_base + lambda_ (W_it - W_base)

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

# Shown once under the list of problems, whatever the number of tensors they concern.
_HINTS = {
    "mid_dtype": (
        "mid is stored in a wider float than -it and base (e.g. fp32 master weights saved by FSDP2 with bf16 "
        "mixed precision). Choose mismatch.mid_dtype: round_to_it (round mid to the -it dtype, nearest even, "
        "then graft: the same bytes as grafting the model saved in that dtype) or exact (graft mid's stored "
        "values, one rounding of the result); or save the midtrained model in the -it dtype."),
    "mtp": (
        "the multi-token-prediction layer(s) named by the -it config.json (num_nextn_predict_layers) are absent "
        "from mid: transformers drops them when it loads the model, so a model it saved lacks them. Choose "
        "missing.mtp_missing_in_mid: base_plus_chat_vector (W_base + lambda_ (W_it - W_base): the graft of a "
        "layer midtraining left at W_base), take_it, or skip."),
}


class _PolicyError(GraftError):
    """A tensor whose policy is ``error``; ``hint`` names a key of ``_HINTS`` (or is empty)."""

    def __init__(self, message: str, hint: str = ""):
        super().__init__(message)
        self.hint = hint


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
    mid_round: str = ""  # graft only: dtype code mid is rounded to before the arithmetic ("" = none)

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


def _on_base(name: str, reason: str, entries: dict[str, TensorEntry], config: GraftConfig) -> Decision:
    """W_base + lambda_ (W_it - W_base): the graft with W_mid = W_base, for a tensor mid lacks."""
    it, base = entries["it"], entries["base"]
    if it.shape != base.shape:
        raise GraftError(f"{name}: {reason}, and -it and base disagree in shape: it {list(it.shape)}, "
                         f"base {list(base.shape)}; no chat vector can be formed")
    if not (it.info.is_float and base.info.is_float):
        raise GraftError(f"{name}: {reason}, and it is not a floating tensor (it {it.dtype}, base {base.dtype})")
    if it.dtype != base.dtype and config.mismatch.dtype != "compute":
        raise GraftError(f"{name}: {reason}, and -it and base disagree in dtype: it {it.dtype}, base {base.dtype} "
                         "(policy mismatch.dtype=error)")
    return Decision(name, ON_BASE, reason, it.shape, _output_code(config), {"it": it, "base": base})


def _apply(name: str, choice: str, reason: str, entries: dict[str, TensorEntry], config: GraftConfig,
           policy_field: str, hint: str = "") -> Decision:
    if choice == "error":
        raise _PolicyError(f"{name}: {reason} (policy {policy_field}=error)", hint)
    if choice == "skip":
        return Decision(name, "skip", reason)
    if choice == ON_BASE:
        return _on_base(name, reason, entries, config)
    role = choice.removeprefix("take_")
    return _take(name, role, entries[role], reason, config)


def _wider_mid(entries: dict[str, TensorEntry]) -> bool:
    """mid in a wider float than -it and base, which agree (e.g. F32 against BF16)."""
    mid, it, base = entries["mid"], entries["it"], entries["base"]
    return it.dtype == base.dtype and mid.info.itemsize > it.info.itemsize


def _mid_dtype_decision(name: str, entries: dict[str, TensorEntry], config: GraftConfig,
                        reason: str) -> Decision:
    choice = config.mismatch.mid_dtype
    if choice is None:  # unset: the general dtype policy decides (compute grafts mid's values exactly)
        if config.mismatch.dtype == "compute":
            choice = "exact"
        else:
            return _apply(name, config.mismatch.dtype, reason, entries, config, "mismatch.dtype", hint="mid_dtype")
    if choice == "error":
        raise _PolicyError(f"{name}: {reason} (policy mismatch.mid_dtype=error)", "mid_dtype")
    mid_round = entries["it"].dtype if choice == "round_to_it" else ""
    return Decision(name, "graft", "", entries["mid"].shape, _output_code(config), dict(entries), mid_round)


def _shared_decision(name: str, entries: dict[str, TensorEntry], config: GraftConfig) -> Decision:
    shapes = {role: list(e.shape) for role, e in entries.items()}
    if len({tuple(s) for s in shapes.values()}) > 1:
        reason = "shape mismatch: " + ", ".join(f"{r} {shapes[r]}" for r in ROLES)
        return _apply(name, config.mismatch.shape, reason, entries, config, "mismatch.shape")
    dtypes = {role: e.dtype for role, e in entries.items()}
    if not all(e.info.is_float for e in entries.values()):
        reason = "not a floating tensor: " + ", ".join(f"{r} {dtypes[r]}" for r in ROLES)
        return _apply(name, config.mismatch.non_float, reason, entries, config, "mismatch.non_float")
    if len(set(dtypes.values())) > 1:
        reason = "dtype mismatch: " + ", ".join(f"{r} {dtypes[r]}" for r in ROLES)
        if _wider_mid(entries):
            return _mid_dtype_decision(name, entries, config, reason)
        if config.mismatch.dtype != "compute":
            return _apply(name, config.mismatch.dtype, reason, entries, config, "mismatch.dtype")
    return Decision(name, "graft", "", entries["mid"].shape, _output_code(config), dict(entries))


def mtp_prefixes(it: Checkpoint) -> tuple[str, ...]:
    """Name prefixes of the multi-token-prediction layers the -it ``config.json`` declares.

    GLM-4.5 (like DeepSeek-V3) stores ``num_nextn_predict_layers`` such layers after the
    decoder stack, as ``model.layers.<num_hidden_layers + i>.``; () when there are none.
    """
    path = Path(it.folder) / "config.json"
    if not path.is_file():
        return ()  # copy_aux_files reports a missing -it config.json
    config = read_json_object(path, error=GraftError)  # malformed: path:line, not "no MTP layers"
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    layers, extra = text.get("num_hidden_layers"), text.get("num_nextn_predict_layers") or 0
    if not isinstance(layers, int) or not isinstance(extra, int):
        return ()
    return tuple(f"model.layers.{layers + i}." for i in range(extra))


def _decide(name: str, checkpoints: dict[str, Checkpoint], config: GraftConfig,
            mtp: tuple[str, ...] = ()) -> Decision:
    entries = {role: c.tensors[name] for role, c in checkpoints.items() if name in c.tensors}
    if len(entries) == len(ROLES):
        return _shared_decision(name, entries, config)
    situation = _SITUATIONS[frozenset(entries)]
    reason = situation.replace("_", " ")
    if situation == "missing_in_mid" and name.startswith(mtp):
        return _apply(name, config.missing.mtp_missing_in_mid, "multi-token-prediction layer missing in mid",
                      entries, config, "missing.mtp_missing_in_mid", hint="mtp")
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
                                  + ([d.mid_round] if d.mid_round else []) for d in s.tensors] for s in shards},
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def build_plan(config: GraftConfig, checkpoints: dict[str, Checkpoint]) -> GraftPlan:
    """Decide every tensor and lay out the output shards.

    Raises GraftError listing every tensor whose policy is ``error`` (shape, dtype,
    non-float or missing), each with its name and what differs.
    """
    names = sorted(set().union(*(c.tensors for c in checkpoints.values())), key=natural_key)
    mtp = mtp_prefixes(checkpoints["it"])
    decisions, problems, hints = [], [], []
    for name in names:
        try:
            decisions.append(_decide(name, checkpoints, config, mtp))
        except GraftError as exc:
            problems.append(str(exc))
            hint = getattr(exc, "hint", "")
            if hint and hint not in hints:
                hints.append(hint)
    if problems:
        listed = "\n".join(f"  - {p}" for p in problems[:_MAX_LISTED_PROBLEMS])
        unlisted = len(problems) - _MAX_LISTED_PROBLEMS
        more = f"\n  ... and {unlisted} more" if unlisted > 0 else ""
        advice = "".join(f"\n{_HINTS[h]}" for h in hints)
        raise GraftError(f"{len(problems)} tensor(s) cannot be grafted as configured:\n{listed}{more}{advice}")
    kept = [d for d in decisions if d.action != "skip"]
    if not any(d.action == "graft" for d in kept):
        raise GraftError("no tensor is shared by name by mid, it and base: check the inputs and rename rules")
    shards = _layout_shards(kept, config.max_shard_bytes)
    return GraftPlan(decisions, shards, _fingerprint(config, checkpoints, shards))
