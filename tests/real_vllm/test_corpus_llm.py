"""The LLM-backed corpus (configs/corpus/campaign_llm.yaml) end to end against a real ``vllm serve``.

Only sizes, paths, the endpoint, greedy sampling and the counting tokenizer (a local folder: no
network) differ from the campaign's file. The served model is the tier's tiny Gemma-4 language
model taught the replies of ``corpus_writer.py`` to the pipeline's exact prompts (reasoning blocks,
a list item with markup, a document with no program, one with a valid ``py4`` program), served with
the campaign's Gemma-4 command line (its parsers). ``py4 corpus generate`` must keep exactly the
document with a program, with its plain type and idea and without the reasoning, and drop the
other (``no_py4_program``); a refused request is py4's one-line error with exit 2.

This module serves its own model; it stops it when its tests end (the tier keeps one server at a
time: the session's ``served`` is not started here).
"""

from __future__ import annotations

import json
import os
import re

import httpx
import pytest

from chat_server import alive, free_port
from vllm_tier import MODEL_KEY, VLLM, py4

pytestmark = [pytest.mark.vllm, pytest.mark.slow]  # a lesson of ~2,900-token prompts, its own server: ~10 min

CONFIG = "configs/corpus/campaign_llm.yaml"
MARKUP = re.compile(r"</?think>|<\|channel>|<channel\|>|<\|tool_call>|<tool_call\|>")
WRITER = "corpus-writer"


@pytest.fixture(scope="module")
def writer(gemma4_lm, tmp_path_factory):
    """(model folder, [(messages, reply)] it answers, the scripted run's manifest and documents)."""
    from transformers import AutoTokenizer

    from caller import Lesson, train_reply_model
    from corpus_writer import recorded_requests
    from py4.corpus.output import iter_documents

    root = tmp_path_factory.mktemp("writer")
    requests, manifest = recorded_requests(CONFIG, gemma4_lm, root / "script")
    tokenizer = AutoTokenizer.from_pretrained(gemma4_lm)
    lessons = [Lesson(_rendered(tokenizer, messages),
                      tokenizer(reply + "<turn|>", add_special_tokens=False)["input_ids"])
               for messages, reply in requests]
    train_reply_model(gemma4_lm, lessons, root / "model", max_steps=800, shared_prefix=True)
    return root / "model", requests, manifest, list(iter_documents(root / "script" / "corpus"))


def _rendered(tokenizer, messages: list[dict]) -> list[int]:
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    return tokenizer(text, add_special_tokens=False)["input_ids"]


@pytest.fixture(scope="module")
def writer_server(writer, tmp_path_factory):
    """The writer served by the campaign's Gemma-4 command line (``plan_server``: tool-call and reasoning
    parsers); stopped, with all it spawned, when this module's tests end."""
    from py4.evaluate.serve import ServeConfig, plan_server, serving

    if not (VLLM.is_file() and os.access(VLLM, os.X_OK)):
        pytest.fail(f"{VLLM} is missing: build the vLLM environment first (make vllm-env; make test-vllm does)")
    config = ServeConfig(engine="vllm", executable=str(VLLM), port=free_port(), family={MODEL_KEY: "gemma4"},
                         max_model_len=8192, ready_timeout_s=1800, extra_args=["--dtype", "float32"])
    plan = plan_server(config, str(writer[0]), name=WRITER, model_key=MODEL_KEY)
    log = tmp_path_factory.mktemp("writer-server") / "server.log"
    previous = os.environ.get("VLLM_CPU_KVCACHE_SPACE")
    os.environ["VLLM_CPU_KVCACHE_SPACE"] = "1"  # GiB; vLLM's CPU default takes a share of the machine
    try:
        with serving(plan, log) as server:
            yield server
            pid = server.process.pid
    finally:
        if previous is None:
            os.environ.pop("VLLM_CPU_KVCACHE_SPACE", None)
        else:
            os.environ["VLLM_CPU_KVCACHE_SPACE"] = previous
    assert not alive(pid), f"the vLLM server (pid {pid}) outlived its fixture"


def _one_line_error(done) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr[-3000:])
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]


def test_llm_corpus_through_vllm_keeps_the_document_with_a_program_without_reasoning(writer, writer_server,
                                                                                    gemma4_lm, tmp_path):
    from transformers import AutoTokenizer

    from corpus_writer import DOCUMENT, IDEAS, TYPES, overrides
    from py4.corpus.output import MANIFEST, iter_documents

    model, requests, scripted, scripted_docs = writer
    # The server renders every prompt as the model was taught it (else the outcome would rest on luck).
    root = writer_server.base_url.removesuffix("/v1")
    tokenizer = AutoTokenizer.from_pretrained(model)
    for messages, _ in requests:
        rendered = httpx.post(f"{root}/tokenize", timeout=60, json={
            "model": writer_server.request_model, "messages": messages, "add_generation_prompt": True}).json()
        assert rendered["tokens"] == _rendered(tokenizer, messages)

    out = tmp_path / "corpus"
    done = py4("corpus", "generate", "--config", CONFIG, "--out", str(out), "--no-progress",
               *overrides(writer_server.base_url, writer_server.request_model, gemma4_lm, tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]

    # vLLM's replies, as py4's client stored them: the taught ones, reasoning and markup included
    cached = [json.loads(p.read_text()) for p in sorted((tmp_path / "llm-cache").rglob("*.json"))]
    replies = {json.dumps(entry["request"]["messages"]): entry["content"] for entry in cached}
    assert replies == {json.dumps(messages): reply for messages, reply in requests}
    assert any(MARKUP.search(reply) for reply in replies.values())

    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["filters"] == scripted["filters"] and manifest["filters"]["rejected"] == {"no_py4_program": 1}
    assert manifest["per_type"] == {TYPES[1]: 1} and manifest["docs"] == 1
    docs = list(iter_documents(out))
    assert [(d["text"], d["type"], d["idea"]) for d in docs] == [(DOCUMENT, TYPES[1], IDEAS[TYPES[1]])] == [
        (d["text"], d["type"], d["idea"]) for d in scripted_docs]
    for doc in docs:  # the content gate, stated generally
        assert "```py4" in doc["text"] and not MARKUP.search(doc["text"])
        for phrase in (doc["type"], doc["idea"]):
            assert phrase and "\n" not in phrase and not MARKUP.search(phrase) and len(phrase) <= 200, phrase


def test_llm_corpus_refused_request_is_one_line_exit_2(writer_server, gemma4_lm, tmp_path):
    from corpus_writer import overrides

    done = py4("corpus", "generate", "--config", CONFIG, "--out", str(tmp_path / "corpus"), "--no-progress",
               *overrides(writer_server.base_url, "no-such-model", gemma4_lm, tmp_path))
    _one_line_error(done)
    assert "no-such-model" in done.stderr or "404" in done.stderr, done.stderr
