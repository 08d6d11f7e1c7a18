"""The one retry policy of OpenAI-compatible endpoints, against a real HTTP server on 127.0.0.1.

The same statuses, the same number of attempts and the same one-line errors for the three users:
the corpus generator (async chat), the episodes' endpoint policy (chat with tools) and the probes'
scorer (completions with prompt log-probabilities). The server is ``ChatServer`` of
tests/chat_server.py.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from chat_server import ChatServer
from py4.endpoint_client import (SERVER_ERROR_ATTEMPTS, TRANSIENT_STATUSES, EndpointError, RetryPolicy, apost_json,
                                 post_json)
from py4.errors import Py4Error


POLICY = RetryPolicy(retries=3, backoff_s=0.0)
OK = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "fine"}}]}


def _sync(url, path="/chat/completions", **kwargs):
    import httpx

    with httpx.Client(base_url=url, timeout=5) as http:
        return post_json(http, path, {"model": "m"}, policy=POLICY, **kwargs)


def _async(url, path="/chat/completions", **kwargs):
    import httpx

    async def go():
        async with httpx.AsyncClient(base_url=url, timeout=5) as http:
            return await apost_json(http, path, {"model": "m"}, policy=POLICY, **kwargs)

    return asyncio.run(go())


CLIENTS = pytest.mark.parametrize("post", [_sync, _async], ids=["sync", "async"])


@CLIENTS
@pytest.mark.parametrize("status", sorted(TRANSIENT_STATUSES))
def test_transient_statuses_are_retried(post, status):
    with ChatServer(lambda body, n: (status, {"error": "busy"}) if n <= 2 else (200, OK)) as server:
        assert post(server.url) == OK
    assert len(server.bodies) == 3


@CLIENTS
def test_a_persistent_transient_failure_stops_after_the_retries(post):
    with ChatServer(lambda body, n: (503, {"error": "overloaded"})) as server:
        with pytest.raises(EndpointError) as caught:
            post(server.url, what="episode P-1, turn 0")
    assert len(server.bodies) == POLICY.retries + 1
    text = str(caught.value)
    assert "\n" not in text and "/v1/chat/completions (episode P-1, turn 0)" in text
    assert "failed after 4 attempts" in text and "HTTP 503" in text and "overloaded" in text


@CLIENTS
def test_a_500_is_retried_once_then_is_the_servers_refusal(post):
    """vLLM answers 500 to an input it cannot process (an empty prompt): asking five times helps nothing."""
    reply = {"error": {"message": "The decoder prompt cannot be empty", "type": "InternalServerError"}}
    with ChatServer(lambda body, n: (500, reply)) as server:
        with pytest.raises(EndpointError) as caught:
            post(server.url, "/completions", what="probe pair P4-01/00/bare")
    assert len(server.bodies) == SERVER_ERROR_ATTEMPTS == 2
    text = str(caught.value)
    assert "\n" not in text
    assert "/v1/completions (probe pair P4-01/00/bare): HTTP 500" in text
    assert "refuses this request" in text and "decoder prompt cannot be empty" in text


@CLIENTS
def test_a_single_500_is_retried(post):
    with ChatServer(lambda body, n: (500, {"error": "hiccup"}) if n == 1 else (200, OK)) as server:
        assert post(server.url) == OK
    assert len(server.bodies) == 2


@CLIENTS
@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_other_statuses_are_refusals_at_once(post, status):
    with ChatServer(lambda body, n: (status, {"error": {"message": "no such\nmodel"}})) as server:
        with pytest.raises(EndpointError) as caught:
            post(server.url)
    assert len(server.bodies) == 1
    reply = '{"error": {"message": "no such\\nmodel"}}'  # the body's JSON escape, not a line break
    assert str(caught.value) == f"{server.url}/chat/completions: HTTP {status}: {reply}"


@CLIENTS
def test_connection_errors_are_retried_then_reported(post):
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    with pytest.raises(EndpointError) as caught:
        post(url)
    assert "failed after 4 attempts: ConnectError" in str(caught.value)


def test_the_error_is_a_user_error():
    assert issubclass(EndpointError, Py4Error) and EndpointError("x").exit_code == 2


def test_the_three_clients_use_this_module():
    """No other retry loop: the corpus, episodes and probes clients post through endpoint_client."""
    root = Path(__file__).resolve().parents[1] / "src" / "py4"
    for rel in ("corpus/llm_client.py", "episodes/endpoint.py", "probes/endpoint.py"):
        source = (root / rel).read_text(encoding="utf-8")
        assert "from py4.endpoint_client import" in source, rel
    # nor anywhere else in the package: every POST to an endpoint goes through endpoint_client
    posting = [str(p.relative_to(root)) for p in root.rglob("*.py") if p.name != "endpoint_client.py"
               and any(s in p.read_text(encoding="utf-8") for s in (".post(", "for attempt in range", "OpenAI("))]
    assert posting == []
