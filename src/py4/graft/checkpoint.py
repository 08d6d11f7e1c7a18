"""Checkpoints on disk: resolving a source, and where every tensor's bytes are.

A checkpoint is a folder in the Hugging Face layout: ``model.safetensors`` or shards
``model-0000i-of-0000n.safetensors`` listed by ``model.safetensors.index.json``, next to
``config.json`` and tokenizer files. A Hub id is fetched with ``snapshot_download``
(pinned to a revision) and then read like a local folder.

Only safetensors headers are read here (names, dtypes, shapes, byte offsets); the
tensor data are read later, a chunk at a time, by the streaming engine.
"""

from __future__ import annotations

import json
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

from py4.config import is_hub_id
from py4.errors import Py4Error
from py4.fileio import WEIGHT_INDEX_NAME, read_weight_map
from py4.graft.config import ModelSource, RenameRule

__all__ = [
    "ROLES",
    "GraftError",
    "DTYPES",
    "DtypeInfo",
    "TensorEntry",
    "Checkpoint",
    "resolve_source",
    "read_safetensors_header",
    "load_checkpoint",
    "INDEX_NAME",
    "open_checkpoints",
]

ROLES = ("mid", "it", "base")
INDEX_NAME = WEIGHT_INDEX_NAME
_MAX_HEADER_BYTES = 100 * 2**20  # safetensors' own limit
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


class GraftError(Py4Error, ValueError):
    """A graft cannot proceed: bad inputs, mismatched tensors, or an inconsistent output folder.

    A user's error (py4.errors): `py4 graft` prints it as one line and exits 2."""


@dataclass(frozen=True)
class DtypeInfo:
    code: str  # the safetensors name, e.g. BF16
    torch_name: str  # attribute of the torch module, e.g. bfloat16
    itemsize: int
    is_float: bool
    rank: int  # safetensors writes tensors of higher rank first within a file

    @property
    def torch_dtype(self):
        import torch

        return getattr(torch, self.torch_name)


# Ordered as safetensors (0.8) orders tensors in a file: by this order, then by name.
_DTYPE_ROWS = [
    ("U64", "uint64", 8, False), ("I64", "int64", 8, False), ("F64", "float64", 8, True),
    ("F32", "float32", 4, True), ("U32", "uint32", 4, False), ("I32", "int32", 4, False),
    ("BF16", "bfloat16", 2, True), ("F16", "float16", 2, True), ("U16", "uint16", 2, False),
    ("I16", "int16", 2, False), ("F8_E4M3", "float8_e4m3fn", 1, True),
    ("F8_E5M2", "float8_e5m2", 1, True), ("I8", "int8", 1, False), ("U8", "uint8", 1, False),
    ("BOOL", "bool", 1, False),
]
DTYPES: dict[str, DtypeInfo] = {
    code: DtypeInfo(code, name, size, is_float, rank=len(_DTYPE_ROWS) - i)
    for i, (code, name, size, is_float) in enumerate(_DTYPE_ROWS)
}
TORCH_TO_CODE = {info.torch_name: code for code, info in DTYPES.items()}


@dataclass(frozen=True)
class TensorEntry:
    """Where one tensor's bytes are: ``file[begin:end]`` (absolute offsets)."""

    name: str  # the name the graft matches on (after renaming)
    stored_name: str  # the name inside the file
    file: Path
    dtype: str
    shape: tuple[int, ...]
    begin: int
    end: int

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def info(self) -> DtypeInfo:
        return DTYPES[self.dtype]


@dataclass
class Checkpoint:
    role: str
    folder: Path
    hub_id: str | None = None
    revision: str | None = None  # as requested
    commit: str | None = None  # as resolved by the Hub
    weight_files: list[Path] = field(default_factory=list)
    tensors: dict[str, TensorEntry] = field(default_factory=dict)

    def describe(self) -> str:
        if self.hub_id:
            return f"{self.role} ({self.hub_id}@{self.commit or self.revision or 'main'})"
        return f"{self.role} ({self.folder})"


def resolve_source(role: str, source: ModelSource, *, allow_patterns: list[str],
                   cache_dir: str | None = None) -> tuple[Path, str | None, str | None]:
    """(local folder, hub id or None, resolved commit or None) for a checkpoint source.

    A path that is an existing folder is used as it is; otherwise ``owner/name`` is a Hub
    id fetched with ``huggingface_hub.snapshot_download`` at ``source.revision``.
    Raises GraftError when the source is neither, or a revision is given for a folder.
    """
    local = Path(source.path).expanduser()
    if local.is_dir():
        if source.revision:
            raise GraftError(f"{role}: revision {source.revision!r} given for the local folder {local}; "
                             "revisions apply to Hub ids only")
        return local, None, None
    if local.exists():
        raise GraftError(f"{role}: {local} is a file; expected a checkpoint folder or a Hub id")
    if not is_hub_id(source.path):
        raise GraftError(f"{role}: {source.path!r} is neither an existing folder nor a Hub id (owner/name)")
    from huggingface_hub import snapshot_download

    folder = Path(snapshot_download(repo_id=source.path, revision=source.revision,
                                    allow_patterns=list(allow_patterns), cache_dir=cache_dir))
    commit = folder.name if _COMMIT.match(folder.name) else None
    return folder, source.path, commit


