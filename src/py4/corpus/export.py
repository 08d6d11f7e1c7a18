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


def export_corpus(corpus_dir: str | Path, out_dir: str | Path, *, name: str | None = None,
                  force: bool = False) -> dict[str, Any]:
    """Write the corpus at `corpus_dir` as a dataset folder; returns write_dataset's summary.

    Raises CorpusError for a folder that is no corpus, DatasetExportError when a document
    holds rule-probe text.
    """
    from py4.probes.verify import corpus_leaks

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
                    "`py4.probes.verify.corpus_leaks` when this folder was written).",
                    "Every `py4` code block compiled and ran under Boa as the document says."],
        json_columns=json_columns, tags=["synthetic", "code"],
        extra_metadata={"corpus_content_sha256": manifest.get("content_sha256")})
    return write_dataset(out_dir, {"train": documents}, card, force=force)


def corpus_from_dataset(folder: str | Path) -> tuple[str, list[dict[str, Any]]]:
    """(the corpus's content hash, its documents) of a corpus dataset folder (`export_corpus`'s,
    e.g. a Hub snapshot), in the corpus's order with dict fields decoded. Raises
    DatasetSourceError when the folder is not an intact corpus export."""
    from py4.hub.dataset_source import DatasetSourceError, read_dataset

    data = read_dataset(folder)
    digest = data.metadata.get("corpus_content_sha256")
    if not digest or list(data.splits) != ["train"]:
        raise DatasetSourceError(f"{folder}: not a corpus export (one train split and the corpus's content hash)")
    return digest, data.splits["train"]
