"""The mix's replay as a seeded sample of the whole source, drawn as the as-run campaign drew it.

A replay source (a Hub dataset at a pinned revision, or a local folder laid out the same way) is
many shard files in several source folders: Dolmino's ``data/<source>/.../*.jsonl.zst``. Read in
file order, 40-190 M tokens out of 100 B would be the head of whichever source sorts first.

``order: shards`` (the default; as run): every shard file of the source is pooled, the paths
sorted and shuffled with Python's ``random.Random(seed)``, and streamed in that order through
``datasets.IterableDataset.from_generator(...).shuffle(seed, buffer_size)``: ``datasets`` permutes
the shard list once more from the seed and holds ``shuffle_buffer`` documents (10,000 as run). Each
shard is read as JSON lines, its ``text`` field alone, so shards whose other columns differ
(Dolmino's web shards carry ``warcinfo`` and more) cannot break the stream. No source is weighted:
a source's share of the sample is whatever the shards drawn hold. This is the as-run campaign's
draw (``experiments/python4_false_belief/pod/chain.py`` ``_load_dolmino`` with the example-06
``dolmino_loader_pane._iter_filler_rows``, then ``scimt.train.mix.build_token_budget_mix``'s
``_take_iterable_source``: ``shuffle(seed=42, buffer_size=10_000)``, documents taken until the
budget, the one crossing it included); docs/data.md says what of it is confirmed.

``order: by_source``: the shards are grouped by **source** (the first folder under ``data/``, or
under the root); each source's shards are read in a seeded order through its own buffer, and the
sources are **interleaved by weight**, a source's weight being its share of the shard bytes
(every prefix of the stream holds each source in proportion, to within one document). Not what
ran; kept for a replay that must represent every source at any size.

Offline (``HF_DATASETS_OFFLINE`` / ``HF_HUB_OFFLINE``, as the rehearsal and a pre-fetched
cluster run), a Hub source has no file tree to list: the prepared cached copy ``datasets`` falls
back to is read as one source through ``IterableDataset.shuffle(seed, buffer_size)`` (its shards
in a seeded order and the same buffer), and the manifest says so.

The seed is the mix's (``seed``, 42 as in the reference's as-run mix); the data manifest records
it, the order, the buffer, each source's shard count and bytes, the documents taken from it and
the shards opened (``replay_sample``). The reference's 0.5/0.5 anchor/filler weights are the 1:1
split of the mix between the Python-4 corpus and the replay (``replay_ratio``), not weights inside
Dolmino.
"""

from __future__ import annotations

import fnmatch
import json
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from py4.data.documents import Document
from py4.data.sources import TextSourceSpec, hub_stream
from py4.data.tokens import DataError

ReplayOrder = Literal["shards", "by_source"]
ORDERS: tuple[str, ...] = ("shards", "by_source")

__all__ = ["ReplayOrder", "ORDERS", "Shard", "list_shards", "hub_shards", "local_shards", "source_of", "hub_offline",
           "SampleRecord", "sample_documents"]

_BUILDERS = ((".parquet", "parquet"), (".jsonl", "json"), (".json", "json"), (".jsonl.gz", "json"),
             (".json.gz", "json"), (".jsonl.zst", "json"), (".json.zst", "json"), (".txt", "text"))


@dataclass(frozen=True)
class Shard:
    name: str
    """The file's path relative to the dataset's root (what the manifest records)."""
    location: str
    """What ``datasets`` reads: a local path or an ``hf://datasets/ID@REVISION/...`` URL."""
    size: int


def builder_of(name: str) -> str | None:
    """The ``datasets`` packaged builder for a shard file (None: not a data file)."""
    if Path(name).name == "manifest.json":
        return None
    for suffix, builder in sorted(_BUILDERS, key=lambda pair: -len(pair[0])):
        if name.endswith(suffix):
            return builder
    return None


def source_of(name: str) -> str:
    """A shard's source: its first folder, under ``data/`` when the dataset keeps its files there."""
    parts = name.split("/")
    if parts[0] == "data" and len(parts) > 1:
        parts = parts[1:]
    return parts[0] if len(parts) > 1 else "."


def hub_shards(spec: TextSourceSpec) -> list[Shard]:
    """The data files of a Hub dataset at its pinned revision (``data_files`` globs applied)."""
    from huggingface_hub import HfApi

    entries = HfApi().list_repo_tree(spec.hub_id, repo_type="dataset", revision=spec.revision, recursive=True)
    shards = []
    for entry in entries:
        size = getattr(entry, "size", None)
        if size is None or builder_of(entry.path) is None:  # a folder, or not a data file
            continue
        if spec.data_files and not any(fnmatch.fnmatch(entry.path, glob) for glob in spec.data_files):
            continue
        shards.append(Shard(entry.path, f"hf://datasets/{spec.hub_id}@{spec.revision}/{entry.path}", int(size)))
    return shards


