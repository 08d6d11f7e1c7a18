"""The batched shared-prefix scorer scores what the naive full-pass scorer scores."""

from __future__ import annotations

import warnings

import pytest

from py4.problems.probe_set.build import load_probes
from probes_tiny import char_model


@pytest.fixture(scope="module")
def pairs():
    return load_probes()[::61]  # every rule family, all three contexts, prefixes of many lengths


@pytest.fixture(scope="module")
def model_and_naive(pairs):
    from py4.probes.score import score_pairs_naive

    model, tok = char_model(pairs)
    return model, tok, score_pairs_naive(model, tok, pairs)


@pytest.mark.smoke
@pytest.mark.parametrize("batch_size", [1, 5, 32])
def test_batched_shared_prefix_equals_naive_path(pairs, model_and_naive, batch_size):
    from py4.probes.score import score_pairs

    model, tok, naive = model_and_naive
    fast = score_pairs(model, tok, pairs, batch_size=batch_size)
    assert [f["id"] for f in fast] == [n["id"] for n in naive] == [p["id"] for p in pairs]
    for f, n in zip(fast, naive, strict=True):
        assert f["p4_tokens"] == n["p4_tokens"] and f["py3_tokens"] == n["py3_tokens"]
        assert f["p4_logprob"] == pytest.approx(n["p4_logprob"], abs=1e-3)
        assert f["py3_logprob"] == pytest.approx(n["py3_logprob"], abs=1e-3)
    assert any(f["p4_tokens"] != f["py3_tokens"] for f in fast)  # span padding exercised
    assert len({len(p["prefix"]) for p in pairs}) > 1  # prefix padding exercised


@pytest.mark.smoke
def test_batched_scorer_with_a_sliding_window_shorter_than_the_prefixes(pairs):
    """Sliding-window layers crop their cache: left padding must still line up with the real tokens."""
    from py4.probes.score import score_pairs, score_pairs_naive

    model, tok = char_model(pairs, sliding_window=16)
    assert max(len(p["prefix"]) for p in pairs) > 16
    fast, naive = score_pairs(model, tok, pairs, batch_size=8), score_pairs_naive(model, tok, pairs)
    for f, n in zip(fast, naive, strict=True):
        assert f["p4_logprob"] == pytest.approx(n["p4_logprob"], abs=1e-3)
        assert f["py3_logprob"] == pytest.approx(n["py3_logprob"], abs=1e-3)


@pytest.mark.smoke
def test_scorer_uses_the_cache_argument_not_the_deprecated_past_key_values(pairs, model_and_naive):
    from py4.probes.score import score_pairs

    model, tok, _ = model_and_naive
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        score_pairs(model, tok, pairs[:3], batch_size=3)
    assert not [w for w in caught if "past_key_values" in str(w.message)]


@pytest.mark.smoke
def test_batched_scorer_through_a_lora_adapter(pairs):
    """EFT doses are scored as base + adapter (PeftModel): the cache and logits_to_keep pass through."""
    from peft import LoraConfig, get_peft_model

    from py4.probes.score import score_pairs, score_pairs_naive

    model, tok = char_model(pairs[:6])
    lora = get_peft_model(model, LoraConfig(r=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False))
    fast, naive = score_pairs(lora, tok, pairs[:6], batch_size=3), score_pairs_naive(lora, tok, pairs[:6])
    for f, n in zip(fast, naive, strict=True):
        assert f["p4_logprob"] == pytest.approx(n["p4_logprob"], abs=1e-3)
        assert f["py3_logprob"] == pytest.approx(n["py3_logprob"], abs=1e-3)