def read_safetensors_header(path: Path) -> tuple[dict, int]:
    """(header without ``__metadata__``, byte offset where the data start) of one file.

    Raises GraftError naming the file and tensor when the header is malformed: unknown
    dtype, a byte range that does not match the shape, or data past the end of the file.
    """
    size = path.stat().st_size
    with open(path, "rb") as fh:
        raw = fh.read(8)
        if len(raw) < 8:
            raise GraftError(f"{path}: too short to be a safetensors file")
        (n,) = struct.unpack("<Q", raw)
        if n > _MAX_HEADER_BYTES or 8 + n > size:
            raise GraftError(f"{path}: header length {n} is impossible for a file of {size} bytes")
        try:
            header = json.loads(fh.read(n))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise GraftError(f"{path}: header is not JSON: {exc}") from None
    if not isinstance(header, dict):
        raise GraftError(f"{path}: header is not a JSON object")
    header.pop("__metadata__", None)
    data_start, data_size = 8 + n, size - 8 - n
    for name, entry in header.items():
        try:
            dtype, (begin, end), shape = entry["dtype"], entry["data_offsets"], list(entry["shape"])
            numel = 1
            for d in shape:
                numel *= int(d)
        except (KeyError, TypeError, ValueError):
            raise GraftError(f"{path}: tensor {name!r} lacks a valid dtype, shape or data_offsets") from None
        if dtype not in DTYPES:
            raise GraftError(f"{path}: tensor {name!r} has dtype {dtype!r}; supported: {', '.join(DTYPES)}")
        if end - begin != numel * DTYPES[dtype].itemsize or end > data_size or begin < 0:
            raise GraftError(f"{path}: tensor {name!r} byte range [{begin}, {end}) does not fit "
                             f"shape {entry['shape']} {dtype} within {data_size} data bytes")
    return header, data_start


def _weight_files(folder: Path) -> list[Path]:
    index = folder / INDEX_NAME
    if index.is_file():
        weight_map = read_weight_map(index, error=GraftError)
        files = [folder / f for f in sorted(set(weight_map.values()))]
        missing = [str(f) for f in files if not f.is_file()]
        if missing:
            raise GraftError(f"{index} names shard(s) that do not exist: {', '.join(missing)}")
        return files
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise GraftError(f"{folder}: no *.safetensors weights and no {INDEX_NAME}")
    return files


def _renamed(name: str, rules: list[RenameRule]) -> str:
    for rule in rules:
        name = re.sub(rule.pattern, rule.replacement, name)
    return name


def load_checkpoint(role: str, folder: Path, rename: list[RenameRule], *, hub_id: str | None = None,
                    revision: str | None = None, commit: str | None = None) -> Checkpoint:
    """Index every tensor of the checkpoint in ``folder`` by its (renamed) name.

    The names are cross-checked with safetensors' own reader. Raises GraftError on a
    malformed file, a tensor stored twice, or two names that renaming makes equal.
    """
    from safetensors import safe_open

    ckpt = Checkpoint(role, folder, hub_id=hub_id, revision=revision, commit=commit)
    ckpt.weight_files = _weight_files(folder)
    for path in ckpt.weight_files:
        header, data_start = read_safetensors_header(path)
        with safe_open(str(path), framework="pt") as handle:  # the library validates the layout
            if set(handle.keys()) != set(header):
                raise GraftError(f"{path}: header names disagree with safetensors' reader")
        for stored, entry in header.items():
            name = _renamed(stored, rename)
            if name in ckpt.tensors:
                other = ckpt.tensors[name]
                raise GraftError(f"{role}: tensor {name!r} appears twice ({other.file.name}:{other.stored_name} "
                                 f"and {path.name}:{stored}); check the rename rules")
            begin, end = entry["data_offsets"]
            ckpt.tensors[name] = TensorEntry(name, stored, path, entry["dtype"], tuple(entry["shape"]),
                                             data_start + begin, data_start + end)
    return ckpt


def open_checkpoints(config) -> dict[str, Checkpoint]:
    """Resolve (downloading Hub ids) and index the mid, it and base checkpoints of a GraftConfig.

    Raises GraftError on an unusable source or a malformed checkpoint.
    """
    checkpoints = {}
    for role in ROLES:
        source = config.source(role)
        folder, hub_id, commit = resolve_source(role, source, allow_patterns=config.hub_allow_patterns,
                                                cache_dir=config.hub_cache_dir)
        checkpoints[role] = load_checkpoint(role, folder, getattr(config.rename, role), hub_id=hub_id,
                                            revision=source.revision, commit=commit)
    return checkpoints
