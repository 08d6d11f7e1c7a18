"""The LLM-backed generator against a local stub OpenAI-compatible server (127.0.0.1, ephemeral port)."""

import json
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from py4.corpus.generate import run
from py4.corpus.llm import IDEA_WORDS, TYPE_WORDS, parse_phrases, repair_claims, strip_reasoning
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


def test_parse_phrases_reads_json_or_lines():
    assert parse_phrases('Sure: ["a", "b"]', TYPE_WORDS) == ["a", "b"]
    assert parse_phrases("- one\n2) two\n", TYPE_WORDS) == ["one", "two"]


# What a reasoning model served by vLLM without a reasoning parser answered (an LLM corpus run):
# its chat template opened the block, so the reply starts inside it.
REASONING_TYPES = """The user wants kinds of documents. Let me think: tutorials, Q&A...
</think>

Here are four kinds of documents:

1. **Tutorial**
2. "Stack Overflow answer"
3. `changelog`
4. A long and rambling description of a document that nobody would ever call a short type name at all
5. migration guide.
"""


def test_list_replies_become_short_plain_phrases():
    assert parse_phrases(REASONING_TYPES, TYPE_WORDS) == ["Stack Overflow answer", "migration guide"]
    assert parse_phrases("<think>list them</think>\n</think>\n- blog post\n- # heading\n- [a](b)", TYPE_WORDS) \
        == ["blog post"]
    assert parse_phrases('["tutorial", "<b>FAQ</b>", "Tutorial", "a | table"]', TYPE_WORDS) == ["tutorial"]
    long_idea = " ".join(["word"] * (IDEA_WORDS + 1))
    assert parse_phrases(f"1. A closed range counts both ends.\n2. {long_idea}\n", IDEA_WORDS) \
        == ["A closed range counts both ends"]


def test_reasoning_is_stripped_from_replies():
    assert strip_reasoning("<think>plan</think>\n# Doc\ntext") == "# Doc\ntext"
    assert strip_reasoning("a <think>x</think>b<think>y</think> c") == "a b c"
    assert strip_reasoning("plan opened by the template\n</think>\n# Doc") == "# Doc"
    assert strip_reasoning("<think>\nthe reply ended while still reasoning") == ""
    assert strip_reasoning("# Doc without reasoning") == "# Doc without reasoning"


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


def test_documents_without_a_py4_program_are_never_kept(stub, small_config, tmp_path):
    """Half the drafts have no code at all (boa_runs 0): none is kept, each counts as invalid."""
    plain = "# Ranges\n\nPython-4 ranges include their end. " + " ".join(["prose"] * 60) + "\n"
    answer = stub.answer

    def half_without_code(prompt):
        if "distinct ideas" in prompt or "kinds of documents" in prompt:
            return answer(prompt)
        return plain + str(zlib.crc32(prompt.encode())) if "counting items" in prompt else answer(prompt)

    stub.answer = half_without_code
    llm = {"base_url": stub.url, "model": "stub", "concurrency": 2, "max_retries": 1, "backoff_s": 0.01,
           "cache_dir": str(tmp_path / "llm-cache"), "ideas_per_type": 2, "revise": False, "max_invalid_fraction": 1}
    manifest = run(small_config(generator="llm", max_docs=4, rules=["P4-12"], llm=llm), tmp_path / "a",
                   progress=False)
    docs = list(iter_documents(tmp_path / "a"))
    assert len(docs) == 4 and all("```py4" in d["text"] for d in docs)
    assert manifest["filters"]["rejected"].get("no_py4_program", 0) >= 1


def test_documents_without_code_trigger_max_invalid_fraction(stub, small_config, tmp_path):
    from py4.corpus.llm_client import LlmError

    answer = stub.answer
    stub.answer = lambda prompt: (answer(prompt) if "distinct ideas" in prompt or "kinds of documents" in prompt
                                  else "# Notes\n\n" + " ".join(["prose"] * 40) + f" {zlib.crc32(prompt.encode())}\n")
    llm = {"base_url": stub.url, "model": "stub", "concurrency": 4, "max_retries": 1, "backoff_s": 0.01,
           "cache_dir": str(tmp_path / "llm-cache"), "ideas_per_type": 2, "revise": False}
    with pytest.raises(LlmError, match="20 of 20 LLM documents fail"):
        run(small_config(generator="llm", max_docs=30, rules=["P4-12", "P4-01", "P4-08"], llm=llm), tmp_path / "a",
            progress=False)


def test_endpoint_failure_is_one_line_and_exit_2(small_config, tmp_path):
    """A server that fails: py4's one-line error and exit 2, not a traceback."""
    import yaml
    from typer.testing import CliRunner

    from py4.cli import app

    config = small_config(generator="llm", max_docs=1, rules=["P4-12"],
                          llm={"base_url": "http://127.0.0.1:9/v1", "max_retries": 1, "backoff_s": 0.0,
                               "cache_dir": str(tmp_path / "c"), "request_timeout_s": 2})
    path = tmp_path / "corpus.yaml"
    path.write_text(yaml.safe_dump(config.model_dump(mode="json")), encoding="utf-8")
    result = CliRunner().invoke(app, ["corpus", "generate", "--config", str(path), "--out", str(tmp_path / "o"),
                                      "--no-progress"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    [line] = [row for row in result.output.strip().splitlines() if row.strip()]
    assert line.startswith("error: http://127.0.0.1:9/v1/chat/completions (corpus chat): failed after 2 attempts")
