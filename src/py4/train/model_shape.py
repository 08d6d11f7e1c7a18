"""A model's parameter shapes without its weights: what the memory plan and the fit check count.

The shapes come from transformers itself: the model class of a ``config.json`` is built on the
``meta`` device (no memory, a few seconds for 110B parameters), so every tensor transformers
would create is counted, with its name: the LoRA targets are the real module names, matched
by PEFT's own rule. The configuration comes, in this order, from

1. a local model folder's ``config.json`` (a previous stage's output);
2. the Hugging Face cache (``HF_HUB_CACHE``): the pinned revision's ``config.json``, where
   ``py4 campaign preflight`` puts it, and the safetensors headers when they are there
   (:func:`safetensors_parameters`, exact for the checkpoint, MTP layers and encoders included);
3. :data:`PINNED_CONFIGS`: the architecture fields of the campaign's pinned models, each with
   the public copy it was read from. Only the text decoder's fields are kept there: the vision
   and audio encoders are then transformers' defaults for the model type (what the plan counts
   for them is what transformers builds from those defaults; a few hundred million parameters at
   most, stated per model in docs/campaign.md).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["PINNED_CONFIGS", "HEADERS_FILE", "ModelShape", "model_config", "model_shape", "safetensors_headers",
           "safetensors_parameters", "cached_file"]

_GEMMA4_31B_LAYERS = (["sliding_attention"] * 5 + ["full_attention"]) * 10
_GEMMA4_12B_LAYERS = (["sliding_attention"] * 5 + ["full_attention"]) * 8

_GLM45_AIR = {
    "config": {
        "model_type": "glm4_moe", "architectures": ["Glm4MoeForCausalLM"], "attention_bias": True,
        "first_k_dense_replace": 1, "head_dim": 128, "hidden_size": 4096, "intermediate_size": 10944,
        "moe_intermediate_size": 1408, "n_group": 1, "n_routed_experts": 128, "n_shared_experts": 1,
        "norm_topk_prob": True, "num_attention_heads": 96, "num_experts_per_tok": 8, "num_hidden_layers": 46,
        "num_key_value_heads": 8, "num_nextn_predict_layers": 1, "partial_rotary_factor": 0.5,
        "routed_scaling_factor": 1.0, "tie_word_embeddings": False, "topk_group": 1, "use_qk_norm": False,
        "vocab_size": 151552,
    },
    "source": ("GLM-4.5-Air's Glm4MoeConfig as printed by ms-swift when loading zai-org/GLM-4.5-Air "
               "(public log, stored file id 48221590695: transformers 4.54.1, torch_dtype bfloat16); the "
               "-Base revision shares the architecture (README: 106B total, 12B active)"),
}
_GEMMA4_31B = {
    "config": {
        "model_type": "gemma4", "architectures": ["Gemma4ForConditionalGeneration"], "tie_word_embeddings": True,
        "text_config": {
            "model_type": "gemma4_text", "attention_k_eq_v": True, "enable_moe_block": False,
            "final_logit_softcapping": 30.0, "global_head_dim": 512, "head_dim": 256, "hidden_size": 5376,
            "hidden_size_per_layer_input": 0, "intermediate_size": 21504, "layer_types": _GEMMA4_31B_LAYERS,
            "num_attention_heads": 32, "num_global_key_value_heads": 4, "num_hidden_layers": 60,
            "num_key_value_heads": 16, "num_kv_shared_layers": 0, "sliding_window": 1024,
            "tie_word_embeddings": True, "use_double_wide_mlp": False, "vocab_size": 262144,
        },
    },
    "source": ("google/gemma-4-31B text_config as copied into public test fixtures (stored file ids "
               "52072569703: 60 layers, 5 sliding + 1 full; 56132095888: the full text_config field by field)"),
}
_GEMMA4_12B = {
    "config": {
        "model_type": "gemma4_unified", "architectures": ["Gemma4UnifiedForConditionalGeneration"],
        "tie_word_embeddings": True,
        "text_config": {
            "model_type": "gemma4_unified_text", "attention_k_eq_v": True, "enable_moe_block": False,
            "final_logit_softcapping": 30.0, "global_head_dim": 512, "head_dim": 256, "hidden_size": 3840,
            "hidden_size_per_layer_input": 0, "intermediate_size": 15360, "layer_types": _GEMMA4_12B_LAYERS,
            "num_attention_heads": 16, "num_global_key_value_heads": 1, "num_hidden_layers": 48,
            "num_key_value_heads": 8, "num_kv_shared_layers": 0, "sliding_window": 1024,
            "tie_word_embeddings": True, "use_double_wide_mlp": False, "vocab_size": 262144,
        },
    },
    "source": ("google/gemma-4-12B config.json (commit 56820d7d) as fetched in a public session log "
               "(stored file id 54518386891); model.safetensors of google/gemma-4-12B-it is 23,919,549,408 "
               "bytes (stored file id 56991888118), 11.96 B bf16 values"),
}

PINNED_CONFIGS: dict[str, dict[str, Any]] = {
    "zai-org/GLM-4.5-Air-Base": _GLM45_AIR, "zai-org/GLM-4.5-Air": _GLM45_AIR,
    "google/gemma-4-31b": _GEMMA4_31B, "google/gemma-4-31B": _GEMMA4_31B, "google/gemma-4-31B-it": _GEMMA4_31B,
    "google/gemma-4-12b": _GEMMA4_12B, "google/gemma-4-12B": _GEMMA4_12B, "google/gemma-4-12B-it": _GEMMA4_12B,
}
"""Architecture fields of the campaign's pinned Hub models (base and -it share them), with their source."""


