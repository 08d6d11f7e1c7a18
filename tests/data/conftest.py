"""Fixtures for the data pipeline tests: a tiny byte-level BPE tokenizer with a chat template
that marks assistant turns, and small corpora / replay / chat folders on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from data_helpers import build_tokenizer, conversation, sentence, write_jsonl


@pytest.fixture(scope="session")
def tokenizer_dir(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("tokenizer")
    build_tokenizer().save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tokenizer(tokenizer_dir):
    from py4.data.tokens import load_tokenizer

    return load_tokenizer(str(tokenizer_dir))




@pytest.fixture
def corpus_dir(tmp_path) -> Path:
    root = tmp_path / "corpus"
    write_jsonl(root / "shard-00000.jsonl",
                [{"id": f"c{i}", "text": f"fn doc {i}: " + sentence(i, 20)} for i in range(12)])
    write_jsonl(root / "shard-00001.jsonl",
                [{"id": f"c{i}", "text": f"let doc {i}: " + sentence(i, 30)} for i in range(12, 20)])
    (root / "manifest.json").write_text(json.dumps({"name": "test-corpus", "docs": 20}), encoding="utf-8")
    return root


@pytest.fixture
def replay_dir(tmp_path) -> Path:
    root = tmp_path / "replay"
    write_jsonl(root / "part-0.jsonl", [{"id": f"r{i}", "text": "replay " + sentence(i + 50, 25)} for i in range(200)])
    return root




@pytest.fixture
def chat_dir(tmp_path) -> Path:
    rows = [{"id": f"ok{i}", "messages": conversation(i, turns=1 + i % 3, system=i % 2 == 0)} for i in range(30)]
    rows += [
        {"id": "bad-first", "messages": [{"role": "assistant", "content": "hi"}, {"role": "user", "content": "x"}]},
        {"id": "bad-last", "messages": [{"role": "user", "content": "hi"}]},
        {"id": "bad-empty", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "  "}]},
        {"id": "bad-tool", "messages": [{"role": "user", "content": "hi"}, {"role": "tool", "content": "x"},
                                        {"role": "assistant", "content": "y"}]},
    ]
    return write_jsonl(tmp_path / "chat" / "train.jsonl", rows).parent
