"""Fixtures for the Inspect integration tests: no network, no writes outside tmp dirs.

Inspect writes logs under ./logs and state under the platform's data and cache dirs by
default; every test here points them (and the working directory) at its own tmp dir. Any
attempt to open an internet socket fails the test. Inspect's ``mockllm`` estimates tokens
with tiktoken's o200k_base, which tiktoken downloads on first use: ``offline_tiktoken``
replaces that estimate by a character count for the tests that use mockllm's default
outputs.
"""

from __future__ import annotations

import socket

import pytest

pytest.importorskip("inspect_ai")


@pytest.fixture(autouse=True)
def inspect_sandboxed_dirs(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("INSPECT_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("INSPECT_DISPLAY", "none")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Fail on any connection to an internet address (local AF_UNIX sockets are fine)."""
    real_connect = socket.socket.connect

    def guarded(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            raise AssertionError(f"test tried to reach the network: {address!r}")
        return real_connect(self, address)

    real_getaddrinfo = socket.getaddrinfo

    def resolve(host, *args, **kwargs):
        if host not in (None, "localhost", "127.0.0.1", "::1"):
            raise AssertionError(f"test tried to resolve {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.setattr(socket, "getaddrinfo", resolve)


@pytest.fixture
def offline_tiktoken(monkeypatch):
    from inspect_ai.model import ModelAPI

    async def by_characters(self, text: str) -> int:
        return max(1, len(text) // 4)

    monkeypatch.setattr(ModelAPI, "count_text_tokens", by_characters)


@pytest.fixture(scope="module", autouse=True)
def close_boa_workers():
    yield
    from py4.episodes.pool import close_shared_executors

    close_shared_executors()
