"""Where documents come from: the Python-4 corpus, replay text (Hub or local), and the rows
of any dataset given as a Hub id at a pinned revision or as a local folder.

Formats (the contract with the corpus engineer and with users, see docs/data.md):

- **Corpus folder**: ``manifest.json`` plus shards ``*.jsonl`` / ``*.jsonl.gz`` (read in
  sorted path order), one JSON object a line with at least ``{"id": str, "text": str}``.
- **Text source** (replay): a Hub dataset (``hub_id`` + ``revision``, streamed), a local
  folder of ``*.jsonl[.gz]`` rows with a text field and/or ``*.txt`` files (one document
  per file), or ``builtin: stdlib`` (the smoke replay made from the standard library).
- Hub and local folders go through the same code: ``datasets.load_dataset(...,
  streaming=True)``; a local folder uses the ``json`` / ``parquet`` / ``text`` builders on
  its sorted files. Nothing here downloads anything unless a ``hub_id`` is configured.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pydantic

from py4.config import StrictModel
from py4.data.documents import Document
from py4.data.replay import iter_stdlib_documents
from py4.data.tokens import DataError
from py4.fileio import iter_jsonl, read_json_object

__all__ = ["Document", "TextSourceSpec", "corpus_shards", "iter_corpus", "read_corpus_manifest",
           "iter_text_source", "hub_stream", "open_rows", "local_data_files", "describe_source"]


class _RowSource(StrictModel):
    """A dataset given either as a Hub id at a pinned revision or as a local folder."""

    path: str | None = pydantic.Field(None, description="local folder (or file) in the same format as the Hub dataset")
    hub_id: str | None = pydantic.Field(None, description="Hugging Face Hub dataset id, streamed")
    revision: str | None = pydantic.Field(None, description="Hub commit/tag; required with hub_id")
    name: str | None = pydantic.Field(None, description="Hub config name, if the dataset has several")
    split: str = "train"
    data_files: list[str] | None = pydantic.Field(None, description="Hub data files (globs) to restrict to")

    @pydantic.model_validator(mode="after")
    def _one_location(self) -> "_RowSource":
        given = [k for k in self._location_fields() if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of {', '.join(self._location_fields())} (given: {given or 'none'})")
        if self.hub_id is not None and not self.revision:
            raise ValueError("hub_id needs a pinned revision (a commit hash or tag)")
        return self

    def _location_fields(self) -> tuple[str, ...]:
        return ("path", "hub_id")


class TextSourceSpec(_RowSource):
    """A replay text source."""

    text_field: str = "text"
    builtin: Literal["stdlib"] | None = pydantic.Field(
        None, description="'stdlib': smoke replay made from the standard library")
    max_chars_per_doc: int = pydantic.Field(
        8000, ge=200, description="builtin only: longer stdlib texts are cut into parts")

    def _location_fields(self) -> tuple[str, ...]:
        return ("path", "hub_id", "builtin")


def describe_source(spec: _RowSource) -> dict[str, Any]:
    """The fields that identify a source in a manifest (plus a content hash for local ones)."""
    from py4.runs import tree_sha256

    entry = {k: v for k, v in spec.model_dump().items() if v is not None}
    if spec.path is not None and Path(spec.path).exists():
        entry["sha256"] = tree_sha256(spec.path)
    if getattr(spec, "builtin", None) == "stdlib":
        import platform

        entry["python"] = platform.python_version()
    return entry


# ---------------------------------------------------------------------------- corpus
def corpus_shards(corpus_dir: str | Path) -> list[Path]:
    """The corpus's shard files in reading order; raises DataError if there are none."""
    root = Path(corpus_dir)
    if not root.is_dir():
        raise DataError(f"corpus {root}: not a folder")
    shards = sorted(p for p in root.rglob("*") if p.is_file() and p.name.endswith((".jsonl", ".jsonl.gz")))
    if not shards:
        raise DataError(f"corpus {root}: no *.jsonl or *.jsonl.gz shards")
    return shards


