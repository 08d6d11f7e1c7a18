"""An OpenAI-compatible chat-completions endpoint as a policy (a vLLM or ``transformers serve`` server).

Each turn is one ``POST {endpoint}/chat/completions`` with ``tools``; ``model`` is the
*served* name (vLLM: ``--served-model-name`` or a LoRA module's name; ``transformers
serve``: the path it was started with), never a weights folder the server does not know.
Tool calls arrive in one of two ways, and both are read:

- as OpenAI ``tool_calls``, when the server parses them (vLLM with ``--enable-auto-tool-choice
  --tool-call-parser gemma4|glm45``; ``transformers serve`` for Gemma-4, whose response
  schema it knows);
- as text in ``content``, when it does not (``transformers serve`` for GLM-4.5): read in the
  model family's own format (``family``: ``py4.episodes.parsing.parse_assistant_text``;
  Gemma-4 ``<|tool_call>call:NAME{…}<tool_call|>``, GLM-4.5 ``<tool_call>NAME<arg_key>…``;
  None: ``<tool_call>{json}</tool_call>`` blocks).

Requests of a batch run concurrently (``concurrency``) through :mod:`py4.endpoint_client`
(its one retry policy: transient failures retried with back-off, HTTP 500 once); a refusal
(400, 404, …) raises :class:`~py4.endpoint_client.EndpointError` at once, saying what the
server needs (:func:`explain_refusal`).

It lives with the episodes, below training, because evaluation (``policy.name: endpoint``),
EFT replay generation (``py4.train.eft_data``) and the probes' scorer all use it.
"""

from __future__ import annotations

import json
import zlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from py4.endpoint_client import EndpointError, RetryPolicy, auth_headers, post_json
from py4.episodes.parsing import ParsedTurn, check_call, parse_assistant_text
from py4.episodes.policy import Turn, TurnRequest, approximate_tokens

# The sampling fields each server engine takes in a chat-completions request.
ENGINES = {"vllm": ("temperature", "top_p", "top_k", "min_p", "repetition_penalty"),
           "transformers": ("temperature", "top_p")}


