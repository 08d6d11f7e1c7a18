"""The one HTTP client of OpenAI-compatible endpoints (vLLM, ``transformers serve``, hosted APIs).

The corpus generator (chat completions, asynchronous), the endpoint policy of the episodes
(chat completions with tools) and the probes' scorer (completions with prompt
log-probabilities) all post through :func:`post_json` / :func:`apost_json`, so a server
behaves the same to each. The retry policy:

- transient — a connection error or timeout, a reply that is not JSON, HTTP 408, 409, 429,
  502, 503, 504: retried ``retries`` times, waiting ``backoff_s * 2**k`` before retry ``k``;
- HTTP 500: retried once. A server that answers 500 to the same request twice refuses that
  request (vLLM answers 500 to inputs it cannot process, e.g. an empty prompt): it is
  reported as a refusal, not retried further;
- any other status (400, 401, 404, 422, …): a refusal at once.

Every failure is an :class:`EndpointError` (a :class:`~py4.errors.Py4Error`: the command line
prints it and exits 2) whose first line names the URL, the request (``what``), the status and
an excerpt of the reply; a caller's ``refusal`` may add lines saying what the server needs.

It sits in the foundation layer because three layers use it and it needs nothing of py4 but
the error base; httpx is imported when a client is made.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from py4.errors import Py4Error

__all__ = ["EndpointError", "RetryPolicy", "TRANSIENT_STATUSES", "SERVER_ERROR_ATTEMPTS", "post_json",
           "apost_json", "auth_headers", "excerpt"]

TRANSIENT_STATUSES = frozenset({408, 409, 429, 502, 503, 504})
SERVER_ERROR_ATTEMPTS = 2
"""Requests answered HTTP 500 this many times are the server's refusal."""

Refusal = Callable[[str, int, str], str]
"""(where, status, reply excerpt) -> the error message."""


class EndpointError(Py4Error, RuntimeError):
    """The endpoint refused a request or kept failing after the retries."""


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 4
    """Retries of a transient failure (so at most ``retries + 1`` attempts)."""
    backoff_s: float = 0.5
    """Wait before retry k: ``backoff_s * 2**k``."""

    def delay(self, retry: int) -> float:
        return self.backoff_s * 2 ** retry


def excerpt(text: str, limit: int = 300) -> str:
    """``text`` on one line (whitespace runs collapsed), cut to ``limit`` characters."""
    flat = re.sub(r"\s+", " ", text or "").strip()
    return flat if len(flat) <= limit else flat[:limit] + "…"


def auth_headers(api_key: str | None = None, env: str | None = "OPENAI_API_KEY") -> dict[str, str]:
    """The bearer header for ``api_key`` (default: the environment variable ``env``); none when unset."""
    key = api_key if api_key is not None else (os.environ.get(env) if env else None)
    return {"Authorization": f"Bearer {key}"} if key else {}


def _default_refusal(where: str, status: int, text: str) -> str:
    return f"{where}: HTTP {status}: {text}"


class _Attempts:
    """The retry policy applied to one request's attempts, one outcome at a time."""

    def __init__(self, where: str, policy: RetryPolicy, refusal: Refusal | None):
        self.where, self.policy, self.refusal = where, policy, refusal or _default_refusal
        self.attempts = self.server_errors = 0
        self.last = "no attempt"

    def judge(self, response: Any = None, error: BaseException | None = None) -> dict[str, Any] | None:
        """The reply's JSON object when done, None to retry; raises EndpointError when final."""
        self.attempts += 1
        if error is not None:
            self.last = f"{type(error).__name__}: {excerpt(str(error), 200)}"
        elif response.status_code == 200:
            try:
                data = response.json()
            except ValueError:
                self.last = f"reply is not JSON: {excerpt(response.text, 200)!r}"
            else:
                if isinstance(data, dict):
                    return data
                self.last = f"reply is not a JSON object: {excerpt(response.text, 200)!r}"
        elif response.status_code in TRANSIENT_STATUSES:
            self.last = f"HTTP {response.status_code}: {excerpt(response.text, 200)}"
        elif response.status_code == 500:
            self.server_errors += 1
            if self.server_errors >= SERVER_ERROR_ATTEMPTS or self.attempts > self.policy.retries:
                times = "twice" if self.server_errors > 1 else "once, no retry left"
                raise EndpointError(self.refusal(self.where, 500, f"(answered {times}; the server refuses this "
                                                                  f"request) {excerpt(response.text)}"))
            self.last = f"HTTP 500: {excerpt(response.text, 200)}"
        else:
            raise EndpointError(self.refusal(self.where, response.status_code, excerpt(response.text, 500)))
        if self.attempts > self.policy.retries:
            raise EndpointError(f"{self.where}: failed after {self.attempts} attempts: {self.last}")
        return None

    def wait_s(self) -> float:
        return self.policy.delay(self.attempts - 1)


def _where(http: Any, path: str, what: str) -> str:
    url = str(http.base_url).rstrip("/") + path
    return f"{url} ({what})" if what else url


def post_json(http: Any, path: str, body: dict[str, Any], *, policy: RetryPolicy = RetryPolicy(),
              refusal: Refusal | None = None, what: str = "") -> dict[str, Any]:
    """POST ``body`` to ``path`` of an ``httpx.Client``'s server; the JSON reply, per the module's policy.

    ``what`` names the request in errors (e.g. the probe pairs it scores).
    """
    import httpx

    attempts = _Attempts(_where(http, path, what), policy, refusal)
    while True:
        try:
            response = http.post(path, json=body)
        except httpx.TransportError as exc:
            data = attempts.judge(error=exc)
        else:
            data = attempts.judge(response)
        if data is not None:
            return data
        time.sleep(attempts.wait_s())


async def apost_json(http: Any, path: str, body: dict[str, Any], *, policy: RetryPolicy = RetryPolicy(),
                     refusal: Refusal | None = None, what: str = "") -> dict[str, Any]:
    """:func:`post_json` for an ``httpx.AsyncClient``."""
    import httpx

    attempts = _Attempts(_where(http, path, what), policy, refusal)
    while True:
        try:
            response = await http.post(path, json=body)
        except httpx.TransportError as exc:
            data = attempts.judge(error=exc)
        else:
            data = attempts.judge(response)
        if data is not None:
            return data
        await asyncio.sleep(attempts.wait_s())
