"""A local OpenAI-compatible server for tests, and the port and process helpers of tests that
start real servers. The server: real HTTP on 127.0.0.1 (ephemeral port), each
POST answered by the test's ``script(body, n)`` and every request body recorded, each GET by its
``get(path)``, so clients, retries, request bodies and reply parsing all run for real."""

from __future__ import annotations

import json
import os
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ChatServer:
    """Answers each POST with ``script(body, n)`` -> (status, reply dict) and records the bodies;
    each GET with ``get(path)`` -> (status, reply dict, or None for an empty body), by default
    ``/v1/models`` listing ``models`` (when the test names them) and 404 for anything else."""

    def __init__(self, script=None, models: list[str] | None = None, get=None):
        self.script, self.bodies, self.lock = script, [], threading.Lock()
        server = self

        def list_models(path: str) -> tuple[int, dict | None]:
            if models is None or path != "/v1/models":
                return 404, {"detail": "Not Found"}
            return 200, {"object": "list", "data": [{"id": m, "object": "model"} for m in models]}

        answer_get = get or list_models

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # http.server's name
                self._reply(*answer_get(self.path.split("?", 1)[0]))

            def do_POST(self):  # http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.bodies.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
                    n = len(server.bodies)
                self._reply(*server.script(body, n))

            def _reply(self, status: int, reply: dict | None) -> None:
                data = b"" if reply is None else json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (for a real server a test starts)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def alive(pid: int) -> bool:
    """Whether process ``pid`` still exists (a stopped server must not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
