"""Tiny, randomly initialised stand-ins of the campaign's model classes for the EFT tests.

Shapes follow ../shared/design/REHEARSAL.md: ``Gemma4ForConditionalGeneration`` with its
vision tower (five sliding layers and one full one, ``attention_k_eq_v``), and
``Glm4MoeForCausalLM`` (a dense first layer, then routed + shared experts). Layer counts can
be raised to the campaign models' own (48 / 60 / 46) to check the adapted-module counts: the
counts depend on the layer structure only, not on the widths.
(src/py4/rehearsal/standins.py is to build the full stand-ins with Hub-like snapshots; these
are the minimum the EFT tests need.)
"""

from __future__ import annotations

from pathlib import Path


def gemma4_config(vocab_size: int, num_hidden_layers: int = 6):
    from transformers import Gemma4Config

    v = vocab_size
    text = dict(vocab_size=v, hidden_size=64, intermediate_size=128, num_hidden_layers=num_hidden_layers,
                num_attention_heads=2, num_key_value_heads=1, head_dim=32, global_head_dim=32,
                num_global_key_value_heads=1, hidden_size_per_layer_input=0, vocab_size_per_layer_input=v,
                attention_k_eq_v=True, sliding_window=16, pad_token_id=0, eos_token_id=1, bos_token_id=2)
    vision = dict(hidden_size=32, num_hidden_layers=2, intermediate_size=64, num_attention_heads=2,
                  num_key_value_heads=2, head_dim=16)
    # The multimodal marker ids must lie inside the vocabulary: the last few ids.
    return Gemma4Config(text_config=text, vision_config=vision, audio_config=None,
                        boi_token_id=v - 4, eoi_token_id=v - 3, image_token_id=v - 2, video_token_id=v - 1,
                        boa_token_id=v - 5, eoa_token_index=v - 6, audio_token_id=v - 7)


def glm45_config(vocab_size: int, num_hidden_layers: int = 3):
    from transformers import Glm4MoeConfig

    return Glm4MoeConfig(vocab_size=vocab_size, hidden_size=64, intermediate_size=128, moe_intermediate_size=32,
                         num_hidden_layers=num_hidden_layers, num_attention_heads=2, num_key_value_heads=1,
                         head_dim=32, n_routed_experts=4, num_experts_per_tok=2, n_shared_experts=1,
                         first_k_dense_replace=1, pad_token_id=0, eos_token_id=1, bos_token_id=2)


def build(config, seed: int = 0):
    """The model class the Auto factory picks for ``config`` (as loading a Hub snapshot would)."""
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    return AutoModelForCausalLM.from_config(config)


def save_with_tokenizer(model, tokenizer, out: Path) -> Path:
    """Model + tokenizer in one folder, as a previous stage's output (what py4 train eft loads)."""
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = [tokenizer.eos_token_id]
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
