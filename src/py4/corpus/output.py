"""Corpus folders: jsonl shards plus manifest.json (the contract of docs/data.md).

Each line: `{"id", "text", "type", "rules", "tokens", "sha256", ...}`. Shards are written
one at a time and closed when full, so memory does not grow with the corpus.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

from py4.errors import Py4Error
from py4.fileio import iter_jsonl, read_json_object

SHARD_DIR = "shards"
MANIFEST = "manifest.json"


class CorpusError(Py4Error, ValueError):
    """A corpus folder is missing or malformed (the message names the file and line)."""


class ShardWriter:
    """Streams documents into `out_dir/shards/shard-NNNNN.jsonl`, `shard_docs` per shard."""

    def __init__(self, out_dir: str | Path, shard_docs: int):
        self.dir = Path(out_dir) / SHARD_DIR
        self.dir.mkdir(parents=True, exist_ok=True)
        for old in self.dir.glob("shard-*.jsonl"):
            old.unlink()
        self.shard_docs = shard_docs
        self.shards: list[dict] = []
        self._file = None
        self._hash = None
        self._content = hashlib.sha256()

    def write(self, record: dict) -> None:
        if self._file is None or self.shards[-1]["docs"] >= self.shard_docs:
            self._close()
            path = self.dir / f"shard-{len(self.shards):05d}.jsonl"
            self._file = path.open("w", encoding="utf-8")
            self._hash = hashlib.sha256()
            self.shards.append({"path": f"{SHARD_DIR}/{path.name}", "docs": 0, "tokens": 0})
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        self._file.write(line.decode("utf-8"))
        self._hash.update(line)
        self._content.update(bytes.fromhex(record["sha256"]))
        self.shards[-1]["docs"] += 1
        self.shards[-1]["tokens"] += record["tokens"]

    def _close(self) -> None:
        if self._file is not None:
            self._file.close()
            self.shards[-1]["sha256"] = self._hash.hexdigest()
            self._file = None

    def close(self) -> str:
        """Close the last shard; returns the corpus content hash (over document hashes, in order)."""
        self._close()
        return self._content.hexdigest()


def read_manifest(corpus_dir: str | Path) -> dict:
    """The corpus's manifest.json. Raises CorpusError when absent or not a JSON object."""
    return read_json_object(Path(corpus_dir) / MANIFEST, error=CorpusError,
                            missing=f"no manifest.json (is {corpus_dir} a corpus folder?)")


def iter_documents(corpus_dir: str | Path) -> Iterator[dict]:
    """Every document of a corpus folder, shards in sorted relative path order.

    Raises CorpusError naming the file and line of a malformed record.
    """
    root = Path(corpus_dir)
    shards = sorted(root.rglob("*.jsonl"), key=lambda p: p.relative_to(root).as_posix())
    if not shards:
        raise CorpusError(f"{root}: no *.jsonl shards")
    for shard in shards:
        for _, record in iter_jsonl(shard, fields={"id": str, "text": str}, error=CorpusError):
            yield record


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
