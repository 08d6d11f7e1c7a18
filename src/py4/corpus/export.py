"""A corpus folder as a Hub dataset: one `train` split of its documents, a dataset card
with the corpus's content hash (the one its manifest.json records), the config that made it,
its size and the check that no rule-probe text is in it.

`rules` (a list) and every other field keep their types; a field that mixes types across
documents (`meta`-like dicts) is stored as JSON text and named in the card.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from py4.corpus.output import iter_documents, read_manifest
from py4.hub.dataset_folder import DatasetCard, DatasetExportError, write_dataset
from py4.hub.dataset_source import ExportedDataset

MANIFEST_KEYS = ("name", "version", "generator", "tokenizer")
"""The corpus manifest's fields the card keeps (`install_corpus` writes them back)."""


def export_corpus(corpus_dir: str | Path, out_dir: str | Path, *, name: str | None = None,
                  force: bool = False) -> dict[str, Any]:
    """Write the corpus at `corpus_dir` as a dataset folder; returns write_dataset's summary.

    Raises CorpusError for a folder that is no corpus, DatasetExportError when a document
    holds rule-probe text.
    """
    from py4.problems.probe_set.verify import corpus_leaks

    manifest = read_manifest(corpus_dir)
    documents = list(iter_documents(corpus_dir))
    leaks = corpus_leaks(documents)
    if leaks:
        raise DatasetExportError(f"{corpus_dir}: {len(leaks)} documents contain rule-probe text "
                                 f"(first: {sorted(leaks)[0]}); refusing to export it")
    json_columns = sorted({k for d in documents for k, v in d.items() if isinstance(v, dict)})
    card = DatasetCard(
        pretty_name=name or f"Python-4 synthetic documents ({Path(corpus_dir).name})",
        summary=("Synthetic documents that teach Python-4, a fictional next version of Python with "
                 "30 rule changes: every code block was checked by Boa (the Python-4 interpreter) "
                 f"and its claims hold. {manifest.get('docs')} documents, {manifest.get('tokens')} tokens."),
        license="apache-2.0",
        how_made={"command": "py4 corpus generate", "config": manifest.get("config"),
                  "corpus content hash (manifest.json)": manifest.get("content_sha256"),
                  "documents": manifest.get("docs"), "tokens": manifest.get("tokens")},
        guarantees=["No document contains the text of any rule probe (checked by "
                    "`py4.problems.probe_set.verify.corpus_leaks` when this folder was written).",
                    "Every `py4` code block compiled and ran under Boa as the document says."],
        json_columns=json_columns, tags=["synthetic", "code"],
        extra_metadata={"corpus_content_sha256": manifest.get("content_sha256"),
                        "corpus_manifest": {k: manifest[k] for k in MANIFEST_KEYS if k in manifest}})
    return write_dataset(out_dir, {"train": documents}, card, force=force)


def corpus_from_dataset(folder: str | Path) -> tuple[str, list[dict[str, Any]]]:
    """(the corpus's content hash, its documents) of a corpus dataset folder (`export_corpus`'s,
    e.g. a Hub snapshot), in the corpus's order with dict fields decoded. Raises
    DatasetSourceError when the folder is not an intact corpus export."""
    from py4.hub.dataset_source import read_dataset

    return _corpus_of(read_dataset(folder), folder)


def _corpus_of(data: ExportedDataset, folder: str | Path) -> tuple[str, list[dict[str, Any]]]:
    from py4.hub.dataset_source import DatasetSourceError

    digest = data.metadata.get("corpus_content_sha256")
    if not digest or list(data.splits) != ["train"]:
        raise DatasetSourceError(f"{folder}: not a corpus export (one train split and the corpus's content hash)")
    return digest, data.splits["train"]


def install_corpus(folder: str | Path, out_dir: str | Path, source: dict[str, Any] | None = None,
                   shard_docs: int = 2000, data: ExportedDataset | None = None) -> dict[str, Any]:
    """Write the corpus of a dataset folder as a corpus folder (shards + manifest.json, what
    ``py4 corpus generate`` writes and subset, mix and the held-out loss read). The documents
    must hash (over their ``sha256``, in order, as the generator counts it) to the card's
    ``corpus_content_sha256``: else DatasetSourceError, and no manifest is written. ``source``:
    where the folder came from (a Hub pin), kept in the manifest's ``dataset`` entry; ``data``:
    the folder already read (`read_dataset`), so it is not read and hashed again. Returns the
    manifest."""
    from collections import Counter

    from py4.corpus.output import MANIFEST, ShardWriter, text_sha256
    from py4.hub.dataset_source import DatasetSourceError, read_dataset
    from py4.runs import atomic_write_json

    data = read_dataset(folder) if data is None else data
    digest, documents = _corpus_of(data, folder)
    (Path(out_dir) / MANIFEST).unlink(missing_ok=True)  # a folder without a manifest is no corpus
    writer = ShardWriter(out_dir, shard_docs)
    per_rule: Counter = Counter()
    per_type: Counter = Counter()
    for record in documents:
        if "sha256" not in record:
            raise DatasetSourceError(f"{folder}: document {record.get('id')!r} has no sha256 (not a corpus export)")
        if text_sha256(record["text"]) != record["sha256"]:
            raise DatasetSourceError(f"{folder}: document {record.get('id')!r}: its text does not hash to its sha256")
        writer.write(record)
        per_rule.update(record.get("rules", []))
        per_type[record.get("type", "unknown")] += 1
    content = writer.close()
    if content != digest:
        raise DatasetSourceError(f"{folder}: its documents hash to {content}, the card's corpus_content_sha256 is "
                                 f"{digest}: the folder is not the corpus its card describes")
    manifest = {**(data.metadata.get("corpus_manifest") or {}),
                "docs": len(documents), "tokens": sum(int(r.get("tokens", 0)) for r in documents),
                "per_rule": dict(sorted(per_rule.items())), "per_type": dict(sorted(per_type.items())),
                "content_sha256": content, "shards": writer.shards,
                "dataset": {**(source or {}), "folder": str(Path(folder).resolve()),
                            "content_sha256": data.metadata["content_sha256"]}}
    atomic_write_json(Path(out_dir) / MANIFEST, manifest)
    return manifest