class EndpointPolicy:
    """``endpoint``: base URL up to ``/v1`` (``http://host:8000/v1``); ``model``: the served name.

    ``api_key`` defaults to the ``OPENAI_API_KEY`` environment variable (none is sent when
    unset). ``tokenizer`` (optional) counts tool-result tokens; else 4 characters a token.
    ``family`` (gemma4, glm45, …) is the format of tool calls written as text in ``content``.
    """

    def __init__(self, endpoint: str, model: str, *, temperature: float = 0.7, top_p: float = 1.0,
                 top_k: int = 0, min_p: float = 0.0, repetition_penalty: float = 1.0,
                 seed: int = 0, concurrency: int = 8, retries: int = 4, timeout_s: float = 300.0,
                 backoff_s: float = 0.5, api_key: str | None = None, tokenizer: Any = None,
                 family: str | None = None, engine: str = "vllm"):
        import httpx

        if engine not in ENGINES:
            raise ValueError(f"engine {engine!r}: expected one of {', '.join(ENGINES)}")
        self.name = f"endpoint:{model}"
        self.model, self.temperature, self.top_p, self.seed = model, temperature, top_p, seed
        # Every sampling field is sent: one left out is filled from the served model's generation_config.json.
        # transformers serve refuses fields beyond OpenAI's (HTTP 422): there the model's own values apply.
        wanted = {"temperature": temperature, "top_p": top_p, "top_k": top_k, "min_p": min_p,
                  "repetition_penalty": repetition_penalty}
        self.sampling = {k: v for k, v in wanted.items() if k in ENGINES[engine]}
        left = {k: "not sent (transformers serve has no such field): the served generation_config.json's"
                for k in wanted if k not in self.sampling}
        self.sampling_effective = {**self.sampling, **left,
                                   "max_tokens": "per turn: the episode's token budget left",
                                   "seed": f"{seed} + crc32(episode key/turn) per request",
                                   "engine": f"{engine}: OpenAI-compatible chat completions"}
        self.concurrency, self.policy = max(1, concurrency), RetryPolicy(max(0, retries), backoff_s)
        self.tokenizer, self.family = tokenizer, family
        parse_assistant_text("", family)  # an unknown family fails here, before any request
        self._http = httpx.Client(base_url=endpoint.rstrip("/"), timeout=timeout_s, headers=auth_headers(api_key))
        self._pool = ThreadPoolExecutor(max_workers=self.concurrency)

    def act(self, requests: list[TurnRequest]) -> list[Turn]:
        return list(self._pool.map(self._turn, requests))

    def _turn(self, request: TurnRequest) -> Turn:
        body = {
            "model": self.model, "messages": to_openai_messages(request.messages), "tools": request.tools,
            **self.sampling, "max_tokens": request.max_new_tokens,
            "seed": (self.seed + zlib.crc32(f"{request.key}/{request.turn}".encode())) % 2**31,
            "chat_template_kwargs": {"enable_thinking": request.enable_thinking},
        }
        data = self._post(body, f"episode {request.key}, turn {request.turn}")
        try:
            choice = data["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError):
            raise EndpointError(f"unexpected chat-completions reply: {json.dumps(data)[:500]}") from None
        parsed = turn_from_message(message, self.family)
        usage = data.get("usage") or {}
        text = message.get("content") or ""
        tokens = usage.get("completion_tokens")
        if not isinstance(tokens, int):
            tokens = self.count_tokens(text + "".join(c.raw for c in parsed.calls))
        return Turn(text, parsed, tokens, choice.get("finish_reason") != "length",
                    extra={"finish_reason": choice.get("finish_reason"), "api_tool_calls": message.get("tool_calls")})

    def _post(self, body: dict[str, Any], what: str = "") -> dict[str, Any]:
        return post_json(self._http, "/chat/completions", body, policy=self.policy, what=what,
                         refusal=lambda where, status, text: explain_refusal(where, status, text, self.model,
                                                                             self.served_models()))

    def served_models(self) -> list[str] | None:
        """The names the server serves (GET /models), or None when it does not say."""
        import httpx

        try:
            reply = self._http.get("/models")
            return [m["id"] for m in reply.json()["data"]] if reply.status_code == 200 else None
        except (httpx.HTTPError, ValueError, KeyError, TypeError):
            return None

    def count_tokens(self, text: str) -> int:
        if self.tokenizer is None:
            return approximate_tokens(text)
        return len(self.tokenizer.encode(text, add_special_tokens=False))

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self._http.close()


def explain_refusal(url: str, status: int, text: str, model: str, served: list[str] | None) -> str:
    """The error for a request the server refused (not retried), with what the server needs."""
    hints = []
    low = text.lower()
    if served is not None and model not in served:
        hints.append(f"the server serves {', '.join(map(repr, served)) or 'nothing'}, not {model!r}: send the served "
                     "name (vLLM: --served-model-name, or the name of --lora-modules NAME=PATH; transformers serve: "
                     "the path it was started with), not a weights folder")
    if "lora" in low or "rank" in low:
        hints.append("an adapter is served as a LoRA module: vllm serve BASE --enable-lora --max-lora-rank 64 "
                     "--lora-modules NAME=ADAPTER (vLLM's default maximum rank is 16; the campaign's LoRA is r 64)")
    if "context" in low or "max_tokens" in low or "max-model-len" in low or "too long" in low:
        hints.append("the prompt plus max_tokens must fit the server's context (vllm --max-model-len)")
    if (status == 400 and not hints) or "tool" in low:
        hints.append("a vLLM server answers HTTP 400 to requests with tools unless it was started with "
                     "--enable-auto-tool-choice --tool-call-parser gemma4 (Gemma-4) or glm45 (GLM-4.5)")
    return f"{url}: HTTP {status}: {text}" + "".join(f"\n  - {h}" for h in hints)


def turn_from_message(message: dict[str, Any], family: str | None = None) -> ParsedTurn:
    """Structured ``tool_calls`` first, then calls written as text in the content, in ``family``'s format."""
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict):
            calls.append(check_call(None, None, json.dumps(call, default=str)))
            continue
        raw = json.dumps({"name": function.get("name"), "arguments": function.get("arguments")}, ensure_ascii=False)
        calls.append(check_call(function.get("name"), function.get("arguments"), raw, call.get("id")))
    textual = parse_assistant_text(message.get("content") or "", family)
    reasoning = message.get("reasoning_content") or message.get("reasoning") or textual.reasoning
    return ParsedTurn(textual.content, reasoning, calls + textual.calls)


def to_openai_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The driver's messages in the wire format: arguments as JSON strings, no reasoning field.

    The reply to a malformed call answers no ``tool_calls`` entry (the call is text in the
    assistant's content), and strict servers reject a ``tool`` message with an unknown
    ``tool_call_id``: such replies go out as ``user`` messages.
    """
    out, open_ids = [], set()
    for m in messages:
        m = {k: v for k, v in m.items() if k != "reasoning_content"}
        if m.get("role") == "assistant":
            open_ids = {c["id"] for c in m.get("tool_calls") or []}
        if m.get("tool_calls"):
            m["tool_calls"] = [{"id": c["id"], "type": "function",
                                "function": {"name": c["function"]["name"],
                                             "arguments": json.dumps(c["function"]["arguments"], ensure_ascii=False)}}
                               for c in m["tool_calls"]]
        if m.get("role") == "tool" and m.get("tool_call_id") not in open_ids:
            m = {"role": "user", "content": f"[tool] {m['content']}"}
        out.append(m)
    return out
