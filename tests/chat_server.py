"""A local OpenAI-compatible server for tests, and the port and process helpers of tests that
start real servers. The server: real HTTP on 127.0.0.1 (ephemeral port), each
POST answered by the test's ``script(body, n)`` and every request body recorded, so clients,
retries, request bodies and reply parsing all run for real."""

from __future__ import annotations

import json
import os
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ChatServer:
    """Answers each request with ``script(body, n)`` -> (status, reply dict); records bodies."""

    def __init__(self, script, models: list[str] | None = None):
        self.script, self.bodies, self.lock = script, [], threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # http.server's name; GET /v1/models, when the test names the served models
                if models is None or self.path != "/v1/models":
                    self.send_error(404)
                    return
                data = json.dumps({"object": "list", "data": [{"id": m, "object": "model"} for m in models]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):  # http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.bodies.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
                    n = len(server.bodies)
                status, reply = server.script(body, n)
                data = json.dumps(reply).encode()
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
