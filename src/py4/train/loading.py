"""Loading models and tokenizers, and choosing the device settings, for every stage.

A model source is a local folder (smoke assets, a previous stage's output) or a Hub id
with a pinned revision (campaign scale). The same code loads both; a local folder is
never looked up on the Hub. On CPU: ``use_cpu`` and float32, no bf16, no gradient
checkpointing; on GPU: bf16 and gradient checkpointing (as the campaign ran).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from py4.config import StrictModel


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
    """CPU → use_cpu, no bf16, no checkpointing; GPU → bf16 and checkpointing (unless set)."""
    import torch

    if torch.cuda.is_available():
        checkpointing = True if gradient_checkpointing == "auto" else bool(gradient_checkpointing)
        return DeviceSettings(use_cpu=False, bf16=True, gradient_checkpointing=checkpointing, device="cuda")
    checkpointing = False if gradient_checkpointing == "auto" else bool(gradient_checkpointing)
    return DeviceSettings(use_cpu=True, bf16=False, gradient_checkpointing=checkpointing, device="cpu")


def is_local(path: str) -> bool:
    return Path(path).expanduser().exists()


def _check_source(source: ModelSource) -> None:
    if is_local(source.path):
        return
    looks_like_path = source.path.startswith((".", "/", "~")) or source.path.count("/") != 1
    if looks_like_path:
        raise FileNotFoundError(f"model folder not found: {source.path} (and it is not a Hub id 'owner/name')")
    if source.revision is None and not source.allow_unpinned:
        raise ValueError(f"Hub model {source.path!r} needs a pinned revision (set model.revision to a commit)")


def _hub_kwargs(path: str, revision: str | None) -> dict[str, Any]:
    return {"local_files_only": True} if is_local(path) else {"revision": revision}


def load_tokenizer(source: ModelSource):
    """The tokenizer of ``source`` (or of ``source.tokenizer_path``).

    Raises FileNotFoundError / ValueError for a missing folder or an unpinned Hub id.
    """
    from transformers import AutoTokenizer

    _check_source(source)
    path = source.tokenizer_path or source.path
    revision = source.tokenizer_revision if source.tokenizer_path else source.revision
    if source.tokenizer_path and not is_local(path) and revision is None and not source.allow_unpinned:
        raise ValueError(f"Hub tokenizer {path!r} needs a pinned revision (set model.tokenizer_revision)")
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

    Raises FileNotFoundError / ValueError for a missing folder or an unpinned Hub id.
    """
    from transformers import AutoModelForCausalLM

    _check_source(source)
    model = AutoModelForCausalLM.from_pretrained(
        source.path, dtype=torch_dtype(source, device), attn_implementation=source.attn_implementation,
        **_hub_kwargs(source.path, source.revision),
    )
    return model


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
