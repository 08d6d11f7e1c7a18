"""A cached, retrying, concurrency-limited client for an OpenAI-compatible chat endpoint.

Every response is stored on disk under the SHA-256 of its request (model, messages,
temperature, max tokens), so an interrupted run resumes without asking again. Retries:
connection errors, timeouts, 429 and 5xx, with exponential backoff (`backoff_s * 2**k`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from pathlib import Path

from py4.corpus.config import LlmSpec


class LlmError(RuntimeError):
    """The endpoint failed after every retry, or answered something that is not a chat completion."""


class ChatClient:
    """`await client.chat(messages)` -> the assistant's text. Use inside one event loop."""

    def __init__(self, spec: LlmSpec):
        import httpx
        self.spec = spec
        self.cache = Path(spec.cache_dir)
        self.cache.mkdir(parents=True, exist_ok=True)
        headers = {}
        if spec.api_key_env and os.environ.get(spec.api_key_env):
            headers["Authorization"] = f"Bearer {os.environ[spec.api_key_env]}"
        self._http = httpx.AsyncClient(base_url=spec.base_url.rstrip("/"), headers=headers,
                                       timeout=spec.request_timeout_s)
        self._limit = asyncio.Semaphore(spec.concurrency)
        self.requests = 0  # HTTP requests actually sent (retries included)
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
        import httpx
        last = "no attempt"
        for attempt in range(self.spec.max_retries + 1):
            if attempt:
                await asyncio.sleep(self.spec.backoff_s * 2 ** (attempt - 1))
            self.requests += 1
            try:
                response = await self._http.post("/chat/completions", json=body)
            except (httpx.TransportError, httpx.TimeoutException) as exc:
                last = f"{type(exc).__name__}: {exc}"
                continue
            if response.status_code == 429 or response.status_code >= 500:
                last = f"HTTP {response.status_code}"
                continue
            if response.status_code != 200:
                raise LlmError(f"{self.spec.base_url}: HTTP {response.status_code}: {response.text[:300]}")
            try:
                return response.json()["choices"][0]["message"]["content"]
            except (ValueError, KeyError, IndexError, TypeError):
                raise LlmError(f"{self.spec.base_url}: not a chat completion: {response.text[:300]}") from None
        raise LlmError(f"{self.spec.base_url}: failed after {self.spec.max_retries} retries ({last})")
