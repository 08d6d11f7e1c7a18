"""A private Hugging Face Hub cache holding the stand-ins at the campaign's pinned revisions.

The layout is huggingface_hub's own (``HF_HUB_CACHE``)::

    models--google--gemma-4-12b/
        blobs/<sha256>                       file contents
        refs/main, refs/023679ed             -> the full commit hash
        snapshots/<commit>/config.json ...   relative symlinks into blobs/

The campaign pins abbreviated revisions (``023679ed``). huggingface_hub treats a revision
that is not a full 40-hex commit as a ref name and reads ``refs/<revision>``, so each pin
gets a ref file pointing at a full commit that starts with the pin. With
``HF_HUB_OFFLINE=1`` and this folder as ``HF_HUB_CACHE``, ``from_pretrained(hub_id,
revision=pin)`` — the project's real loading code — resolves to the stand-in.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Literal

RepoType = Literal["model", "dataset"]


def repo_folder_name(repo_id: str, repo_type: RepoType = "model") -> str:
    """``models--owner--name`` / ``datasets--owner--name``, as huggingface_hub names them."""
    return f"{repo_type}s--" + repo_id.replace("/", "--")


def full_commit(repo_id: str, revision: str | None) -> str:
    """A deterministic 40-hex commit that starts with ``revision`` (the campaign's short pin).

    ``None`` (an unpinned reference, served from ``main``) gives a commit made from the id alone.
    """
    revision = (revision or "").lower()
    if len(revision) == 40:
        return revision
    if any(c not in "0123456789abcdef" for c in revision):
        raise ValueError(f"revision {revision!r} of {repo_id}: expected a (short) hex commit")
    tail = hashlib.sha1(f"{repo_id}@{revision}".encode()).hexdigest()
    return (revision + tail)[:40]


def snapshot_dir(cache_dir: str | Path, repo_id: str, revision: str | None, repo_type: RepoType = "model") -> Path:
    """Where ``repo_id`` at ``revision`` lives in the cache (it may not exist yet)."""
    return Path(cache_dir) / repo_folder_name(repo_id, repo_type) / "snapshots" / full_commit(repo_id, revision)


def install_snapshot(cache_dir: str | Path, repo_id: str, revision: str | None, source: str | Path,
                     repo_type: RepoType = "model", main: bool = True) -> Path:
    """Copy the files of ``source`` (a folder) into the cache as ``repo_id`` at ``revision``.

    Files go to ``blobs/`` under their sha256 and are linked from the snapshot; the ref named
    ``revision`` (and ``main`` unless ``main=False``; only ``main`` when ``revision`` is None)
    points at the snapshot's commit.
    Replaces an existing snapshot of the same revision. Returns the snapshot folder.
    """
    repo = Path(cache_dir) / repo_folder_name(repo_id, repo_type)
    commit = full_commit(repo_id, revision)
    snap = repo / "snapshots" / commit
    if snap.exists():
        shutil.rmtree(snap)
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    source = Path(source)
    files = sorted(p for p in source.rglob("*") if p.is_file())
    if not files:
        raise FileNotFoundError(f"stand-in {source}: no files to install as {repo_id}@{revision}")
    for path in files:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        blob = repo / "blobs" / digest
        if not blob.exists():
            shutil.copyfile(path, blob)
        link = snap / path.relative_to(source)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    (repo / "refs").mkdir(exist_ok=True)
    refs = ([revision] if revision else []) + (["main"] if main or not revision else [])
    for ref in refs:
        (repo / "refs" / ref).write_text(commit)  # no newline: huggingface_hub reads it verbatim
    return snap


def offline_env(cache_dir: str | Path) -> dict[str, str]:
    """Environment variables that make transformers / datasets read only this cache."""
    cache = str(Path(cache_dir).resolve())
    return {"HF_HUB_CACHE": cache, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}
