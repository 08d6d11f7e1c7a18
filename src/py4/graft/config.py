"""The graft's typed config: W_graft = W_mid + lambda_ * (W_it - W_base).

Every default lives here. Load with :func:`resolve_graft_config` (the config file, then the
command's flags as typed field values, then ``key=value`` overrides): ``py4 graft``, ``py4 graft
verify`` and the stage registry all do.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import pydantic

from py4.config import ConfigError, StrictModel, apply_overrides, read_config_mapping, validate_config
from py4.overrides import Override
from py4.train.model_files import PROCESSOR_FILES

__all__ = [
    "ModelSource",
    "MissingPolicy",
    "MismatchPolicy",
    "RenameRule",
    "RenameRules",
    "GraftConfig",
    "resolve_graft_config",
    "parse_size",
    "DEFAULT_AUX_FILES",
    "DEFAULT_HUB_PATTERNS",
]

# Files taken from the -it model next to the weights: the grafted model speaks the -it
# model's chat format, so its tokenizer, template, config and processor travel with it.
DEFAULT_AUX_FILES: tuple[str, ...] = (
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "tokenizer.model",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "merges.txt",
    *PROCESSOR_FILES,  # the processor's: vLLM builds a multimodal model's processor at start
)

# What snapshot_download fetches from the Hub: weights, their index and the files above.
DEFAULT_HUB_PATTERNS: tuple[str, ...] = ("*.safetensors", "*.json", "*.jinja", "*.model", "*.txt")

_SIZE_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
               "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")


def parse_size(value: int | str) -> int:
    """Bytes in ``5GB``, ``500MB``, ``2GiB`` or a plain integer; raises ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"expected a size such as 5GB or 500MB, got {value!r}")
    if isinstance(value, int):
        if value <= 0:
            raise ValueError(f"a size must be positive, got {value}")
        return value
    match = _SIZE_RE.match(str(value))
    unit = match.group(2).upper() if match else None
    if not match or unit not in _SIZE_UNITS:
        raise ValueError(f"expected a size such as 5GB, 500MB or 2GiB, got {value!r}")
    size = int(float(match.group(1)) * _SIZE_UNITS[unit])
    if size <= 0:
        raise ValueError(f"a size must be positive, got {value!r}")
    return size


class ModelSource(StrictModel):
    """A checkpoint: a local folder, or a Hugging Face Hub id pinned to a revision."""

    path: str = pydantic.Field(description="local folder, or a Hub id such as google/gemma-3-1b-it")
    revision: str | None = pydantic.Field(None, description="Hub branch, tag or commit (Hub ids only)")

    @pydantic.model_validator(mode="before")
    @classmethod
    def _from_string(cls, data: Any) -> Any:
        # `mid: runs/midtrain/final` is shorthand for `mid: {path: runs/midtrain/final}`.
        return {"path": data} if isinstance(data, str) else data

    @pydantic.field_validator("path")
    @classmethod
    def _non_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a checkpoint path or Hub id is required")
        return value


# What to do with a tensor that is not present in all three checkpoints, by situation.
TakeIt = Literal["take_it", "skip", "error"]
TakeMid = Literal["take_mid", "skip", "error"]
# A tensor in -it and base but not in mid. base_plus_chat_vector: W_base + lambda_ (W_it - W_base),
# the graft formula with W_mid = W_base — what midtraining leaves a tensor it never trained.
NoMid = Literal["base_plus_chat_vector", "take_it", "skip", "error"]


class MissingPolicy(StrictModel):
    """Tensors not present in all three checkpoints (after renaming), by where they are."""

    only_in_it: TakeIt = pydantic.Field(
        "take_it", description="e.g. a vision tower of the -it model: the -it config expects it")
    only_in_mid: TakeMid = pydantic.Field("skip", description="the -it config does not know it")
    only_in_base: Literal["skip", "error"] = "skip"
    missing_in_base: Literal["take_mid", "take_it", "skip", "error"] = pydantic.Field(
        "error", description="in mid and -it only: no chat vector can be formed")
    missing_in_mid: NoMid = pydantic.Field(
        "error", description="in -it and base only: nothing to graft onto (base_plus_chat_vector: "
                             "W_base + lambda_ (W_it - W_base), as if mid held W_base)")
    mtp_missing_in_mid: NoMid = pydantic.Field(
        "error", description="multi-token-prediction layers (model.layers.N .. N+k-1, N = num_hidden_layers and "
                             "k = num_nextn_predict_layers of the -it config.json; GLM-4.5) in -it and base but not "
                             "in mid: transformers drops them on load, so a midtrained model saved by transformers "
                             "lacks them. Decided before missing_in_mid")
    missing_in_it: Literal["take_mid", "skip", "error"] = pydantic.Field(
        "skip", description="in mid and base only (e.g. an untied lm_head where -it ties it)")


class MismatchPolicy(StrictModel):
    """Tensors present in all three checkpoints whose shapes or dtypes disagree."""

    shape: Literal["error", "take_mid", "take_it", "skip"] = "error"
    dtype: Literal["error", "compute", "take_mid", "take_it", "skip"] = pydantic.Field(
        "error", description="compute: cast every input to the accumulate dtype anyway")
    mid_dtype: Literal["round_to_it", "exact", "error"] | None = pydantic.Field(
        None, description="mid stored in a wider float than -it and base, which agree (fp32 master weights "
                          "saved by FSDP2 with bf16 mixed precision): round_to_it = round mid to the -it dtype "
                          "(nearest, ties to even) before the arithmetic, so the graft equals the graft of the "
                          "same model saved in the -it dtype; exact = use mid's stored values (the result is "
                          "rounded once); error. Unset: the dtype policy decides (compute = exact)")
    non_float: Literal["error", "take_mid", "take_it", "skip"] = pydantic.Field(
        "error", description="integer/bool tensors shared by all three: no arithmetic is defined")


