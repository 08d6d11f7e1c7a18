"""The smoke replay made from the standard library: deterministic, bounded, countable."""

from __future__ import annotations

import json

import pytest

from py4.data.replay import build_smoke_replay, iter_stdlib_documents, stdlib_files
from py4.data.sources import TextSourceSpec, iter_text_source


def test_stdlib_files_skip_tests():
    files = stdlib_files()
    assert files and not any("/test/" in f.as_posix() or "site-packages" in f.as_posix() for f in files)


def test_build_is_deterministic_and_bounded(tmp_path):
    a = build_smoke_replay(tmp_path / "a", max_docs=30, docs_per_shard=8)
    b = build_smoke_replay(tmp_path / "b", max_docs=30, docs_per_shard=8)
    assert a["docs"] == 30 and a["shards"] == 4 and a["content_sha256"] == b["content_sha256"]
    rows = [json.loads(line) for f in sorted((tmp_path / "a").glob("replay-*.jsonl"))
            for line in f.read_text().splitlines()]
    assert len(rows) == 30 and all(r["text"].strip() and r["id"].startswith("stdlib/") for r in rows)
    assert any("#doc" in r["id"] for r in rows) and any("#src" in r["id"] for r in rows)
    assert max(len(r["text"]) for r in rows) <= 8000


def test_target_tokens_counts_with_the_tokenizer(tmp_path, tokenizer):
    manifest = build_smoke_replay(tmp_path / "t", target_tokens=5000, tokenizer=tokenizer)
    assert manifest["tokens"] >= 5000
    with pytest.raises(ValueError, match="tokenizer"):
        build_smoke_replay(tmp_path / "u", target_tokens=10)


def test_written_replay_reads_back_as_a_local_source(tmp_path):
    build_smoke_replay(tmp_path / "r", max_docs=5)
    docs = list(iter_text_source(TextSourceSpec(path=str(tmp_path / "r"))))
    # The first 5 of the standard library's documents: the stream is longer by design.
    builtin = [d for _, d in zip(range(5), iter_stdlib_documents(), strict=False)]
    assert [d.text for d in docs] == [d.text for d in builtin]