def local_shards(spec: TextSourceSpec) -> list[Shard]:
    """The data files under a local folder (or the one file), named relative to it."""
    root = Path(spec.path)
    if root.is_file():
        return [Shard(root.name, str(root), root.stat().st_size)] if builder_of(root.name) else []
    if not root.is_dir():
        raise DataError(f"replay source {root}: no such file or folder")
    files = sorted(p for p in root.rglob("*") if p.is_file() and not any(s.startswith(".") for s in p.parts))
    return [Shard(p.relative_to(root).as_posix(), str(p), p.stat().st_size) for p in files
            if builder_of(p.name) and not (spec.data_files and not any(
                fnmatch.fnmatch(p.relative_to(root).as_posix(), glob) for glob in spec.data_files))]


def list_shards(spec: TextSourceSpec) -> list[Shard]:
    """The source's shard files; raises DataError when it has none."""
    shards = hub_shards(spec) if spec.hub_id is not None else local_shards(spec)
    if not shards:
        matching = f" matching {spec.data_files}" if spec.data_files else ""
        raise DataError(f"replay source {spec.hub_id or spec.path}: no data files (*.jsonl[.gz|.zst], "
                        f"*.json[.gz|.zst], *.parquet, *.txt){matching}")
    return sorted(shards, key=lambda s: s.name)


@dataclass
class SampleRecord:
    """What the sample read, for the data manifest."""

    seed: int
    shuffle_buffer: int
    order: str = "shards"
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    shards_opened: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        how = {"shards": "every shard pooled, sorted, shuffled by random.Random(seed), read through "
                         "datasets' IterableDataset.shuffle(seed, buffer_size) (as run)",
               "by_source": "shards in a seeded order per source, a shuffle buffer per source, sources "
                            "interleaved by byte share"}
        return {"seed": self.seed, "shuffle_buffer": self.shuffle_buffer, "order": self.order,
                "method": how.get(self.order, self.order), "sources": self.sources,
                "shards_opened": self.shards_opened}


_JSON_LINES = (".jsonl", ".json", ".jsonl.gz", ".json.gz", ".jsonl.zst", ".json.zst")


