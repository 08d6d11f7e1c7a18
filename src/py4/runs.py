"""Run folders and manifests.

A run is a folder: ``resolved_config.yaml``, ``run_manifest.json`` (inputs with
revisions and content hashes, hardware, library versions, provenance — the code's git commit
and dirty flag or the installed version, and the command line —, outputs, timings, status),
logs and outputs. Writes are atomic (write to a temporary file, then rename) so an
interrupted run never leaves a half-written manifest that a resume would trust.

    with RunRecorder(out_dir, config, kind="graft") as run:
        run.add_input("mid", path=mid_dir)
        ...
        run.set(tensors_grafted=n)
    # on success: status "done"; on an exception: status "failed" with the error
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import platform
import socket
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any, Literal, cast, get_args

import pydantic

from py4.errors import FileFormatError
from py4.fileio import atomic_write_json, atomic_write_text, read_json_object, temp_file_beside

__all__ = [
    "MANIFEST_NAME",
    "atomic_write_text",
    "temp_file_beside",
    "atomic_write_json",
    "file_sha256",
    "tree_sha256",
    "hardware_info",
    "library_versions",
    "code_version",
    "checkout_version",
    "provenance",
    "provenance_fields",
    "RunStatus",
    "RUN_STATUSES",
    "read_manifest",
    "run_status",
    "run_is_done",
    "RunRecorder",
]

MANIFEST_NAME = "run_manifest.json"

RunStatus = Literal["running", "done", "failed", "interrupted"]
"""A run manifest's ``status``: ``running`` while it runs (and after a crash), ``done``, ``failed``
(an exception, recorded in ``error``) or ``interrupted`` (Ctrl-C, or a SIGTERM turned into it)."""
RUN_STATUSES: tuple[RunStatus, ...] = get_args(RunStatus)
_HASH_CHUNK = 1 << 20


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_HASH_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def tree_sha256(path: str | Path, exclude: Iterable[str] = (MANIFEST_NAME,),
                file_digest: Callable[[Path], str] = file_sha256) -> str:
    """Content hash of a file or of a folder (relative paths and file contents, sorted);
    ``file_digest`` hashes each file (py4.campaign.compare hashes them with paths rewritten)."""
    path = Path(path)
    if path.is_file():
        return file_digest(path)
    excluded = set(exclude)
    h = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = file.relative_to(path).as_posix()
        if file.name in excluded or any(part.startswith(".") for part in file.relative_to(path).parts):
            continue
        h.update(rel.encode() + b"\0" + file_digest(file).encode() + b"\n")
    return h.hexdigest()


def hardware_info() -> dict[str, Any]:
    info: dict[str, Any] = {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
    }
    try:
        import torch

        info["cuda_available"] = bool(torch.cuda.is_available())
        if torch.cuda.is_available():
            info["gpus"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    except ImportError:  # the language tools do not need torch
        pass
    return info


_LIBRARIES = ("py4", "torch", "transformers", "trl", "peft", "accelerate", "datasets", "tokenizers", "safetensors",
              "pydantic", "vllm")


def library_versions(names: Iterable[str] = _LIBRARIES) -> dict[str, str | None]:
    from importlib import metadata

    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def _git(checkout: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(checkout), *args], capture_output=True, text=True, timeout=30,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


@cache
def code_version() -> dict[str, Any]:
    """Which py4 code this process runs (:func:`checkout_version` of the imported package), read
    once per process: the code a process runs is the code it imported when it started."""
    from importlib import metadata

    from py4.version import __version__

    try:
        version: str | None = metadata.version("py4")
    except metadata.PackageNotFoundError:
        version = __version__
    return checkout_version(Path(__file__).resolve().parent, version)  # this module's folder: src/py4


def checkout_version(package_dir: Path, version: str | None) -> dict[str, Any]:
    """``{"package": version}``, plus, when ``package_dir`` is ``src/py4`` of a git work tree, its
    ``git_commit`` and ``git_dirty`` (changed or untracked files, ignored ones aside)."""
    entry: dict[str, Any] = {"package": version}
    top = _git(package_dir, "rev-parse", "--show-toplevel")
    if top is None or (Path(top.strip()) / "src" / package_dir.name).resolve() != package_dir.resolve():
        return entry  # an installed copy, not a checkout's work tree
    commit = _git(package_dir, "rev-parse", "HEAD")
    status = _git(package_dir, "status", "--porcelain")
    entry["git_commit"] = commit.strip() if commit else None
    entry["git_dirty"] = bool(status.strip()) if status is not None else None
    return entry


def provenance() -> dict[str, Any]:
    """What made a run: the code (:func:`code_version`) and the command line that started this
    process: the interpreter and its arguments as given (``sys.orig_argv``), so that a process
    started as ``python -m py4 ARGS`` (the campaign runner's, the rehearsal's, accelerate's) records
    ``-m py4``, which ``sys.argv`` replaces with the path of py4/__main__.py (and ``python -c
    CODE`` records CODE, not ``-c``)."""
    return {"code": code_version(), "command": [sys.executable, *sys.orig_argv[1:]]}


def provenance_fields(libraries: Iterable[str] = _LIBRARIES) -> dict[str, Any]:
    """The ``libraries`` (:func:`library_versions`) and ``provenance`` (:func:`provenance`) entries
    every manifest carries: a run manifest's (`RunRecorder`), and those of a data folder, the smoke
    assets, a rehearsal or a campaign report, which are not run folders of their own."""
    return {"libraries": library_versions(libraries), "provenance": provenance()}


def read_manifest(run_dir: str | Path) -> dict[str, Any] | None:
    """The run's manifest, or None when there is none.

    A manifest that is not a JSON object (edited by hand, or cut short by a full disk: the writes
    are atomic) raises FileFormatError naming ``path:line``: taking it for no manifest would run a
    done run again, or resume over it.
    """
    path = Path(run_dir) / MANIFEST_NAME
    if not path.exists():
        return None
    return read_json_object(path, missing="no such file")


def run_status(run_dir: str | Path) -> RunStatus | None:
    """The status in the run's manifest (None: no manifest). Raises FileFormatError, naming the
    file, for a manifest that is malformed or whose status is none of RUN_STATUSES."""
    manifest = read_manifest(run_dir)
    if manifest is None:
        return None
    status = manifest.get("status")
    if status not in RUN_STATUSES:
        raise FileFormatError(f"{Path(run_dir) / MANIFEST_NAME}: status {status!r}: "
                              f"expected one of {', '.join(RUN_STATUSES)}")
    return cast(RunStatus, status)


def run_is_done(run_dir: str | Path) -> bool:
    manifest = read_manifest(run_dir)
    return bool(manifest and manifest.get("status") == "done")


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


class RunRecorder:
    """Writes a run folder's resolved config and manifest; a context manager.

    The manifest is rewritten (atomically) on every ``set``/``add_input``/``add_output``
    so that a crash leaves the last known state on disk. On normal exit the status is
    ``done``; on an exception it is ``failed`` with the error, and the exception
    propagates.
    """

    def __init__(self, run_dir: str | Path, config: pydantic.BaseModel | None, kind: str):
        from py4.run_owner import check_not_owned

        check_not_owned(run_dir)  # a campaign's run folder is its runner's to write (or --force)
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._t0 = time.monotonic()
        previous = read_manifest(self.run_dir) or {}
        self.manifest: dict[str, Any] = {
            "kind": kind,
            "status": "running",
            "started_at": _now(),
            "attempt": int(previous.get("attempt", 0)) + 1,
            "inputs": {},
            "outputs": {},
            "hardware": hardware_info(),
            **provenance_fields(),
            "timings": {},
        }
        if config is not None:
            from py4.config import dump_config, write_resolved_config

            write_resolved_config(self.run_dir, config)
            self.manifest["config"] = config.model_dump(mode="json")
            self.manifest["config_sha256"] = hashlib.sha256(dump_config(config).encode()).hexdigest()
        self.flush()

    def flush(self) -> None:
        atomic_write_json(self.run_dir / MANIFEST_NAME, self.manifest)

    def set(self, **fields: Any) -> None:
        self.manifest.update(fields)
        self.flush()

    def add_input(self, name: str, *, path: str | Path | None = None, hub_id: str | None = None,
                  revision: str | None = None, hash_content: bool = True, **extra: Any) -> None:
        entry: dict[str, Any] = {k: v for k, v in {"hub_id": hub_id, "revision": revision}.items() if v}
        if path is not None:
            entry["path"] = str(path)
            if hash_content and Path(path).exists():
                entry["sha256"] = tree_sha256(path)
        entry.update(extra)
        self.manifest["inputs"][name] = entry
        self.flush()

    def add_model_input(self, name: str, model: str, *, endpoint: str | None = None,
                        weights: str | None = None) -> None:
        """Record a model the run evaluates: its served name at ``endpoint`` (with ``weights``, the
        folder the server serves, when known), else a local folder or file, else a Hub id. Weights
        are not hashed (a 31B folder would take minutes); the run that wrote them records them."""
        if endpoint is not None and not Path(model).is_file():
            self.add_input(name, path=weights, hash_content=False, served_model=model, endpoint=endpoint)
        elif Path(model).exists():
            self.add_input(name, path=model, hash_content=Path(model).is_file())
        else:
            self.add_input(name, hub_id=model)

    def add_output(self, name: str, path: str | Path, hash_content: bool = True, **extra: Any) -> None:
        """Record an output; a model folder gets its model card first (hashed with it)."""
        from py4.hub.model_card import is_model_folder, write_model_card

        if is_model_folder(path):
            write_model_card(path, self.manifest)
        entry: dict[str, Any] = {"path": str(path)}
        if hash_content and Path(path).exists():
            entry["sha256"] = tree_sha256(path)
        entry.update(extra)
        self.manifest["outputs"][name] = entry
        self.flush()

    def timing(self, name: str, seconds: float) -> None:
        self.manifest["timings"][name] = round(seconds, 4)
        self.flush()

    def __enter__(self) -> "RunRecorder":
        return self

    def __exit__(self, exc_type, exc, tb) -> Literal[False]:
        self.manifest["timings"]["total_s"] = round(time.monotonic() - self._t0, 4)
        self.manifest["finished_at"] = _now()
        status: RunStatus = "done"
        if exc is not None:
            status = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
            self.manifest["error"] = "".join(traceback.format_exception_only(exc_type, exc)).strip()
        self.manifest["status"] = status
        self.flush()
        return False
