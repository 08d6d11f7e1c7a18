"""A local stand-in of the Hub endpoints `py4.hub.push` reaches (docs/hub.md names it as
such): create a repository, validate a card's YAML, create a branch, pre-upload and commit.

It keeps what a commit carried in memory, per repository and branch, so a test can read
back exactly the files an upload sent. Every file is answered "regular" at pre-upload, so
contents travel inside the commit as the real Hub receives small files.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml

_REPO = r"/api/(model|dataset)s/([^/]+/[^/]+)"


class HubStandIn:
    def __init__(self):
        self.repos: dict[tuple[str, str], dict] = {}  # (type, id) -> {"visibility", "branches": {name: {path: bytes}}}
        self.requests: list[str] = []
        self.refuse_commits = False
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> "HubStandIn":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()

    def files(self, repo_type: str, repo_id: str, branch: str = "main") -> dict[str, bytes]:
        return self.repos[(repo_type, repo_id)]["branches"][branch]

    def _handler(self):
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _reply(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                hub.requests.append(self.path.split("?")[0])
                path = self.path.split("?")[0]
                if path == "/api/repos/create":
                    args = json.loads(body)
                    kind = args.get("type", "model")
                    repo_id = f"{args['organization']}/{args['name']}" if args.get("organization") else args["name"]
                    hub.repos.setdefault((kind, repo_id), {"visibility": args.get("visibility"),
                                                           "branches": {"main": {}}})
                    return self._reply(200, {"url": f"{hub.endpoint}/{repo_id}"})
                if path == "/api/validate-yaml":
                    content = json.loads(body)["content"]
                    front = content.split("---")[1] if content.startswith("---") else ""
                    try:
                        yaml.safe_load(front)
                    except yaml.YAMLError as exc:
                        return self._reply(400, {"error": f"invalid YAML: {exc}"})
                    return self._reply(200, {"errors": [], "warnings": []})
                match = re.fullmatch(_REPO + r"/(branch|preupload|commit)/(.+)", path)
                if not match:
                    return self._reply(404, {"error": f"no such endpoint {path}"})
                kind, repo_id, action, revision = match.groups()
                repo = hub.repos.get((kind, repo_id))
                if repo is None:
                    return self._reply(404, {"error": "Repository not found"})
                if action == "branch":
                    repo["branches"].setdefault(revision, dict(repo["branches"]["main"]))
                    return self._reply(200, {})
                if action == "preupload":
                    files = json.loads(body)["files"]
                    return self._reply(200, {"files": [{"path": f["path"], "uploadMode": "regular",
                                                        "shouldIgnore": False} for f in files]})
                if hub.refuse_commits:
                    return self._reply(403, {"error": "You don't have the rights to commit here"})
                branch = repo["branches"].get(revision)
                if branch is None:
                    return self._reply(404, {"error": f"Revision not found: {revision}"})
                for line in body.splitlines():
                    item = json.loads(line)
                    if item["key"] == "file":
                        branch[item["value"]["path"]] = base64.b64decode(item["value"]["content"])
                oid = hashlib.sha1(body).hexdigest()
                return self._reply(200, {"commitUrl": f"{hub.endpoint}/{repo_id}/commit/{oid}",
                                         "commitOid": oid})

        return Handler
