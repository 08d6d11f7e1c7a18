"""Score pairs with a causal LM: log-probability of each member's differing span given the prefix.

Fast path (``score_pairs``): one forward pass over the shared prefix; its KV cache, repeated
for the two members, serves both spans in one batch of two. ``score_pairs_naive`` runs each
member in its own full forward pass; both must agree (tests/probes/test_score.py).
Each result: ``{id, p4_logprob, py3_logprob, p4_tokens, py3_tokens}``.
"""

from __future__ import annotations


def _ids(tokenizer, text: str, bos: bool) -> list[int]:
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    return ([tokenizer.bos_token_id] if bos and tokenizer.bos_token_id is not None else []) + ids


def _span_logprob(logprobs, targets: list[int]) -> float:
    """Sum of log p(target_j) where ``logprobs[j]`` is the distribution predicting target j."""
    return float(sum(logprobs[j, t] for j, t in enumerate(targets)))


def score_pairs(model, tokenizer, pairs: list[dict]) -> list[dict]:
    import torch

    out = []
    model.eval()
    with torch.no_grad():
        for pair in pairs:
            prefix = _ids(tokenizer, pair["prefix"], bos=True)
            spans = [_ids(tokenizer, pair["p4"], False), _ids(tokenizer, pair["py3"], False)]
            first = model(input_ids=torch.tensor([prefix]), use_cache=True)
            cache = first.past_key_values
            cache.batch_repeat_interleave(2)
            width = max(len(s) for s in spans)
            pad = tokenizer.pad_token_id or 0
            ids = torch.tensor([s + [pad] * (width - len(s)) for s in spans])
            mask = torch.tensor([[1] * len(prefix) + [1] * len(s) + [0] * (width - len(s)) for s in spans])
            positions = torch.arange(len(prefix), len(prefix) + width).unsqueeze(0).expand(2, -1)
            logits = model(input_ids=ids, attention_mask=mask, past_key_values=cache,
                           position_ids=positions, use_cache=True).logits
            last = torch.log_softmax(first.logits[0, -1].float(), -1)
            scores = []
            for row, span in enumerate(spans):
                lp = torch.log_softmax(logits[row].float(), -1)
                dists = torch.cat([last.unsqueeze(0), lp[:len(span) - 1]])
                scores.append(_span_logprob(dists, span))
            out.append({"id": pair["id"], "p4_logprob": scores[0], "py3_logprob": scores[1],
                        "p4_tokens": len(spans[0]), "py3_tokens": len(spans[1])})
    return out


def score_pairs_naive(model, tokenizer, pairs: list[dict]) -> list[dict]:
    import torch

    out = []
    model.eval()
    with torch.no_grad():
        for pair in pairs:
            prefix = _ids(tokenizer, pair["prefix"], bos=True)
            row = {"id": pair["id"]}
            for member in ("p4", "py3"):
                span = _ids(tokenizer, pair[member], False)
                logits = model(input_ids=torch.tensor([prefix + span])).logits[0]
                lp = torch.log_softmax(logits.float(), -1)[len(prefix) - 1:len(prefix) - 1 + len(span)]
                row[f"{member}_logprob"] = _span_logprob(lp, span)
                row[f"{member}_tokens"] = len(span)
            out.append(row)
    return out
