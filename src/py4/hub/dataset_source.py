"""Reading back a dataset the toolkit exported (`py4.hub.dataset_folder`), from a folder or from
the Hugging Face cache by Hub id and pinned revision.

`pinned_dataset_folder` finds ``datasets--ORG--NAME/snapshots/<commit>/`` with
``huggingface_hub.snapshot_download(..., local_files_only=True)``: only what the cache already
holds, so a campaign's dataset pins are checked offline, and a short pin resolves through the
cache's ``refs/<pin>`` as the Hub client resolves it. `read_dataset` reads the shards the card's
``configs`` name, checks them against the card's content hash (a snapshot is what was
exported, not a folder edited since) and decodes the JSON-text columns the card lists, so each
row is the record the exporter was given.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from py4.errors import Py4Error
from py4.hub.cards import CARD_NAME


class DatasetSourceError(Py4Error, ValueError):
    """A dataset pin that the cache does not hold, or a folder that is not an intact export."""


@dataclass
class ExportedDataset:
    folder: Path
    metadata: dict[str, Any]
    """The card's ``py4`` block: content hash, rows, JSON columns and the exporter's own keys."""
    splits: dict[str, list[dict[str, Any]]]


def pinned_dataset_folder(hub_id: str, revision: str | None, cache_dir: str | Path | None = None) -> Path:
    """The snapshot folder of dataset ``hub_id`` at ``revision`` in the Hugging Face cache
    (``HF_HUB_CACHE`` unless ``cache_dir``); never the network. Raises DatasetSourceError for an
    unpinned reference or a revision the cache does not hold."""
    if not revision:
        raise DatasetSourceError(f"dataset {hub_id}: no revision; a Hub dataset is read at a pinned commit")
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return Path(snapshot_download(hub_id, repo_type="dataset", revision=revision, cache_dir=cache_dir,
                                      local_files_only=True))
    except (LocalEntryNotFoundError, FileNotFoundError) as exc:
        raise DatasetSourceError(f"dataset {hub_id}@{revision} is not in the Hugging Face cache "
                                 f"({cache_dir or 'HF_HUB_CACHE'}): download it first, e.g. `hf download "
                                 f"{hub_id} --repo-type dataset --revision {revision}`") from exc


def read_dataset(folder: str | Path) -> ExportedDataset:
    """Every split of an exported dataset folder, rows decoded. Raises DatasetSourceError when
    the folder has no card of ours, a shard is missing, or the shards' hash is not the card's."""
    folder = Path(folder)
    card = folder / CARD_NAME
    meta = _card_metadata(card)
    py4 = meta.get("py4")
    if not isinstance(py4, dict) or not isinstance(py4.get("rows"), dict):
        raise DatasetSourceError(f"{card}: no py4 block with rows in its metadata (not a dataset py4 exported)")
    paths = _split_paths(meta, card)
    json_columns = set(py4.get("json_columns") or [])
    content = hashlib.sha256()
    splits: dict[str, list[dict[str, Any]]] = {}
    for split in py4["rows"]:  # the content hash runs over the shards in this order
        if split not in paths:
            raise DatasetSourceError(f"{card}: split {split!r} of py4.rows has no data_files entry")
        text = "".join(p.read_text(encoding="utf-8") for p in paths[split])
        content.update(text.encode())
        splits[split] = [_decoded(json.loads(line), json_columns) for line in text.splitlines() if line.strip()]
    digest = content.hexdigest()
    if digest != py4.get("content_sha256"):
        raise DatasetSourceError(f"{folder}: its shards hash to {digest}, the card says {py4.get('content_sha256')}: "
                                 "the folder is not the export its card describes")
    return ExportedDataset(folder, py4, splits)


def _card_metadata(card: Path) -> dict[str, Any]:
    import yaml

    try:
        text = card.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetSourceError(f"{card}: no dataset card") from None
    parts = text.split("---\n", 2)
    if not text.startswith("---\n") or len(parts) < 3:
        raise DatasetSourceError(f"{card}: no YAML metadata between --- lines")
    meta = yaml.safe_load(parts[1])
    if not isinstance(meta, dict):
        raise DatasetSourceError(f"{card}: its metadata is not a mapping")
    return meta


def _split_paths(meta: dict[str, Any], card: Path) -> dict[str, list[Path]]:
    configs = meta.get("configs") or []
    default = next((c for c in configs if isinstance(c, dict) and c.get("config_name") == "default"), None)
    if default is None:
        raise DatasetSourceError(f"{card}: no default entry in its configs metadata")
    paths = {}
    for entry in default.get("data_files") or []:
        found = sorted(card.parent.glob(entry["path"]))
        if not found:
            raise DatasetSourceError(f"{card}: split {entry['split']!r}: no file matches {entry['path']}")
        paths[entry["split"]] = found
    return paths


def _decoded(row: dict[str, Any], json_columns: set[str]) -> dict[str, Any]:
    return {k: json.loads(v) if k in json_columns and isinstance(v, str) else v for k, v in row.items()}
