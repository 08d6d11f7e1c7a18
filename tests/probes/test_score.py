"""The shared-prefix fast path scores what the naive full-pass path scores."""

from __future__ import annotations

import pytest

from py4.probes.build import load_probes


@pytest.mark.smoke
def test_fast_path_equals_naive_path_on_tiny_model(tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from py4.probes.score import score_pairs, score_pairs_naive
    from py4.train.tiny_model import TinyModelSpec, build_tiny_model

    pairs = load_probes()[::61]  # every rule family, all three contexts
    chars = sorted({c for p in pairs for k in ("prefix", "p4", "py3") for c in p[k]})
    vocab = {"<pad>": 0, "<bos>": 1, "<eos>": 2, "<end_of_turn>": 3, **{c: i + 4 for i, c in enumerate(chars)}}
    raw = Tokenizer(models.WordLevel(vocab, unk_token="<pad>"))
    raw.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, pad_token="<pad>", bos_token="<bos>", eos_token="<eos>")
    model = build_tiny_model(TinyModelSpec(), tok)
    fast, naive = score_pairs(model, tok, pairs), score_pairs_naive(model, tok, pairs)
    assert [f["id"] for f in fast] == [n["id"] for n in naive]
    for f, n in zip(fast, naive):
        assert f["p4_tokens"] == n["p4_tokens"] and f["py3_tokens"] == n["py3_tokens"]
        assert f["p4_logprob"] == pytest.approx(n["p4_logprob"], abs=1e-3)
        assert f["py3_logprob"] == pytest.approx(n["py3_logprob"], abs=1e-3)
    assert any(f["p4_tokens"] != f["py3_tokens"] for f in fast)  # padding exercised
