"""Loading models and tokenizers, and choosing the device settings, for every stage.

A model source is a local folder (smoke assets, a previous stage's output) or a Hub id
with a pinned revision (campaign scale). The same code loads both; a local folder is
never looked up on the Hub. On CPU: ``use_cpu`` and float32, no bf16, no gradient
checkpointing; on GPU: bf16 and gradient checkpointing (as the campaign ran).

Under an FSDP2 launch with ``fsdp_cpu_ram_efficient_loading`` (the campaign's accelerate
configs) only global rank 0 reads the weights; the other ranks build the model on ``meta``
and receive rank 0's weights when accelerate prepares the model (:mod:`py4.train.fsdp`).
That needs the process group first: the stages create their ``TrainingArguments`` (which
starts it) before calling :func:`load_model`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from py4.config import StrictModel
from py4.train.errors import TrainingError, TrainingInputMissing


class ModelSource(StrictModel):
    """Where a model (and its tokenizer) comes from."""

    path: str
    """A local folder, or a Hub id such as ``google/gemma-4-31b``."""
    revision: str | None = None
    """Hub commit to pin (required for Hub ids unless ``allow_unpinned``); ignored for folders."""
    allow_unpinned: bool = False
    tokenizer_path: str | None = None
    """Tokenizer from elsewhere (default: the model's own), e.g. the -it tokenizer for SFT of a base."""
    tokenizer_revision: str | None = None
    attn_implementation: str = "sdpa"
    dtype: Literal["auto", "bfloat16", "float32"] = "auto"
    """``auto``: bfloat16 on GPU, float32 on CPU."""


@dataclass(frozen=True)
class DeviceSettings:
    """What the trainer should do on this machine."""

    use_cpu: bool
    bf16: bool
    gradient_checkpointing: bool
    device: str


def device_settings(gradient_checkpointing: bool | Literal["auto"] = "auto") -> DeviceSettings:
    """CPU → use_cpu, no bf16, no checkpointing; GPU → bf16 and checkpointing (unless set).

    Under an FSDP launch that checkpoints activations itself (``fsdp_activation_checkpointing``),
    ``auto`` means no gradient checkpointing: the Trainer refuses both at once. An FSDP launch
    on CPU processes runs FSDP2 too (:func:`py4.train.fsdp.enable_fsdp_on_cpu`), and sharded
    checkpoints resume with :func:`py4.train.fsdp.load_sharded_optimizer`.
    """
    import torch

    from py4.train import fsdp

    launch = fsdp.launch()
    fsdp.enable_fsdp_on_cpu()
    if launch.enabled:
        fsdp.install_sharded_optimizer_loading()
    by_fsdp = launch.enabled and launch.activation_checkpointing
    if torch.cuda.is_available():
        auto = not by_fsdp
        checkpointing = auto if gradient_checkpointing == "auto" else bool(gradient_checkpointing)
        return DeviceSettings(use_cpu=False, bf16=True, gradient_checkpointing=checkpointing, device="cuda")
    checkpointing = False if gradient_checkpointing == "auto" else bool(gradient_checkpointing)
    return DeviceSettings(use_cpu=True, bf16=False, gradient_checkpointing=checkpointing, device="cpu")


def is_local(path: str) -> bool:
    return Path(path).expanduser().exists()


def _check_source(source: ModelSource, field: str = "model") -> None:
    """A model source that cannot load is the user's to fix; ``field`` is where the config sets it."""
    if is_local(source.path):
        _check_folder(Path(source.path).expanduser(), f"{field}.path", "model",
                      ("config.json", "adapter_config.json"))
        return
    if _looks_like_path(source.path):
        raise TrainingInputMissing(f"{field}.path: model folder not found: {source.path} "
                                   "(and it is not a Hub id 'owner/name')")
    if source.revision is None and not source.allow_unpinned:
        raise TrainingError(f"{field}.path: Hub model {source.path!r} needs a pinned revision "
                            f"(set {field}.revision to a commit)")


def _check_folder(folder: Path, field: str, what: str, markers: tuple[str, ...]) -> None:
    """A folder given as a model or tokenizer must hold one of ``markers`` (transformers would fail
    with a ValueError about a missing ``model_type`` or tokenizer class, naming no field)."""
    if folder.is_dir() and not any((folder / marker).is_file() for marker in markers):
        raise TrainingInputMissing(f"{field}: {folder} is not a saved {what} (no {' or '.join(markers)}; expected "
                                   f"a previous stage's model folder or the smoke assets)")


def _looks_like_path(path: str) -> bool:
    return path.startswith((".", "/", "~")) or path.count("/") != 1


def _hub_kwargs(path: str, revision: str | None) -> dict[str, Any]:
    return {"local_files_only": True} if is_local(path) else {"revision": revision}


def load_tokenizer(source: ModelSource, field: str = "model"):
    """The tokenizer of ``source`` (or of ``source.tokenizer_path``).

    Raises TrainingInputMissing (a FileNotFoundError) for a missing folder, TrainingError (a
    ValueError) for an unpinned Hub id.
    """
    from transformers import AutoTokenizer

    _check_source(source, field)
    path = source.tokenizer_path or source.path
    revision = source.tokenizer_revision if source.tokenizer_path else source.revision
    if source.tokenizer_path:  # checked as the model's own path is (_check_source)
        if is_local(path):
            _check_folder(Path(path).expanduser(), f"{field}.tokenizer_path", "tokenizer",
                          ("tokenizer_config.json", "tokenizer.json"))
        elif _looks_like_path(path):
            raise TrainingInputMissing(f"{field}.tokenizer_path: tokenizer folder not found: {path} "
                                       "(and it is not a Hub id 'owner/name')")
        elif revision is None and not source.allow_unpinned:
            raise TrainingError(f"{field}.tokenizer_path: Hub tokenizer {path!r} needs a pinned revision "
                                f"(set {field}.tokenizer_revision)")
    tokenizer = AutoTokenizer.from_pretrained(path, **_hub_kwargs(path, revision))
    if tokenizer.pad_token is None:  # some base checkpoints ship none; padding needs one
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def torch_dtype(source: ModelSource, device: DeviceSettings):
    import torch

    if source.dtype == "auto":
        return torch.bfloat16 if device.bf16 else torch.float32
    return getattr(torch, source.dtype)


def load_model(source: ModelSource, device: DeviceSettings):
    """A causal LM from ``source`` in the dtype the device calls for.

    Under an FSDP2 launch that loads on rank 0 only (and once the process group exists),
    the other ranks get the model on ``meta`` with rank 0's non-persistent buffers.
    Raises TrainingInputMissing (a FileNotFoundError) for a missing folder, TrainingError (a
    ValueError) for an unpinned Hub id.
    """
    import torch.distributed as dist
    from transformers import AutoModelForCausalLM

    from py4.train import fsdp

    _check_source(source)
    hub = _hub_kwargs(source.path, source.revision)
    dtype = torch_dtype(source, device)
    rank0_only = fsdp.launch().loads_on_rank0_only and dist.is_available() and dist.is_initialized()
    if rank0_only and dist.get_rank() != 0:
        model = fsdp.load_empty(source.path, hub, dtype, source.attn_implementation)
    else:
        model = AutoModelForCausalLM.from_pretrained(
            source.path, dtype=dtype, attn_implementation=source.attn_implementation, **hub,
        )
    if rank0_only:
        fsdp.share_buffers_from_rank0(model)
    # What the final save casts back to (py4.train.packed.save_final_model).
    setattr(model, CHECKPOINT_DTYPE_ATTR, checkpoint_dtype(source))
    model.py4_read_on_rank0_only = rank0_only
    return model


CHECKPOINT_DTYPE_ATTR = "py4_checkpoint_dtype"
"""Attribute :func:`load_model` sets on a model: the dtype its checkpoint is stored in."""


def loading_facts(model) -> dict[str, Any]:
    """What the manifest says about how the weights were loaded (the same on every rank)."""
    from py4.train import fsdp

    launch = fsdp.launch()
    dtype = getattr(model, CHECKPOINT_DTYPE_ATTR, None)
    rank0_only = getattr(model, "py4_read_on_rank0_only", False)
    return {"weights_read_by": "rank 0 only" if rank0_only else "every process",
            "world_size": launch.world_size, "fsdp": launch.enabled,
            "checkpoint_dtype": None if dtype is None else str(dtype).removeprefix("torch.")}


def checkpoint_dtype(source: ModelSource):
    """The dtype the checkpoint of ``source`` is stored in (its config's ``dtype``), or None.

    The final model of a full-parameter stage is saved in this dtype, whatever precision it
    trained in (FSDP2 with bf16 mixed precision keeps fp32 master weights; CPU runs train in
    float32): the graft and the next stage read the checkpoint as the campaign's are, bf16.
    """
    import torch
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(source.path, **_hub_kwargs(source.path, source.revision))
    for candidate in (config, *(getattr(config, key, None) for key in getattr(config, "sub_configs", {}))):
        value = getattr(candidate, "dtype", None) if candidate is not None else None
        if isinstance(value, str):
            value = getattr(torch, value, None)
        if isinstance(value, torch.dtype):
            return value
    return None


def model_provenance(source: ModelSource) -> dict[str, Any]:
    """What the manifest records about a model: Hub id + revision, or folder + content hash."""
    from py4.runs import tree_sha256

    if is_local(source.path):
        folder = Path(source.path)
        weights = sorted(folder.glob("*.safetensors")) or sorted(folder.glob("*.bin"))
        digest = tree_sha256(weights[0]) if len(weights) == 1 else tree_sha256(folder)
        manifest = folder / "smoke_manifest.json"
        return {"path": str(folder.resolve()), "revision": f"sha256:{digest}", "smoke": manifest.exists()}
    return {"hub_id": source.path, "revision": source.revision}
