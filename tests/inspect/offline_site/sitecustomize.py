"""Network off for a subprocess (on its PYTHONPATH): what an offline machine or CI answers.

Python imports ``sitecustomize`` at start-up, so a command run with this folder on
``PYTHONPATH`` (``inspect eval …`` in tests/inspect/test_cli_offline.py) cannot resolve or
connect to an internet address. It fails as an offline machine fails (``gaierror``,
``ENETUNREACH``), so the command's own error handling is what is tested, and it appends
every address it refused to the file named by ``PY4_TEST_NETWORK_LOG`` so that the test
can say exactly what tried to reach the network. Local sockets (AF_UNIX, loopback) work.
Boa's workers start with ``python -I -S`` and never import this file.
"""

import errno
import os
import socket

_LOCAL = (None, "localhost", "127.0.0.1", "::1")
_real_connect = socket.socket.connect
_real_getaddrinfo = socket.getaddrinfo


def _note(what: str) -> None:
    path = os.environ.get("PY4_TEST_NETWORK_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(what + "\n")


def _getaddrinfo(host, *args, **kwargs):
    if host not in _LOCAL:
        _note(f"resolve {host}")
        raise socket.gaierror(socket.EAI_NONAME, f"network is off in this test (resolving {host!r})")
    return _real_getaddrinfo(host, *args, **kwargs)


def _connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in _LOCAL:
        _note(f"connect {address!r}")
        raise OSError(errno.ENETUNREACH, f"network is off in this test (connecting to {address!r})")
    return _real_connect(self, address)


socket.getaddrinfo = _getaddrinfo
socket.socket.connect = _connect
