"""Score pairs with a causal LM: log-probability of each member's differing span given the prefix.

Fast path (``score_pairs``): pairs go through the model ``batch_size`` at a time. The
prefixes of a batch run in one forward pass, left-padded (attention mask, position ids
counting real tokens only); that KV cache, repeated for the two members of each pair,
serves all spans in a second pass, right-padded. Each prefix is computed once, and one
batch costs two model calls whatever its size. ``score_pairs_naive`` runs each member in
its own full forward pass, one at a time: the reference both must agree with
(tests/probes/test_score.py) and the benchmark's baseline.

Prefix and spans are tokenized separately (the split points sit on word boundaries), so
the prefix's tokens are the same for both members and the cache is valid for both.
Each result: ``{id, p4_logprob, py3_logprob, p4_tokens, py3_tokens}``.

The context of a prefix is its tokens after the tokenizer's BOS, when it has one. An empty
prefix (a span at the start of its program) is conditioned on the tokenizer's start token
alone (``start_token``): BOS when it has one, else EOS, as lm-evaluation-harness does
(``HFLM.prefix_token_id`` in lm_eval/models/huggingface.py: a custom prefix token, else
``bos_token_id``, else ``eos_token_id``; ``TemplateLM.loglikelihood`` in lm_eval/api/model.py
encodes an empty context as ``[prefix_token_id]``). A tokenizer without a BOS (GLM-4.5's)
would otherwise leave the span's first token without any context to be predicted from. Every
scorer, local and served (py4.probes.endpoint), takes its token ids from ``pair_token_ids``,
so they apply the one rule; ``empty_prefix_context`` is what a probe run records of it.
"""

from __future__ import annotations

BATCH_SIZE = 16  # pairs per model call; 2 x 16 span rows of a 262k vocabulary ~ 0.3 GB of logits per span token


def pair_token_ids(tokenizer, pair: dict) -> tuple[list[int], list[int], list[int]]:
    """(prefix ids with BOS, Python-4 span ids, Python 3 span ids), as every scorer sends them; an
    empty prefix's ids are the start token alone (BOS, else EOS), so no prefix is ever empty."""
    prefix = _ids(tokenizer, pair["prefix"], True) or [start_token(tokenizer)[0]]
    return prefix, _ids(tokenizer, pair["p4"], False), _ids(tokenizer, pair["py3"], False)


def start_token(tokenizer) -> tuple[int, str]:
    """(id, ``"bos"`` or ``"eos"``): the token an empty prefix is conditioned on, lm-evaluation-harness's
    ``prefix_token_id`` (module docstring)."""
    for kind in ("bos", "eos"):
        token_id = getattr(tokenizer, f"{kind}_token_id", None)
        if token_id is not None:
            return token_id, kind
    from py4.errors import Py4Error

    raise Py4Error("the tokenizer has neither a BOS nor an EOS token: an empty probe prefix has no token to "
                   "condition its span on")


def empty_prefix_context(tokenizer) -> dict | None:
    """What conditions an empty prefix, as a probe run's manifest records it: ``{token, id, kind}``
    (``None`` for a tokenizer with neither token, which cannot score one)."""
    from py4.errors import Py4Error

    try:
        token_id, kind = start_token(tokenizer)
    except Py4Error:
        return None
    return {"token": tokenizer.convert_ids_to_tokens(token_id), "id": token_id, "kind": kind}


def _ids(tokenizer, text: str, bos: bool) -> list[int]:
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    return ([tokenizer.bos_token_id] if bos and tokenizer.bos_token_id is not None else []) + ids


def _row(pair_id: str, p4: float, py3: float, p4_tokens: int, py3_tokens: int) -> dict:
    return {"id": pair_id, "p4_logprob": p4, "py3_logprob": py3, "p4_tokens": p4_tokens, "py3_tokens": py3_tokens}


def score_pairs(model, tokenizer, pairs: list[dict], batch_size: int = BATCH_SIZE) -> list[dict]:
    """Span log-probabilities of every pair, ``batch_size`` pairs per pair of model calls."""
    import torch

    model.eval()
    out: list[dict] = []
    with torch.no_grad():
        for start in range(0, len(pairs), max(1, batch_size)):
            out += _score_batch(model, tokenizer, pairs[start:start + max(1, batch_size)])
    return out


def _score_batch(model, tokenizer, pairs: list[dict]) -> list[dict]:
    import torch

    encoded = [pair_token_ids(tokenizer, p) for p in pairs]
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    device = next(model.parameters()).device
    # 1. Prefixes (one token at least: pair_token_ids), left-padded: every prefix ends at column L-1,
    # whose logits predict the first span token.
    width = max(len(e[0]) for e in encoded)
    ids = torch.tensor([[pad] * (width - len(e[0])) + e[0] for e in encoded], device=device)
    mask = torch.tensor([[0] * (width - len(e[0])) + [1] * len(e[0]) for e in encoded], device=device)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    first = model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True, logits_to_keep=1)
    cache = first.cache
    cache.batch_repeat_interleave(2)  # rows 2i and 2i+1: pair i's Python-4 and Python 3 members
    last = torch.log_softmax(first.logits[:, -1].float(), -1).repeat_interleave(2, dim=0)
    # 2. Spans, right-padded after the cached prefix; positions continue each prefix's own count.
    spans = [s for e in encoded for s in e[1:]]
    span_width = max(len(s) for s in spans)
    span_ids = torch.tensor([s + [pad] * (span_width - len(s)) for s in spans], device=device)
    span_mask = torch.tensor([[1] * len(s) + [0] * (span_width - len(s)) for s in spans], device=device)
    prefix_lens = mask.sum(-1).repeat_interleave(2).unsqueeze(1)
    span_positions = prefix_lens + torch.arange(span_width, device=device).unsqueeze(0)
    logits = model(input_ids=span_ids, attention_mask=torch.cat([mask.repeat_interleave(2, dim=0), span_mask], 1),
                   position_ids=span_positions, cache=cache, use_cache=True).logits
    # Distribution for span token j: the prefix's last logits (j = 0), else the span's logits at j-1.
    dists = torch.cat([last.unsqueeze(1), torch.log_softmax(logits[:, :-1].float(), -1)], 1)
    token_lp = dists.gather(-1, span_ids.unsqueeze(-1)).squeeze(-1) * span_mask
    sums = token_lp.sum(-1).tolist()
    return [_row(p["id"], sums[2 * i], sums[2 * i + 1], len(encoded[i][1]), len(encoded[i][2]))
            for i, p in enumerate(pairs)]


def score_pairs_naive(model, tokenizer, pairs: list[dict]) -> list[dict]:
    """Each member in its own full forward pass (prefix + span), one at a time: the reference."""
    import torch

    out = []
    model.eval()
    device = next(model.parameters()).device
    with torch.no_grad():
        for pair in pairs:
            prefix, p4, py3 = pair_token_ids(tokenizer, pair)
            sums = []
            for span in (p4, py3):
                logits = model(input_ids=torch.tensor([prefix + span], device=device)).logits[0]
                lp = torch.log_softmax(logits.float(), -1)[len(prefix) - 1:len(prefix) - 1 + len(span)]
                sums.append(float(lp.gather(-1, torch.tensor(span, device=device).unsqueeze(-1)).sum()))
            out.append(_row(pair["id"], sums[0], sums[1], len(p4), len(py3)))
    return out
