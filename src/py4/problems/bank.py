"""Load the shipped (or a rebuilt) problem bank, checking its content hash."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

from py4.errors import Py4Error
from py4.problems.schema import Problem

__all__ = ["BankError", "bank_paths", "bank_provenance", "load_bank", "load_manifest", "find_problem"]

DATA_DIR = Path(__file__).parent / "data"


class BankError(Py4Error, ValueError):
    """The bank files are missing, corrupt or do not match their manifest."""


def bank_paths(version: str = "v1", data_dir: str | Path | None = None) -> tuple[Path, Path]:
    """(bank .jsonl.gz, manifest .json) paths for ``version`` under ``data_dir``."""
    d = Path(data_dir) if data_dir else DATA_DIR
    return d / f"bank-{version}.jsonl.gz", d / f"bank-{version}.manifest.json"


def load_manifest(version: str = "v1", data_dir: str | Path | None = None) -> dict:
    """The bank manifest; raises BankError when it is missing or not JSON."""
    _, manifest_path = bank_paths(version, data_dir)
    try:
        return json.loads(manifest_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BankError(f"{manifest_path}: no bank manifest (run `py4 problems build`)") from None
    except json.JSONDecodeError as exc:
        raise BankError(f"{manifest_path}: not JSON ({exc.msg} at line {exc.lineno})") from None


def load_bank(version: str = "v1", data_dir: str | Path | None = None, verify: bool = True) -> list[Problem]:
    """All problems of the bank, sorted by id.

    Raises BankError when a file is missing, the content hash differs from the
    manifest's (with ``verify``), or a line is not a valid problem (naming the line).
    """
    bank_path, _ = bank_paths(version, data_dir)
    manifest = load_manifest(version, data_dir)
    try:
        raw = gzip.decompress(bank_path.read_bytes())
    except FileNotFoundError:
        raise BankError(f"{bank_path}: no bank file (run `py4 problems build`)") from None
    except (OSError, EOFError) as exc:
        raise BankError(f"{bank_path}: not a gzip file ({exc})") from None
    if verify and hashlib.sha256(raw).hexdigest() != manifest.get("jsonl_sha256"):
        raise BankError(f"{bank_path}: content hash does not match {manifest.get('file')} manifest; rebuild the bank")
    problems = []
    for lineno, line in enumerate(raw.decode("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            problems.append(Problem.model_validate_json(line))
        except ValueError as exc:
            raise BankError(f"{bank_path}:{lineno}: invalid problem: {exc}") from None
    return problems


def bank_provenance(version: str = "v1", data_dir: str | Path | None = None) -> dict:
    """What a run records of the bank it read: version, file, content hash, and for a bank taken
    from the Hub (`py4.problems.export.install_bank`) the ``dataset`` it came from (Hub id, pin,
    commit, the card's content hash). Raises BankError when the manifest is missing."""
    bank_path, _ = bank_paths(version, data_dir)
    manifest = load_manifest(version, data_dir)
    return {"version": version, "path": str(bank_path), "jsonl_sha256": manifest.get("jsonl_sha256"),
            **({"dataset": manifest["dataset"]} if manifest.get("dataset") else {})}


def find_problem(problems: list[Problem], problem_id: str) -> Problem:
    """The problem with this id; raises KeyError with close ids when absent."""
    import difflib

    for p in problems:
        if p.id == problem_id:
            return p
    close = difflib.get_close_matches(problem_id, [p.id for p in problems], n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise KeyError(f"no problem {problem_id!r} in the bank{hint}")