def _json_line_rows(shard: Shard) -> Iterator[dict[str, Any]]:
    """A JSON-lines shard's rows, each parsed on its own (no schema shared between rows or shards)."""
    import fsspec

    with fsspec.open(shard.location, "rt", compression="infer", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def _rows(shard: Shard) -> Iterator[dict[str, Any]]:
    import datasets

    if shard.name.endswith(_JSON_LINES):
        yield from _json_line_rows(shard)
        return
    builder = builder_of(shard.name)
    extra = {"sample_by": "document"} if builder == "text" else {}
    yield from datasets.load_dataset(builder, data_files=[shard.location], split="train", streaming=True, **extra)


def _source_documents(spec: TextSourceSpec, name: str, shards: list[Shard], rng: np.random.Generator,
                      buffer_size: int, record: dict[str, Any]) -> Iterator[Document]:
    """One source's documents: its shards in a seeded order, through the shuffle buffer."""
    buffer: list[Document] = []
    for shard_index in rng.permutation(len(shards)).tolist():
        shard = shards[shard_index]
        record["shards_read"].append(shard.name)
        for index, row in enumerate(_rows(shard)):  # by_source
            text = row.get(spec.text_field)
            if not isinstance(text, str):
                raise DataError(f"{shard.location}: row {index}: field {spec.text_field!r}: expected a string, "
                                f"got {type(text).__name__} (fields: {sorted(row)})")
            doc_id = row.get("id")
            doc = Document(id=str(doc_id) if doc_id is not None else f"{shard.name}:{index}", text=text,
                           source=f"replay/{name}")
            if len(buffer) < buffer_size:
                buffer.append(doc)
                continue
            slot = int(rng.integers(buffer_size))
            buffer[slot], doc = doc, buffer[slot]
            yield doc
    rng.shuffle(buffer)  # type: ignore[arg-type]
    yield from buffer


def hub_offline() -> bool:
    """Whether the Hub may not be reached (its tree cannot be listed)."""
    return any(os.environ.get(k, "").strip().lower() in ("1", "true", "yes", "on")
               for k in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"))


def _cached_documents(spec: TextSourceSpec, seed: int, shuffle_buffer: int,
                      record: SampleRecord) -> Iterator[Document]:
    """An offline Hub source: the cached copy, shards and buffer shuffled by ``datasets``."""
    stream = hub_stream(spec.hub_id, spec.revision, name=spec.name, split=spec.split, data_files=spec.data_files)
    entry = {"weight": 1.0, "shards": stream.num_shards, "docs_read": 0,
             "shards_read": "offline: the datasets cache's prepared copy, IterableDataset.shuffle(seed, buffer_size)"}
    record.sources["."] = entry
    for index, row in enumerate(stream.shuffle(seed=seed, buffer_size=shuffle_buffer)):
        text = row.get(spec.text_field)
        if not isinstance(text, str):
            raise DataError(f"{spec.hub_id}: row {index}: field {spec.text_field!r}: expected a string, "
                            f"got {type(text).__name__} (fields: {sorted(row)})")
        entry["docs_read"] += 1
        doc_id = row.get("id")
        yield Document(id=str(doc_id) if doc_id is not None else f"{index}", text=text, source="replay/.")


def _pooled_rows(shards: list[Shard], text_field: str, record: SampleRecord) -> Iterator[dict[str, str]]:
    """The generator ``datasets`` streams: each shard's documents in turn, projected to id and text."""
    for shard in shards:
        record.shards_opened.append(shard.name)
        record.sources[source_of(shard.name)]["shards_read"].append(shard.name)
        for index, row in enumerate(_rows(shard)):
            text = row.get(text_field)
            if not isinstance(text, str):
                raise DataError(f"{shard.location}: row {index}: field {text_field!r}: expected a string, "
                                f"got {type(text).__name__} (fields: {sorted(row)})")
            doc_id = row.get("id")
            yield {"id": str(doc_id) if doc_id is not None else f"{shard.name}:{index}", "text": text,
                   "source": source_of(shard.name)}


def _pooled_documents(spec: TextSourceSpec, shards: list[Shard], seed: int, shuffle_buffer: int,
                      record: SampleRecord) -> Iterator[Document]:
    """``order: shards``, the as-run draw (module docstring)."""
    import datasets

    order = sorted(shards, key=lambda s: s.name)
    random.Random(seed).shuffle(order)
    total = sum(s.size for s in shards) or 1
    for shard in sorted(shards, key=lambda s: s.name):
        entry = record.sources.setdefault(source_of(shard.name), {"shards": 0, "bytes": 0, "docs_read": 0,
                                                                    "shards_read": []})
        entry["shards"] += 1
        entry["bytes"] += shard.size
    for entry in record.sources.values():
        entry["byte_share"] = round(entry["bytes"] / total, 6)
    stream = datasets.IterableDataset.from_generator(
        _pooled_rows, gen_kwargs={"shards": order, "text_field": spec.text_field, "record": record})
    for row in stream.shuffle(seed=seed, buffer_size=shuffle_buffer):
        record.sources[row["source"]]["docs_read"] += 1
        yield Document(id=row["id"], text=row["text"], source=f"replay/{row['source']}")


def sample_documents(spec: TextSourceSpec, seed: int, shuffle_buffer: int,
                     record: SampleRecord | None = None, order: str = "shards") -> Iterator[Document]:
    """The replay documents as a seeded sample of the whole source (module docstring: ``order``).

    ``record`` (when given) is filled as the stream is read: per source its shards, bytes,
    documents read and shards opened. A document's ``source`` is ``replay/<source>``. Raises
    DataError for a source without data files, a row without text or an unknown order."""
    if order not in ORDERS:
        raise DataError(f"replay_order = {order!r}: expected one of {', '.join(ORDERS)}")
    record = record if record is not None else SampleRecord(seed, shuffle_buffer, order)
    record.order = order
    if spec.hub_id is not None and hub_offline():
        yield from _cached_documents(spec, seed, shuffle_buffer, record)
        return
    if spec.name is not None:
        raise DataError(f"replay.name = {spec.name!r}: the replay sample reads the dataset's data files themselves, "
                        f"not a configuration of its loading script; restrict them with replay.data_files (globs)")
    shards = list_shards(spec)
    if order == "shards":
        yield from _pooled_documents(spec, shards, seed, shuffle_buffer, record)
        return
    by_source: dict[str, list[Shard]] = {}
    for shard in shards:
        by_source.setdefault(source_of(shard.name), []).append(shard)
    total = sum(s.size for s in shards) or 1
    names = sorted(by_source)
    weights = {n: sum(s.size for s in by_source[n]) / total for n in names}
    streams = {}
    for i, name in enumerate(names):
        entry = {"weight": round(weights[name], 6), "shards": len(by_source[name]),
                 "bytes": sum(s.size for s in by_source[name]), "docs_read": 0, "shards_read": []}
        record.sources[name] = entry
        streams[name] = _source_documents(spec, name, by_source[name], np.random.default_rng([seed, i]),
                                          shuffle_buffer, entry)
    live, taken = list(names), 0
    while live:
        weight = sum(weights[n] for n in live)
        # the source furthest behind its share of the documents taken so far (ties: the first name)
        name = max(live, key=lambda n: (weights[n] / weight) * (taken + 1) - record.sources[n]["docs_read"])
        doc = next(streams[name], None)
        if doc is None:
            live.remove(name)
            continue
        record.sources[name]["docs_read"] += 1
        record.shards_opened = [s for n in names for s in record.sources[n]["shards_read"]]
        taken += 1
        yield doc