def cached_file(repo_id: str, revision: str | None, filename: str,
                cache_dir: str | Path | None = None) -> Path | None:
    """``filename`` of ``repo_id`` at ``revision`` in the local Hugging Face cache (``cache_dir``, else
    the environment's), or None (no network)."""
    from huggingface_hub import try_to_load_from_cache
    from huggingface_hub.errors import HFValidationError

    try:
        found = try_to_load_from_cache(repo_id, filename, cache_dir=cache_dir, revision=revision)
    except HFValidationError:  # a path that is not a Hub id (a folder not written yet)
        return None
    return Path(found) if isinstance(found, str) else None


def model_config(path: str, revision: str | None = None) -> tuple[dict[str, Any], str] | None:
    """The config.json mapping of a model folder or pinned Hub id, and where it came from; None if unknown."""
    folder = Path(path).expanduser()
    if (folder / "config.json").is_file():
        return json.loads((folder / "config.json").read_text(encoding="utf-8")), str(folder / "config.json")
    if not folder.exists() and "/" in path:
        cached = cached_file(path, revision, "config.json")
        if cached is not None:
            return json.loads(cached.read_text(encoding="utf-8")), f"HF cache: {path}@{revision} config.json"
    pinned = PINNED_CONFIGS.get(path)
    if pinned is not None:
        return pinned["config"], pinned["source"]
    return None


@dataclass(frozen=True)
class ModelShape:
    """Parameter shapes of a model and the sizes its activations scale with."""

    model_type: str
    parameters: int
    """Every parameter transformers builds (tied tensors once)."""
    tensors: tuple[tuple[str, int], ...]
    """(name, numel) of every parameter."""
    hidden: int
    layers: int
    vocab: int
    ffn_active: int
    """Feed-forward width a token passes through per layer (MoE: top-k × expert width + shared)."""
    largest_block: int
    """Parameters of the largest decoder layer (what FSDP2 gathers at once)."""
    root: int
    """Parameters outside the decoder layers (embeddings, head, final norm, encoders)."""
    logit_softcap: bool
    active_parameters: int
    """Parameters a token passes through (MoE: the routed experts' top-k share)."""
    linear_shapes: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Module name -> (in_features, out_features) of every nn.Linear: LoRA's possible targets."""


def _text(config: dict[str, Any]) -> dict[str, Any]:
    return config.get("text_config") or config


def _build_meta(config: dict[str, Any]):
    import torch
    from transformers import AutoModelForCausalLM
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    kwargs = {k: v for k, v in config.items() if k != "model_type"}
    hf_config = CONFIG_MAPPING[config["model_type"]](**kwargs)
    with torch.device("meta"):
        return AutoModelForCausalLM.from_config(hf_config)


@lru_cache(maxsize=16)
def _shape_of(config_text: str) -> ModelShape:
    import torch

    config = json.loads(config_text)
    model = _build_meta(config)
    tensors = tuple((name, p.numel()) for name, p in model.named_parameters())
    layer_of = re.compile(r"^(.*\.layers\.\d+)\.")
    blocks: dict[str, int] = {}
    for name, numel in tensors:
        match = layer_of.match(name)
        if match:
            blocks[match.group(1)] = blocks.get(match.group(1), 0) + numel
    text = _text(config)
    experts = int(text.get("n_routed_experts") or text.get("num_experts") or 0)
    top_k = int(text.get("num_experts_per_tok") or text.get("top_k_experts") or 0)
    expert_params = sum(n for name, n in tensors if ".mlp.experts." in name)
    active = sum(n for _, n in tensors) - (expert_params - expert_params * top_k // experts if experts else 0)
    if experts:
        ffn = top_k * int(text["moe_intermediate_size"]) + int(text.get("n_shared_experts") or 0) * int(
            text["moe_intermediate_size"])
    else:
        ffn = int(text["intermediate_size"])
    linears = {name: (m.in_features, m.out_features) for name, m in model.named_modules()
               if isinstance(m, torch.nn.Linear)}
    total = sum(n for _, n in tensors)
    return ModelShape(
        model_type=config["model_type"], parameters=total, tensors=tensors, hidden=int(text["hidden_size"]),
        layers=int(text["num_hidden_layers"]), vocab=int(text["vocab_size"]), ffn_active=ffn,
        largest_block=max(blocks.values()) if blocks else 0, root=total - sum(blocks.values()),
        logit_softcap=bool(text.get("final_logit_softcapping")), active_parameters=active, linear_shapes=linears)


def model_shape(config: dict[str, Any]) -> ModelShape:
    """The shapes transformers builds for ``config`` (a config.json mapping), counted on ``meta``."""
    return _shape_of(json.dumps(config, sort_keys=True))


HEADERS_FILE = "py4_safetensors_headers.json"
"""The safetensors headers of a pinned checkpoint, as ``py4 campaign preflight`` stores them beside the
snapshot's files: ``{shard file: {tensor name: {"dtype": ..., "shape": [...]}}}`` (huggingface_hub's
``get_safetensors_metadata`` reads them by HTTP range; no weight is downloaded)."""


def safetensors_headers(repo_id: str, revision: str | None) -> dict[str, dict[str, Any]] | None:
    """The stored safetensors headers of ``repo_id`` at ``revision`` (see :data:`HEADERS_FILE`), or None."""
    found = cached_file(repo_id, revision, HEADERS_FILE)
    return json.loads(found.read_text(encoding="utf-8")) if found is not None else None


def safetensors_parameters(repo_id: str, revision: str | None) -> int | None:
    """Parameters stored in the pinned checkpoint per its safetensors headers in the HF cache, or None."""
    headers = safetensors_headers(repo_id, revision)
    if headers is None:
        return None
    total = 0
    for tensors in headers.values():
        for info in tensors.values():
            count = 1
            for dim in info["shape"]:
                count *= int(dim)
            total += count
    return total
