"""A tiny Gemma-3 text model built from a config (no download), for smoke scale.

Same architecture family as the campaign's Gemma models, so the same loading, LoRA
target names (q/k/v/o/gate/up/down_proj), FSDP wrapping and saving code paths run.
"""

from __future__ import annotations

from pathlib import Path

from py4.config import StrictModel


class TinyModelSpec(StrictModel):
    """Shape of the tiny model. ``head_dim`` is explicit: Gemma3TextConfig's default is 256."""

    hidden_size: int = 64
    num_hidden_layers: int = 2
    num_attention_heads: int = 2
    num_key_value_heads: int = 1
    head_dim: int = 32
    intermediate_size: int = 128
    max_position_embeddings: int = 16384
    sliding_window: int = 512
    seed: int = 0


def build_tiny_model(spec: TinyModelSpec, tokenizer):
    """A freshly initialised Gemma3ForCausalLM sized by ``spec`` for ``tokenizer``'s vocabulary.

    Initialisation is seeded by ``spec.seed``: the same spec gives the same weights.
    """
    import torch
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    end_of_turn = tokenizer.convert_tokens_to_ids("<end_of_turn>")
    config = Gemma3TextConfig(
        vocab_size=len(tokenizer),
        hidden_size=spec.hidden_size,
        num_hidden_layers=spec.num_hidden_layers,
        num_attention_heads=spec.num_attention_heads,
        num_key_value_heads=spec.num_key_value_heads,
        head_dim=spec.head_dim,
        intermediate_size=spec.intermediate_size,
        max_position_embeddings=spec.max_position_embeddings,
        sliding_window=spec.sliding_window,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=[tokenizer.eos_token_id, end_of_turn],
        pad_token_id=tokenizer.pad_token_id,
        attn_implementation="sdpa",
    )
    torch.manual_seed(spec.seed)
    model = Gemma3ForCausalLM(config)
    model.generation_config.eos_token_id = [tokenizer.eos_token_id, end_of_turn]
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.bos_token_id = tokenizer.bos_token_id
    return model


def save_model(model, tokenizer, out_dir: str | Path) -> Path:
    """Save model (safetensors) and tokenizer side by side, as a Hub checkpoint folder looks."""
    out = Path(out_dir)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    return out
