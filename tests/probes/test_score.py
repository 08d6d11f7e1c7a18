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


def _span_logprob_by_hand(model, context: list[int], span: list[int]) -> float:
    """log P(span | context) from one full forward pass over context + span."""
    import torch

    ids = context + span
    with torch.no_grad():
        lp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].float(), -1)
    return float(sum(lp[j - 1, ids[j]] for j in range(len(context), len(ids))))


@pytest.mark.smoke
def test_an_empty_prefix_without_a_bos_is_conditioned_on_eos_alone(pairs):
    """A tokenizer without a BOS (GLM-4.5's): an empty prefix's span is scored given [EOS], as
    lm-evaluation-harness conditions an empty context, in a batch with other prefixes and in a
    batch of empty prefixes only."""
    from py4.probes.score import empty_prefix_context, score_pairs, score_pairs_naive

    empty = [p for p in load_probes() if not p["prefix"]][:3]
    others = [p for p in pairs if p["prefix"]][:3]
    model, tok = char_model(empty + others, bos=False)
    assert tok.bos_token_id is None and tok.eos_token_id is not None
    assert empty_prefix_context(tok) == {"token": "<eos>", "id": tok.eos_token_id, "kind": "eos"}
    mixed = score_pairs(model, tok, others + empty, batch_size=8)
    only_empty = score_pairs(model, tok, empty, batch_size=8)
    naive = score_pairs_naive(model, tok, empty)
    for rows in (mixed[len(others):], only_empty, naive):
        for row, pair in zip(rows, empty, strict=True):
            for member in ("p4", "py3"):
                span = tok(pair[member], add_special_tokens=False)["input_ids"]
                assert row[f"{member}_tokens"] == len(span)
                want = _span_logprob_by_hand(model, [tok.eos_token_id], span)
                assert row[f"{member}_logprob"] == pytest.approx(want, abs=1e-4), (pair["id"], member)
    for row, pair in zip(mixed[:len(others)], others, strict=True):  # a non-empty prefix: its tokens, no EOS
        span = tok(pair["p4"], add_special_tokens=False)["input_ids"]
        prefix = tok(pair["prefix"], add_special_tokens=False)["input_ids"]
        assert row["p4_logprob"] == pytest.approx(_span_logprob_by_hand(model, prefix, span), abs=1e-4)


@pytest.mark.smoke
def test_an_empty_prefix_with_a_bos_is_conditioned_on_bos_alone():
    from py4.probes.score import empty_prefix_context, score_pairs

    empty = [p for p in load_probes() if not p["prefix"]][:2]
    model, tok = char_model(empty)
    assert empty_prefix_context(tok) == {"token": "<bos>", "id": tok.bos_token_id, "kind": "bos"}
    for row, pair in zip(score_pairs(model, tok, empty), empty, strict=True):
        span = tok(pair["p4"], add_special_tokens=False)["input_ids"]
        assert row["p4_logprob"] == pytest.approx(_span_logprob_by_hand(model, [tok.bos_token_id], span), abs=1e-4)
