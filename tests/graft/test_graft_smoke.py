"""A grafted tiny Gemma-3 loads with from_pretrained, speaks the -it template and generates."""

from __future__ import annotations

import json

import pytest
import torch

from py4.graft import GraftConfig, run

TEMPLATE = ("{% for m in messages %}<start_of_turn>{{ m['role'] }}\n{{ m['content'] }}<end_of_turn>\n"
            "{% endfor %}{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}")


def _tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = ["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>", "user", "model", "hello", "world"]
    vocab = {w: i for i, w in enumerate(words + [f"w{i}" for i in range(128 - len(words))])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", bos_token="<bos>",
                                   unk_token="<unk>")
    fast.chat_template = TEMPLATE
    return fast


def _tiny_gemma(seed: int, dtype=torch.bfloat16):
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    torch.manual_seed(seed)
    config = Gemma3TextConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                              num_attention_heads=2, num_key_value_heads=1, head_dim=32,
                              max_position_embeddings=256, sliding_window=32, pad_token_id=0, eos_token_id=1,
                              bos_token_id=2)
    return Gemma3ForCausalLM(config).to(dtype)


@pytest.mark.smoke
def test_grafted_tiny_gemma_loads_and_generates(tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    base = _tiny_gemma(0)
    it, mid = _tiny_gemma(0), _tiny_gemma(0)
    with torch.no_grad():  # -it and mid are base plus small, different deltas
        for seed, model in ((1, it), (2, mid)):
            g = torch.Generator().manual_seed(seed)
            for p in model.parameters():
                p.add_((0.02 * torch.randn(p.shape, generator=g)).to(p.dtype))
    base.save_pretrained(tmp_path / "base")
    mid.save_pretrained(tmp_path / "mid")
    it.save_pretrained(tmp_path / "it", max_shard_size="100KB")  # sharded, unlike the others
    it.generation_config.max_new_tokens = 7
    it.generation_config.save_pretrained(tmp_path / "it")
    _tokenizer().save_pretrained(tmp_path / "it")
    assert (tmp_path / "it" / "model.safetensors.index.json").is_file()

    config = GraftConfig(mid=str(tmp_path / "mid"), it=str(tmp_path / "it"), base=str(tmp_path / "base"),
                         out=str(tmp_path / "graft"), fsync=False, verify_sample=0, max_shard_size="200KB")
    result = run(config, show_progress=False)
    assert not result.skipped and not result.copied
    out = tmp_path / "graft"
    assert json.loads((out / "config.json").read_text()) == json.loads((tmp_path / "it" / "config.json").read_text())

    model = AutoModelForCausalLM.from_pretrained(out, dtype=torch.bfloat16)
    tokenizer = AutoTokenizer.from_pretrained(out)
    state = model.state_dict()
    for name, p_mid in mid.state_dict().items():  # every parameter, embeddings and norms included
        chat_vector = it.state_dict()[name].float() - base.state_dict()[name].float()
        expected = (p_mid.float() + chat_vector).to(torch.bfloat16)
        assert torch.equal(state[name], expected), name

    messages = [{"role": "user", "content": "hello world"}]
    assert tokenizer.chat_template == TEMPLATE  # the -it model's template travelled with the graft
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert text.endswith("<start_of_turn>model\n")
    prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt", return_dict=True)
    with torch.no_grad():
        generated = model.generate(**prompt, max_new_tokens=5, do_sample=False, min_new_tokens=5)
    assert generated.shape[1] == prompt["input_ids"].shape[1] + 5
    assert model.generation_config.max_new_tokens == 7  # generation_config.json came from -it
