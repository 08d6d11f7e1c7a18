"""Evaluation merges a LoRA adapter into its base before generating: same function, faster."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def adapter_dir(tmp_path_factory):
    """A tiny random Gemma-3 base and a non-trivial adapter on it (LoRA B != 0, trained embeddings)."""
    from peft import get_peft_model
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    from py4.train.eft import LoraSpec

    root = tmp_path_factory.mktemp("merge")
    torch.manual_seed(0)
    config = Gemma3TextConfig(vocab_size=97, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                              num_key_value_heads=1, head_dim=16, intermediate_size=64, pad_token_id=0,
                              bos_token_id=2, eos_token_id=1)
    base = Gemma3ForCausalLM(config)
    base.save_pretrained(root / "base")
    peft_config = LoraSpec(r=8, alpha=16, modules_to_save=["embed_tokens"]).peft_config()
    peft_config.init_lora_weights = False  # random A and B: the adapter changes the function
    model = get_peft_model(Gemma3ForCausalLM.from_pretrained(root / "base"), peft_config)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "modules_to_save" in name:
                param.add_(torch.randn_like(param) * 0.1)
    model.save_pretrained(root / "adapter")
    return root


def _logits(model, ids):
    model.eval()
    with torch.no_grad():
        return model(input_ids=ids).logits


def test_merged_adapter_computes_what_the_unmerged_one_does(adapter_dir):
    from py4.evaluate.local_model import is_adapter, load_model

    ids = torch.randint(3, 97, (2, 24), generator=torch.Generator().manual_seed(1))
    assert is_adapter(adapter_dir / "adapter") and not is_adapter(adapter_dir / "base")
    unmerged = load_model(adapter_dir / "adapter", merge=False)
    merged = load_model(adapter_dir / "adapter")
    assert not hasattr(merged, "peft_config")  # a plain transformers model: no LoRA layers left
    reference = _logits(unmerged, ids)
    torch.testing.assert_close(_logits(merged, ids), reference, atol=1e-4, rtol=1e-4)
    base = _logits(load_model(adapter_dir / "base"), ids)
    assert (base - reference).abs().max() > 1e-2  # the adapter is not a no-op: the check can fail
    # the trained (tied) embeddings are the output head too, after the merge as before it
    assert merged.lm_head.weight.data_ptr() == merged.model.embed_tokens.weight.data_ptr()
