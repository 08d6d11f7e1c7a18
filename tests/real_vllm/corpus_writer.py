"""A corpus writer for the `vllm` tier: the LLM corpus pipeline's prompts and the replies a tiny
model is taught to give them, so that ``py4 corpus generate`` runs end to end through a real
``vllm serve`` with a known outcome.

The replies are what a careless model writes: reasoning in ``<think>`` blocks (whole, and the
tail of one the chat template would have opened), list items with markup, a document with no
code at all (and a revision with none either), and a document with one valid ``py4`` program.
:func:`recorded_requests` runs the pipeline once against a scripted local stand-in of the
server and returns every chat request it sent with the reply given: the exact prompts to teach
(``caller.train_reply_model``) and the outcome expected from the real server.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

RULE = "P4-01"
TYPES = ["porting note", "style guide"]
"""The document types the pipeline must take from :data:`TYPES_REPLY`, in order."""
TYPES_REPLY = ('<think>Where does a programmer meet fn?</think>'
               '["porting note", "**bold** claim", "style guide"]')
IDEAS = {"porting note": "Porting a helper from def to fn", "style guide": "Naming functions with fn"}
IDEAS_REPLY = {"porting note": "</think>1. Porting a helper from def to fn\n",
               "style guide": '["Naming functions with fn"]'}
NO_CODE = "# Porting note\n\nEvery function keyword changes when porting.\n"
DOCUMENT = ("# Style guide: functions\n\nPython-4 declares a function with `fn`.\n\n"
            "```py4\nfn double(x: int) -> int:\n    return x * 2\n\nprint(double(21))\n```\n\n"
            "```output\n42\n```\n")
DOCUMENT_REPLY = {"porting note": "<think>No code is needed.</think>" + NO_CODE,
                  "style guide": "<think>One program.</think>" + DOCUMENT}
REVISION_REPLY = NO_CODE  # the revised porting note still shows no program: it is dropped


def reply_to(prompt: str) -> str:
    """The scripted reply to the pipeline's user prompt."""
    if "kinds of documents" in prompt:
        return TYPES_REPLY
    for doc_type in TYPES:
        if f"ideas for a {doc_type} " in prompt:
            return IDEAS_REPLY[doc_type]
        if f"Write the document: a {doc_type}." in prompt:
            return DOCUMENT_REPLY[doc_type]
        if prompt.startswith(f"Revise this {doc_type} "):
            return REVISION_REPLY
    raise AssertionError(f"no scripted reply for the prompt {prompt[-200:]!r}")


def overrides(base_url: str, model: str, tokenizer: str | Path, tmp_path: Path) -> list[str]:
    """``configs/corpus/campaign_llm.yaml`` at tiny size: one rule, one idea per type, greedy replies;
    one document wanted (the run stops at the style guide, after dropping the porting note)."""
    return [f"llm.base_url={base_url}", f"llm.model={model}", f"tokenizer.name_or_path={tokenizer}",
            "tokenizer.revision=null", "target_tokens=null", "max_docs=1", f"rules=[{RULE}]",
            "llm.ideas_per_type=1", "llm.temperature=0", "llm.max_tokens=400", "llm.concurrency=2",
            "llm.max_retries=1", "llm.backoff_s=0.1", f"llm.cache_dir={tmp_path / 'llm-cache'}",
            f"validation.cache_dir={tmp_path / 'boa-cache'}"]


class _Script:
    """A local OpenAI-compatible chat endpoint answering :func:`reply_to`; records every request."""

    def __init__(self):
        self.requests: list[tuple[list[dict], str]] = []
        script = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                reply = reply_to(body["messages"][-1]["content"])
                script.requests.append((body["messages"], reply))
                payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": reply}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"


def recorded_requests(config_path: str, tokenizer: str | Path, tmp_path: Path) -> tuple[list, dict]:
    """([(messages, reply)] the pipeline sent and got, sorted by reply; the run's manifest) of one
    ``py4 corpus generate`` run (in this process) against the scripted endpoint."""
    from py4.config import load_config
    from py4.corpus.config import CorpusConfig
    from py4.corpus.generate import run

    script = _Script()
    thread = threading.Thread(target=script.server.serve_forever, daemon=True)
    thread.start()
    try:
        config = load_config(CorpusConfig, config_path, overrides(script.url, "script", tokenizer, tmp_path))
        manifest = run(config, tmp_path / "corpus", progress=False)
    finally:
        script.server.shutdown()
        script.server.server_close()
        thread.join()
    return sorted(script.requests, key=lambda item: (item[1], json.dumps(item[0]))), manifest
