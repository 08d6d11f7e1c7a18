"""A cached, concurrency-limited client for an OpenAI-compatible chat endpoint.

Every response is stored on disk under the SHA-256 of its request (model, messages,
temperature, max tokens), so an interrupted run resumes without asking again. Requests go
through :mod:`py4.endpoint_client` (its one retry policy, ``llm.max_retries`` retries with
back-off ``llm.backoff_s``); a failure is an :class:`~py4.endpoint_client.EndpointError`, which
the command line prints as one line (exit 2).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

from py4.corpus.config import LlmSpec
from py4.endpoint_client import EndpointError, RetryPolicy, apost_json, auth_headers


class LlmError(EndpointError):
    """The endpoint's answers cannot make the corpus (no chat completion, no ideas, too many invalid documents)."""


class ChatClient:
    """`await client.chat(messages)` -> the assistant's text. Use inside one event loop."""

    def __init__(self, spec: LlmSpec):
        import httpx
        self.spec = spec
        self.cache = Path(spec.cache_dir)
        self.cache.mkdir(parents=True, exist_ok=True)
        headers = auth_headers(env=spec.api_key_env)
        self._policy = RetryPolicy(spec.max_retries, spec.backoff_s)
        self._http = httpx.AsyncClient(base_url=spec.base_url.rstrip("/"), headers=headers,
                                       timeout=spec.request_timeout_s)
        self._limit = asyncio.Semaphore(spec.concurrency)
        self.cache_hits = 0

    async def close(self) -> None:
        await self._http.aclose()

    def _path(self, body: dict) -> Path:
        key = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        return self.cache / key[:2] / f"{key}.json"

    async def chat(self, messages: list[dict], temperature: float | None = None) -> str:
        """The assistant message's content. Raises LlmError after `max_retries` failed retries."""
        body = {"model": self.spec.model, "messages": messages, "max_tokens": self.spec.max_tokens,
                "temperature": self.spec.temperature if temperature is None else temperature}
        path = self._path(body)
        if path.exists():
            self.cache_hits += 1
            return json.loads(path.read_text(encoding="utf-8"))["content"]
        async with self._limit:
            content = await self._post(body)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"request": body, "content": content}), encoding="utf-8")
        tmp.replace(path)  # atomic: a killed run never leaves half a response behind
        return content

    async def _post(self, body: dict) -> str:
        data = await apost_json(self._http, "/chat/completions", body, policy=self._policy, what="corpus chat")
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            content = None
        if not isinstance(content, str):
            raise LlmError(f"{self.spec.base_url}: not a chat completion: {json.dumps(data)[:300]}")
        return content
