"""Score probe pairs on an OpenAI-compatible completions server that returns prompt log-probabilities.

One ``POST {endpoint}/completions`` per batch of pairs, with ``echo: true``, ``max_tokens:
0`` and ``logprobs: 1``: the server scores the prompts without generating, and
``choices[i].logprobs.token_logprobs`` holds log p(token_j | tokens before j) for every
prompt token (``None`` for the first). vLLM serves exactly this (its ``CompletionRequest``:
``prompt_logprobs`` defaults to ``logprobs`` when ``echo`` is set, and ``echo`` with
``max_tokens == 0`` returns the prompt's log-probabilities only); ``prompt`` may be a list of
texts or a list of token-id lists. Requests go through :mod:`py4.endpoint_client` (one retry
policy; a request answered HTTP 500 twice is the server's refusal, named by its pairs).

- With a tokenizer (``tokenizer=``, the served model's): prompts go as token ids, the
  prefix (with BOS) and each span tokenized exactly as the local scorer does
  (``pair_token_ids``: an empty prefix is the start token alone, BOS else EOS), and a span's
  score is the sum over its last ``len(span)`` positions: the same numbers as
  ``py4.probes.score`` on the same model.
- Without one: prompts go as text, ``prefix``, ``prefix + p4`` and ``prefix + py3``. The
  server tokenizes (adding BOS as it does for any prompt); a span's tokens are those after
  the longest run of tokens the member shares with the prefix alone. Where the tokenizer
  merges the last prefix characters with the span's first ones, that merged token counts
  in the span (``boundary_merged`` in the row).

  A pair with an empty prefix (the probe set has some: a span at the very start of its
  program) sends no prefix prompt: vLLM refuses an empty prompt (HTTP 500). The local scorer
  conditions such a span on the tokenizer's BOS alone, so its tokens are those after what the
  server puts before any text: the leading tokens two different one-character prompts share,
  learnt once per scorer (one request). A server that puts nothing there serves a tokenizer
  without a BOS, whose empty prefixes the local scorer conditions on EOS; a text prompt cannot
  name that token, so the pair is refused by name (score with ``tokenizer=``).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from py4.endpoint_client import EndpointError, RetryPolicy, auth_headers, post_json
from py4.probes.score import BATCH_SIZE, empty_prefix_context, pair_token_ids

# Two prompts whose first text tokens differ in any tokenizer: what their replies share is what
# the server puts before every prompt's text (BOS).
_LEAD_PROBES = ("a = 1", "Z = 2")


class ProbeEndpoint:
    """``endpoint``: base URL up to ``/v1``; ``model``: the served name (vLLM ``--served-model-name``)."""

    def __init__(self, endpoint: str, model: str, *, tokenizer: Any = None, batch_size: int = BATCH_SIZE,
                 concurrency: int = 4, retries: int = 4, timeout_s: float = 300.0, backoff_s: float = 0.5,
                 api_key: str | None = None):
        import httpx

        self.model, self.tokenizer, self.url = model, tokenizer, endpoint.rstrip("/") + "/completions"
        self.batch_size, self.policy = max(1, batch_size), RetryPolicy(max(0, retries), backoff_s)
        self._http = httpx.Client(base_url=endpoint.rstrip("/"), timeout=timeout_s, headers=auth_headers(api_key))
        self._pool = ThreadPoolExecutor(max_workers=max(1, concurrency))
        self._lead_text: list | None = None  # the tokens the server puts before a prompt's text, once learnt
        self._lead_lock = threading.Lock()

    def empty_prefix_context(self) -> dict | None:
        """What conditions an empty prefix (``py4.probes.score.empty_prefix_context``): with a tokenizer
        its start token; in text mode the tokens the server puts before a prompt's text, once learnt
        (``None`` before an empty prefix was scored)."""
        if self.tokenizer is not None:
            return empty_prefix_context(self.tokenizer)
        if not self._lead_text:
            return None
        return {"token": "".join(map(str, self._lead_text)), "id": None, "kind": "server"}

    def score_pairs(self, pairs: list[dict]) -> list[dict]:
        """Rows as ``py4.probes.score.score_pairs`` returns them, in the order of ``pairs``."""
        chunks = [pairs[i:i + self.batch_size] for i in range(0, len(pairs), self.batch_size)]
        return [row for rows in self._pool.map(self._score_chunk, chunks) for row in rows]

    def _score_chunk(self, pairs: list[dict]) -> list[dict]:
        if self.tokenizer is not None:
            encoded = [pair_token_ids(self.tokenizer, p) for p in pairs]
            prompts = [e[0] + span for e in encoded for span in e[1:]]
            lps = self._prompt_logprobs(prompts, _names(pairs))
            rows = []
            for i, (p, (_, p4, py3)) in enumerate(zip(pairs, encoded, strict=True)):
                sums = [_span_sum(lps[2 * i + k][0], len(span), p["id"]) for k, span in enumerate((p4, py3))]
                rows.append(_row(p["id"], sums, [len(p4), len(py3)], merged=False))
            return rows
        prompts = [text for p in pairs for text in ((p["prefix"],) if p["prefix"] else ()) + (
            p["prefix"] + p["p4"], p["prefix"] + p["py3"])]
        lps = iter(self._prompt_logprobs(prompts, _names(pairs)))
        rows = []
        for p in pairs:
            shared_with = None if not p["prefix"] else next(lps)[1]
            sums, counts, merged = [], [], False
            for logprobs, tokens in (next(lps), next(lps)):
                if shared_with is None:  # empty prefix: the span follows what the server puts first
                    shared = self._lead_tokens()
                    if shared == 0:
                        raise EndpointError(f"probe {p['id']}: empty prefix, and the server puts no token (BOS) "
                                            "before a prompt's text: its span is conditioned on the tokenizer's EOS, "
                                            "which a text prompt cannot name: score with the served model's "
                                            "tokenizer (--tokenizer)")
                else:
                    shared = _common_length(shared_with, tokens)
                    merged |= shared < len(shared_with)
                counts.append(len(tokens) - shared)
                sums.append(_span_sum(logprobs, len(tokens) - shared, p["id"]))
            rows.append(_row(p["id"], sums, counts, merged))
        return rows

    def _lead_tokens(self) -> int:
        """How many tokens the server puts before every prompt's text (1 for a BOS, 0 for none)."""
        with self._lead_lock:
            if self._lead_text is None:
                (_, a), (_, b) = self._prompt_logprobs(list(_LEAD_PROBES), "the tokens before a prompt's text")
                self._lead_text = a[:_common_length(a, b)]
            return len(self._lead_text)

    def _prompt_logprobs(self, prompts: list, what: str) -> list[tuple[list, list]]:
        """(token_logprobs, tokens) of each prompt, in order; ``what`` names the request in errors."""
        body = {"model": self.model, "prompt": prompts, "echo": True, "max_tokens": 0, "logprobs": 1,
                "temperature": 0.0}
        data = self._post(body, what)
        try:
            choices = sorted(data["choices"], key=lambda c: c["index"])
            out = [(c["logprobs"]["token_logprobs"], c["logprobs"]["tokens"]) for c in choices]
        except (KeyError, TypeError) as exc:
            raise EndpointError(f"{self.url}: expected choices[].logprobs.token_logprobs "
                                f"(echo with logprobs) in the reply, missing {exc}") from None
        if len(out) != len(prompts):
            raise EndpointError(f"{self.url}: {len(prompts)} prompts sent, "
                                f"{len(out)} choices returned")
        return out

    def _post(self, body: dict[str, Any], what: str) -> dict[str, Any]:
        def refusal(where: str, status: int, text: str) -> str:
            if status >= 500:  # the server failed on this input: no hint about the request's form
                return f"{where}: HTTP {status}: {text}"
            return (f"{where}: HTTP {status}: {text}\n  - probes need prompt log-probabilities: /v1/completions "
                    f"with echo, max_tokens 0 and logprobs (vLLM serves them), and {self.model!r} must be a "
                    f"served model name (vLLM --served-model-name)")

        return post_json(self._http, "/completions", body, policy=self.policy, refusal=refusal, what=what)

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self._http.close()


def _names(pairs: list[dict]) -> str:
    """The pairs a request scores, for its errors: ``probe pair A`` or ``probe pairs A, B, … (N)``."""
    ids = [str(p["id"]) for p in pairs]
    if len(ids) == 1:
        return f"probe pair {ids[0]}"
    shown = ", ".join(ids[:3]) + (", …" if len(ids) > 3 else "")
    return f"probe pairs {shown} ({len(ids)})"


def _common_length(a: list, b: list) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _span_sum(token_logprobs: list, n: int, pair_id: str) -> float:
    tail = token_logprobs[len(token_logprobs) - n:] if n else []
    if n == 0 or len(tail) != n or any(v is None for v in tail):
        raise EndpointError(f"probe {pair_id}: the server returned no log-probability for the span's {n} tokens "
                            f"({len(token_logprobs)} prompt tokens)")
    return float(sum(tail))


def _row(pair_id: str, sums: list[float], counts: list[int], merged: bool) -> dict:
    row = {"id": pair_id, "p4_logprob": sums[0], "py3_logprob": sums[1], "p4_tokens": counts[0],
           "py3_tokens": counts[1]}
    if merged:
        row["boundary_merged"] = True
    return row
