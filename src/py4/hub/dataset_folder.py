"""A dataset folder in the Hub's layout: one JSONL shard per split under `data/` and a
dataset card whose `configs` metadata names them and whose `dataset_info` states their features
and sizes, so `datasets.load_dataset(folder)`, the Hub viewer and `load_dataset("ORG/NAME",
revision=...)` all see the real splits with the stated schema.

Columns whose values mix types across rows (a problem's tests, provenance) are stored as JSON
text: Arrow needs one type per column, and the card says which columns to decode.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from py4.errors import Py4Error
from py4.fileio import atomic_write_text
from py4.hub.cards import CARD_NAME, render_card

DATA_DIR = "data"


class DatasetExportError(Py4Error, ValueError):
    """A dataset cannot be exported as asked (an empty split, a bad split name, a full folder)."""


@dataclass
class DatasetCard:
    """What a dataset card says beyond its splits."""

    pretty_name: str
    summary: str
    license: str
    how_made: dict[str, Any]
    guarantees: list[str] = field(default_factory=list)
    json_columns: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    extra_metadata: dict[str, Any] = field(default_factory=dict)


def write_dataset(out_dir: str | Path, splits: dict[str, Iterable[dict[str, Any]]], card: DatasetCard,
                  *, force: bool = False) -> dict[str, Any]:
    """Write `out_dir/data/<split>-00000-of-00001.jsonl` and `out_dir/README.md`.

    Returns a summary: rows per split and the content hash (sha256 over the shards, in split
    order). Raises DatasetExportError for an empty split, a split name the Hub refuses, or an
    `out_dir` that already holds files other than a previous export (unless `force`).
    """
    out = Path(out_dir)
    _check_target(out, force)
    rows: dict[str, int] = {}
    content = hashlib.sha256()
    (out / DATA_DIR).mkdir(parents=True, exist_ok=True)
    for split, records in splits.items():
        if not split.replace("_", "").isalnum():
            raise DatasetExportError(f"split name {split!r}: the Hub allows letters, digits and _ only")
        lines = [json.dumps(_with_json_columns(r, card.json_columns), ensure_ascii=False, sort_keys=True)
                 for r in records]
        if not lines:
            raise DatasetExportError(f"split {split!r} has no rows")
        text = "\n".join(lines) + "\n"
        atomic_write_text(out / DATA_DIR / _shard(split), text)
        content.update(text.encode())
        rows[split] = len(lines)
    digest = content.hexdigest()
    atomic_write_text(out / CARD_NAME, _card_text(card, rows, digest, dataset_info(out, list(rows))))
    return {"out": str(out), "rows": rows, "content_sha256": digest}


def dataset_info(out: Path, splits: list[str]) -> dict[str, Any]:
    """The card's ``dataset_info`` (the Hub's schema of the data): the features as ``datasets``
    infers them from the shards (one schema over all splits, a column null in one split taking
    the type it has in another), and per split its rows and Arrow size; the shards' bytes on disk
    as ``download_size``."""
    import pyarrow as pa
    import pyarrow.json as paj
    from datasets import Features

    tables = {split: paj.read_json(out / DATA_DIR / _shard(split)) for split in splits}
    schema = pa.unify_schemas([t.schema for t in tables.values()], promote_options="permissive")
    sizes = {split: table.nbytes for split, table in tables.items()}
    return {"features": Features.from_arrow_schema(schema)._to_yaml_list(),
            "splits": [{"name": split, "num_bytes": sizes[split], "num_examples": tables[split].num_rows}
                       for split in splits],
            "download_size": sum((out / DATA_DIR / _shard(split)).stat().st_size for split in splits),
            "dataset_size": sum(sizes.values())}


def _shard(split: str) -> str:
    return f"{split}-00000-of-00001.jsonl"


def _check_target(out: Path, force: bool) -> None:
    if not out.exists() or force:
        return
    ours = {CARD_NAME, DATA_DIR}
    other = sorted(p.name for p in out.iterdir() if p.name not in ours)
    if other:
        raise DatasetExportError(f"{out} holds other files ({', '.join(other[:3])}): choose an empty "
                                 "folder, or pass --force to write into it")


def _with_json_columns(record: dict[str, Any], json_columns: list[str]) -> dict[str, Any]:
    return {k: json.dumps(v, sort_keys=True) if k in json_columns else v for k, v in record.items()}


def _card_text(card: DatasetCard, rows: dict[str, int], digest: str, info: dict[str, Any]) -> str:
    metadata: dict[str, Any] = {
        "pretty_name": card.pretty_name,
        "license": card.license,
        "tags": ["python4", "py4", *card.tags],
        "configs": [{"config_name": "default",
                     "data_files": [{"split": s, "path": f"{DATA_DIR}/{s}-*.jsonl"} for s in rows]}],
        "dataset_info": info,
        "py4": {"content_sha256": digest, "rows": rows, "json_columns": card.json_columns,
                **card.extra_metadata},
    }
    decode = ""
    if card.json_columns:
        cols = ", ".join(f"`{c}`" for c in card.json_columns)
        decode = (f"\nColumns {cols} hold JSON text (their values mix types across rows, which Arrow "
                  "cannot hold in one column): decode them with `json.loads`.\n")
    splits = "\n".join(f"| `{s}` | {n} |" for s, n in rows.items())
    made = "\n".join(f"- {k}: {json.dumps(v) if isinstance(v, (dict, list)) else v}"
                     for k, v in card.how_made.items())
    guarantees = "\n".join(f"- {g}" for g in card.guarantees)
    body = f"""# {card.pretty_name}

{card.summary.strip()}

```python
from datasets import load_dataset
ds = load_dataset("<this folder or ORG/NAME>")   # revision="<commit>" to pin it
```
{decode}
| split | rows |
|---|---|
{splits}

Content hash (sha256 over the shards in split order): `{digest}`

## How it was made
{made}

## Guarantees
{guarantees or "- none stated"}
"""
    return render_card(metadata, body)