class RenameRule(StrictModel):
    """``re.sub(pattern, replacement, name)`` applied to one checkpoint's tensor names."""

    pattern: str
    replacement: str

    @pydantic.field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        return value


class RenameRules(StrictModel):
    """Per-checkpoint renames, so that e.g. ``model.language_model.`` matches ``model.``."""

    mid: list[RenameRule] = []
    it: list[RenameRule] = []
    base: list[RenameRule] = []


class GraftConfig(StrictModel):
    """``W_graft = W_mid + lambda_ * (W_it - W_base)`` for every tensor shared by name."""

    mid: ModelSource = pydantic.Field(description="the model grafted onto (midtraining endpoint)")
    it: ModelSource = pydantic.Field(description="the instruction-tuned model")
    base: ModelSource = pydantic.Field(description="the pretrained model the -it model was tuned from")
    out: str = pydantic.Field(description="output folder (weights, -it tokenizer/config, manifest)")
    lambda_: float = pydantic.Field(1.0, description="scale of the chat vector W_it - W_base")
    accumulate_dtype: Literal["float32", "float64"] = "float32"
    output_dtype: Literal["bfloat16", "float16", "float32"] = "bfloat16"
    missing: MissingPolicy = MissingPolicy()
    mismatch: MismatchPolicy = MismatchPolicy()
    rename: RenameRules = RenameRules()
    max_shard_size: int | str = pydantic.Field("5GB", description="output shard size, e.g. 5GB, 500MB")
    chunk_size: int | str = pydantic.Field(
        "8MiB", description="accumulate-dtype bytes processed at once (per buffer; ~8 buffers)")
    compute_threads: int = pydantic.Field(
        1, ge=1, description="torch threads while streaming; the work is memory-bound and chunks are small, "
                             "so more threads mostly add synchronisation (and stall badly on a busy machine)")
    aux_files: list[str] = pydantic.Field(list(DEFAULT_AUX_FILES),
                                          description="files copied from the -it model when present")
    hub_allow_patterns: list[str] = list(DEFAULT_HUB_PATTERNS)
    hub_cache_dir: str | None = None
    input_hashes: Literal["full", "metadata"] = pydantic.Field(
        "full", description="full: sha256 of every input file; metadata: sizes, headers and small files")
    hash_outputs: bool = pydantic.Field(True, description="sha256 of each output shard, computed while writing")
    fsync: bool = pydantic.Field(True, description="fsync each shard before it is journalled as complete")
    overwrite: bool = pydantic.Field(False, description="discard an existing graft in `out` made from other inputs")
    verify_sample: int = pydantic.Field(8, ge=0, description="tensors recomputed and compared after the run")
    verify_seed: int = 0

    @pydantic.field_validator("max_shard_size", "chunk_size")
    @classmethod
    def _size(cls, value: int | str) -> int | str:
        parse_size(value)
        return value

    @pydantic.field_validator("lambda_")
    @classmethod
    def _finite(cls, value: float) -> float:
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError("lambda_ must be a finite number")
        return value

    @property
    def max_shard_bytes(self) -> int:
        return parse_size(self.max_shard_size)

    @property
    def chunk_bytes(self) -> int:
        return parse_size(self.chunk_size)

    def source(self, role: str) -> ModelSource:
        return {"mid": self.mid, "it": self.it, "base": self.base}[role]


def resolve_graft_config(config_file: str | Path | None, flags: Mapping[str, Any],
                         overrides: Iterable[str | Override] = ()) -> GraftConfig:
    """The GraftConfig of ``config_file`` (or none), then ``flags``, then ``key=value`` overrides.

    ``flags`` maps dotted fields (``mid.path``, ``it.revision``, ``lambda_``) to typed values, as the
    command's flags give them (a path stays a string, not YAML-read); None leaves a field alone.
    Raises ConfigError naming the file and field: a file that is not a mapping (an empty file is
    one), a checkpoint given as something other than a path or a mapping that a flag refines.
    """
    source = str(config_file) if config_file is not None else "<command line>"
    # An empty file, or no file: no fields set (an explicit [], 0 or false is not that, and is refused).
    data = dict(read_config_mapping(config_file, source, "a mapping of GraftConfig fields"))
    for dotted, value in flags.items():
        if value is None:
            continue
        node = data
        *parents, leaf = dotted.split(".")
        for depth, part in enumerate(parents):
            child = _flag_parent(node.get(part), ".".join(parents[:depth + 1]), dotted, source)
            node[part] = child
            node = child
        node[leaf] = value
    data = apply_overrides(data, overrides)
    return validate_config(GraftConfig, data, source)


def _flag_parent(child: Any, field: str, dotted: str, source: str) -> dict[str, Any]:
    """A copy of the mapping a flag sets ``dotted`` in: absent is empty, ``mid: runs/x`` is ``{path: runs/x}``."""
    if child is None:
        return {}
    if isinstance(child, str):
        return {"path": child}
    if isinstance(child, dict):
        return dict(child)
    raise ConfigError(source, [f"{field}: expected a folder or Hub id, or a mapping with path and revision, "
                               f"got {type(child).__name__} {child!r} (the command line sets {dotted})"])
