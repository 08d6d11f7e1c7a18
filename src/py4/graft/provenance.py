"""Provenance of a graft: content hashes of the inputs, and the files taken from -it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from py4.graft.checkpoint import INDEX_NAME, Checkpoint, GraftError
from py4.runs import file_sha256
from py4.train.model_files import copy_files

__all__ = ["input_hashes", "copy_aux_files"]

_SMALL_FILE = 64 * 2**20  # files below this are always hashed in full


def _header_digest(path: Path) -> str:
    with open(path, "rb") as fh:
        n = int.from_bytes(fh.read(8), "little")
        return hashlib.sha256(fh.read(n)).hexdigest()


def input_hashes(ckpt: Checkpoint, mode: str) -> dict:
    """Per-file hashes of a checkpoint's weights, index and -it aux files, and their digest.

    ``full``: sha256 of every file. ``metadata``: weights by size and header sha256 only
    (fast; the data are not read), smaller files in full.
    """
    files: dict[str, dict] = {}
    candidates = list(ckpt.weight_files) + sorted(p for p in ckpt.folder.iterdir()
                                                 if p.is_file() and p.suffix in {".json", ".jinja", ".model", ".txt"})
    for path in candidates:
        rel = path.relative_to(ckpt.folder).as_posix()
        size = path.stat().st_size
        if mode == "metadata" and path.suffix == ".safetensors" and size > _SMALL_FILE:
            files[rel] = {"size": size, "header_sha256": _header_digest(path)}
        else:
            files[rel] = {"size": size, "sha256": file_sha256(path)}
    digest = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()
    return {"mode": mode, "digest": digest, "files": files}


def copy_aux_files(it: Checkpoint, out_dir: Path, names: list[str]) -> dict[str, dict]:
    """Copy config, tokenizer, chat template, generation config and processor files from the -it model
    (:func:`py4.train.model_files.copy_files`, the copier the training stages use too).

    Returns ``{file: {"from": "it", "sha256": ...}}`` for the files present. Raises
    GraftError when the -it model has no ``config.json`` (the grafted model could not be
    loaded) or when a weight index is listed (the graft writes its own).
    """
    if INDEX_NAME in names:
        raise GraftError(f"aux_files must not contain {INDEX_NAME}: the graft writes its own index")
    if not (it.folder / "config.json").is_file():
        raise GraftError(f"{it.describe()}: no config.json; the grafted model takes its config from -it")
    return copy_files(it.folder, out_dir, names, label="it")