def read_corpus_manifest(corpus_dir: str | Path) -> dict[str, Any]:
    """The corpus's ``manifest.json``; raises DataError if missing or not a JSON object."""
    return read_json_object(Path(corpus_dir) / "manifest.json", error=DataError,
                            missing=f"corpus {corpus_dir}: manifest.json is missing (the corpus contract requires one)")


def iter_corpus(corpus_dir: str | Path) -> Iterator[Document]:
    """Stream the corpus's documents in shard order; raises DataError on a malformed line."""
    for shard in corpus_shards(corpus_dir):
        for _, row in iter_jsonl(shard, fields={"id": str, "text": str}, error=DataError):
            yield Document(id=row["id"], text=row["text"], source="corpus")


# ---------------------------------------------------------------------------- Hub or local rows
def local_data_files(path: str | Path) -> dict[str, list[str]]:
    """A local folder's files by ``datasets`` builder (json, parquet, text), each sorted."""
    root = Path(path)
    if root.is_file():
        files = [root]
    elif root.is_dir():
        files = sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith("."))
    else:
        raise DataError(f"data source {root}: no such file or folder")
    by_builder: dict[str, list[str]] = {"json": [], "parquet": [], "text": []}
    for f in files:
        name = f.name
        if name.endswith((".jsonl", ".jsonl.gz", ".json.gz")) or (name.endswith(".json") and name != "manifest.json"):
            by_builder["json"].append(str(f))
        elif name.endswith(".parquet"):
            by_builder["parquet"].append(str(f))
        elif name.endswith(".txt"):
            by_builder["text"].append(str(f))
    found = {k: v for k, v in by_builder.items() if v}
    if not found:
        raise DataError(f"data source {root}: no *.jsonl[.gz], *.parquet or *.txt files")
    return found


def hub_stream(hub_id: str, revision: str | None, *, name: str | None = None, split: str = "train",
               data_files: list[str] | None = None):
    """A Hub dataset's split at its pinned revision, streamed (``datasets.load_dataset(...,
    streaming=True)``): from the Hub, or offline (``HF_HUB_OFFLINE`` / ``HF_DATASETS_OFFLINE``) from
    the copy ``datasets`` prepared before in its cache. Opening reads no rows; a dataset, config or
    split that cannot be found raises what ``datasets`` raises."""
    import datasets

    return datasets.load_dataset(hub_id, name=name, split=split, revision=revision, data_files=data_files,
                                 streaming=True)


def open_rows(spec: _RowSource) -> Iterator[dict[str, Any]]:
    """Stream a dataset's rows through ``datasets.load_dataset(..., streaming=True)``.

    A Hub id is loaded at its pinned revision; a local folder goes through the
    packaged builders (json, then parquet, then text files as whole documents).
    Raises DataError when a local folder has no usable files.
    """
    import datasets

    if spec.hub_id is not None:
        yield from hub_stream(spec.hub_id, spec.revision, name=spec.name, split=spec.split, data_files=spec.data_files)
        return
    for builder, files in local_data_files(spec.path).items():
        extra = {"sample_by": "document"} if builder == "text" else {}
        stream = datasets.load_dataset(builder, data_files=files, split="train", streaming=True, **extra)
        yield from stream


def iter_text_source(spec: TextSourceSpec) -> Iterator[Document]:
    """Stream a replay source's documents; raises DataError on a row without text."""
    if spec.builtin == "stdlib":
        yield from iter_stdlib_documents(max_chars_per_doc=spec.max_chars_per_doc)
        return
    where = spec.hub_id or spec.path
    for index, row in enumerate(open_rows(spec)):
        text = row.get(spec.text_field)
        if text is None and "text" in row and spec.text_field != "text":
            text = row["text"]
        if not isinstance(text, str):
            raise DataError(f"{where}: row {index}: field {spec.text_field!r}: expected a string, "
                            f"got {type(text).__name__} (fields: {sorted(row)})")
        doc_id = row.get("id")
        yield Document(id=str(doc_id) if doc_id is not None else f"{index}", text=text, source="replay")
