"""The LLM-backed generator against a local stub OpenAI-compatible server (127.0.0.1, ephemeral port)."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from py4.corpus.generate import run
from py4.corpus.llm import parse_list, repair_claims
from py4.corpus.output import iter_documents
from py4.corpus.validate import BoaValidator

DOC = """# Ranges in Python-4

In Python-4, `range(a, b)` includes `b`.

```py4
print(list(range(1, 3)))
```

```output
[1, 2]
```

The Python 3 habit:

```py3
let xs = [1, 2]
for i in range(len(xs)):
    print(xs[i])
```
"""
BROKEN = "# Functions\n\n```py4\ndef double(x: int) -> int:\n    return x * 2\n```\n"
REVISED = "# Functions\n\n```py4\nfn double(x: int) -> int:\n    return x * 2\n\nprint(double(IDEA))\n```\n"


class Stub:
    """Answers by prompt; fails the first request with 500; records concurrency."""

    def __init__(self):
        self.requests, self.in_flight, self.max_in_flight = 0, 0, 0
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with stub.lock:
                    stub.requests += 1
                    first = stub.requests == 1
                    stub.in_flight += 1
                    stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
                time.sleep(0.02)
                try:
                    if first:
                        self.send_response(500)
                        self.end_headers()
                        return
                    content = stub.answer(body["messages"][-1]["content"])
                    payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]})
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(payload.encode())
                finally:
                    with stub.lock:
                        stub.in_flight -= 1

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @staticmethod
    def answer(prompt: str) -> str:
        import random
        import re
        rng = random.Random(prompt)  # different prompts, different (non-duplicate) prose
        prose = " ".join(rng.choice(["alpha", "beta", "gamma", "delta", "range", "list", "sum", "loop",
                                     "index", "bound", "value", "closed", "open", "print"]) for _ in range(80))
        if "kinds of documents" in prompt:
            return '["tutorial", "Q&A thread"]'
        if "distinct ideas" in prompt:
            n = re.search(r"\(set (\d+)\)", prompt).group(1)
            return f"1. a closed range, take {n}\n2. counting items, take {n}\n"
        if prompt.startswith("Revise"):
            return REVISED.replace("IDEA", str(rng.randint(1, 99))) + "\n" + prose + "\n"
        if "P4-01" in prompt.split("\n")[0]:
            return BROKEN
        return DOC + "\n" + prose + "\n"


@pytest.fixture
def stub():
    server = Stub()
    yield server
    server.server.shutdown()


def test_parse_list_reads_json_or_lines():
    assert parse_list('Sure: ["a", "b"]') == ["a", "b"]
    assert parse_list("- one\n2) two\n") == ["one", "two"]


def test_repair_claims_replaces_outputs_with_boa_results(tmp_path):
    with BoaValidator(tmp_path) as v:
        fixed = repair_claims(DOC, v)
        assert "[1, 2, 3]" in fixed and "[1, 2]\n```" not in fixed
        assert "IndexError: list index out of range" in fixed
        assert v.check_document(fixed) == []


def test_llm_pipeline_with_retries_cache_and_resume(stub, small_config, tmp_path):
    llm = {"base_url": stub.url, "model": "stub", "concurrency": 2, "max_retries": 2, "backoff_s": 0.01,
           "cache_dir": str(tmp_path / "llm-cache"), "ideas_per_type": 2}
    config = small_config(generator="llm", max_docs=6, rules=["P4-01", "P4-12"], llm=llm)
    manifest = run(config, tmp_path / "a", progress=False)
    assert manifest["docs"] == 6 and manifest["generator"] == "llm"
    docs = list(iter_documents(tmp_path / "a"))
    assert {d["rules"][0] for d in docs} == {"P4-01", "P4-12"}
    assert any(d["revised"] for d in docs)  # the P4-01 drafts used `def` and were revised
    with BoaValidator(None) as fresh:
        assert all(fresh.check_document(d["text"]) == [] for d in docs)
    assert 1 <= stub.max_in_flight <= 2
    sent = stub.requests
    # an interrupted or repeated run asks nothing again: every response is on disk
    again = run(config, tmp_path / "b", progress=False)
    assert stub.requests == sent and again["content_sha256"] == manifest["content_sha256"]


def test_endpoint_failure_is_loud(small_config, tmp_path):
    from py4.corpus.llm_client import LlmError
    llm = {"base_url": "http://127.0.0.1:9/v1", "max_retries": 1, "backoff_s": 0.0,
           "cache_dir": str(tmp_path / "c"), "request_timeout_s": 2}
    with pytest.raises(LlmError, match="failed after 1 retries"):
        run(small_config(generator="llm", max_docs=1, rules=["P4-12"], llm=llm), tmp_path / "o", progress=False)
