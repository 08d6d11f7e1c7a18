"""The LLM-backed corpus (configs/corpus/campaign_llm.yaml) against the real vLLM server, at tiny size.

Only sizes, paths, the endpoint and the counting tokenizer (a local folder: no network) differ from
the campaign's file; the pipeline asks the served model for document types, ideas and documents.
The served model is the tier's tiny caller (conftest.py), which writes no real documents: the
pipeline must then keep nothing that is not a document: every kept document holds a ``py4`` block,
no reasoning markup, and types and ideas that are short plain phrases; or it stops with py4's
one-line error (exit 2), not a traceback. A refused request (a model name the server does not
serve) is the same one-line error.
"""

from __future__ import annotations

import json
import re

import pytest

from vllm_tier import py4

pytestmark = pytest.mark.vllm

CONFIG = "configs/corpus/campaign_llm.yaml"
MARKUP = re.compile(r"</?think>|<\|channel>|<channel\|>|<\|tool_call>|<tool_call\|>")


def corpus_overrides(served, tokenizer, tmp_path, model: str) -> list[str]:
    return [f"llm.base_url={served.base_url}", f"llm.model={model}", f"tokenizer.name_or_path={tokenizer}",
            "tokenizer.revision=null", "target_tokens=400", "max_docs=2", "rules=[P4-01]", "llm.ideas_per_type=1",
            "llm.max_tokens=96", "llm.concurrency=2", "llm.max_retries=1", "llm.backoff_s=0.1",
            f"llm.cache_dir={tmp_path / 'llm-cache'}", f"validation.cache_dir={tmp_path / 'boa-cache'}"]


def _one_line_error(done) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr[-3000:])
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]


def test_llm_corpus_keeps_only_documents_with_py4_code_and_plain_types(served, caller, tmp_path):
    model, _ = caller
    out = tmp_path / "corpus"
    done = py4("corpus", "generate", "--config", CONFIG, "--out", str(out), "--no-progress",
               *corpus_overrides(served, model, tmp_path, f"{served.request_model}.base"))
    if done.returncode != 0:
        _one_line_error(done)
        return
    docs = [json.loads(line) for shard in sorted(out.glob("*.jsonl")) for line in shard.read_text().splitlines()]
    for doc in docs:
        assert "```py4" in doc["text"], doc["text"][:300]
        assert not MARKUP.search(doc["text"]), doc["text"][:300]
        for phrase in (doc.get("type", ""), doc.get("idea", "")):
            assert phrase and "\n" not in phrase and not MARKUP.search(phrase) and len(phrase) <= 200, phrase


def test_llm_corpus_refused_request_is_one_line_exit_2(served, caller, tmp_path):
    model, _ = caller
    done = py4("corpus", "generate", "--config", CONFIG, "--out", str(tmp_path / "corpus"), "--no-progress",
               *corpus_overrides(served, model, tmp_path, "no-such-model"))
    _one_line_error(done)
    assert "no-such-model" in done.stderr or "404" in done.stderr, done.stderr
