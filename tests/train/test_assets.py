"""Smoke assets: layout, determinism, and an -it model that calls tools in the chat format."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.smoke


def test_layout_and_manifest(smoke_assets):
    manifest = json.loads((smoke_assets / "smoke_manifest.json").read_text())
    assert manifest["status"] == "done"
    for name in ("tokenizer", "base", "it", "instructions"):
        assert manifest["hashes"][name]
    for name in ("base", "it"):
        assert (smoke_assets / name / "model.safetensors").exists()
        assert (smoke_assets / name / "tokenizer_config.json").exists()


def test_tiny_models_have_the_specified_shape(smoke_assets):
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(smoke_assets / "base")
    assert config.model_type == "gemma3_text"
    assert (config.hidden_size, config.num_hidden_layers, config.num_attention_heads,
            config.num_key_value_heads, config.head_dim, config.intermediate_size) == (64, 2, 2, 1, 32, 128)
    from transformers import AutoTokenizer

    assert config.vocab_size == len(AutoTokenizer.from_pretrained(smoke_assets / "tokenizer"))


def test_it_model_emits_a_parseable_tool_call_on_held_out_prompts(smoke_assets):
    """Greedy generation on held-out episode prompts (never trained on) yields a tool call."""
    from py4.train.assets import check_tool_calling, held_out_episode_rows

    held_out = held_out_episode_rows(smoke_assets)
    trained = (smoke_assets / "instructions" / "data.jsonl").read_text()
    records = check_tool_calling(smoke_assets / "it", held_out, limit=2)
    assert len(records) == 2
    for record in records:
        assert record["tool_calls"], record["completion"]
        call = record["tool_calls"][0]["function"]
        assert call["name"] in {"run_code", "submit"} and isinstance(call["arguments"].get("code"), str)
    assert all(json.dumps(row["messages"]) for row in held_out) and trained  # held-out rows are recorded


def test_base_model_is_deterministic():
    import torch

    from py4.chat.smoke_tokenizer import train_tokenizer
    from py4.train.tiny_model import TinyModelSpec, build_tiny_model

    tokenizer = train_tokenizer(["def f(x):\n    return x + 1\n" * 50], vocab_size=300)
    a = build_tiny_model(TinyModelSpec(), tokenizer).state_dict()
    b = build_tiny_model(TinyModelSpec(), tokenizer).state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    c = build_tiny_model(TinyModelSpec(seed=1), tokenizer).state_dict()
    assert not all(torch.equal(a[k], c[k]) for k in a)


def test_tokenizer_training_is_deterministic():
    from py4.chat.smoke_tokenizer import stdlib_texts, train_tokenizer

    first = train_tokenizer(stdlib_texts(200_000), vocab_size=800)
    second = train_tokenizer(stdlib_texts(200_000), vocab_size=800)
    assert first.get_vocab() == second.get_vocab()
