"""The problem bank as a Hub dataset: one split per real split (`eft_pool`, `grpo`,
`test_heldin`, `test_heldout`, `eft_large`, …), a dataset card with the bank's content hash,
how it was built, its canary and the check that no rule-probe text is in it.

`tests` and `provenance` mix value types across problems, so they are JSON text columns
(the card says so); everything else is a plain column.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from py4.hub.dataset_folder import DatasetCard, DatasetExportError, write_dataset
from py4.hub.dataset_source import ExportedDataset
from py4.problems.schema import CANARY, SPLITS, Problem

JSON_COLUMNS = ["tests", "provenance"]


def export_bank(out_dir: str | Path, version: str = "v1", *, force: bool = False) -> dict[str, Any]:
    """Write the bank `version` as a dataset folder; returns write_dataset's summary.

    Raises DatasetExportError when the bank holds rule-probe text (it must not ship so).
    """
    from py4.fileio import read_json_object
    from py4.problems.probe_set.verify import bank_leaks
    from py4.problems.bank import bank_paths, load_bank

    problems = load_bank(version)
    leaks = bank_leaks(problems)
    if leaks:
        raise DatasetExportError(f"bank {version}: {len(leaks)} problems contain rule-probe text "
                                 f"(first: {sorted(leaks)[0]}); refusing to export it")
    bank_file, manifest_file = bank_paths(version)
    manifest = read_json_object(manifest_file)
    splits = {split: [_row(p) for p in problems if p.split == split] for split in SPLITS}
    card = DatasetCard(
        pretty_name=f"Python-4 problem bank {version}",
        summary=("Programming problems for the Python-4 study: each has a prompt, a Python-4 "
                 "signature, structured tests (inputs and expected outputs), the rules of Python-4 "
                 "it exercises, a Boa-certified gold solution and its Python 3 reference. Splits: "
                 "`eft_pool`/`eft_large` (EFT gold), `grpo` (RL), `test_heldin`/`test_heldout` "
                 "(evaluation on held-in and held-out rules), `train_sanity`, `imported`."),
        license="apache-2.0",
        how_made={"command": f"py4 problems build (version {version})",
                  "bank file": f"{bank_file.name} sha256 {manifest.get('jsonl_sha256')}",
                  "config": manifest.get("config"), "families": manifest.get("families")},
        guarantees=[f"Every row carries the canary `{CANARY}`: a training corpus that contains it "
                    "contains the bank.",
                    "No row contains the text of any rule probe (checked by `py4.problems.probe_set.verify.bank_leaks` "
                    "when this folder was written).",
                    "Test splits share no family with training splits."],
        json_columns=JSON_COLUMNS, tags=["code", "programming-language"],
        extra_metadata={"bank_version": version, "canary": CANARY})
    return write_dataset(out_dir, {s: rows for s, rows in splits.items() if rows}, card, force=force)


def _row(problem: Problem) -> dict[str, Any]:
    return problem.model_dump(mode="json")


def bank_from_dataset(folder: str | Path) -> tuple[str, list[Problem]]:
    """(bank version, problems sorted by id) of a bank dataset folder (`export_bank`'s, e.g. a
    Hub snapshot). Raises DatasetSourceError when the folder is not an intact bank export."""
    from py4.hub.dataset_source import read_dataset

    return _bank_of(read_dataset(folder), folder)


def _bank_of(data: ExportedDataset, folder: str | Path) -> tuple[str, list[Problem]]:
    from py4.hub.dataset_source import DatasetSourceError

    version = data.metadata.get("bank_version")
    if not version:
        raise DatasetSourceError(f"{folder}: not a bank export (its card's py4 block has no bank_version)")
    problems = []
    for split, rows in data.splits.items():
        for n, row in enumerate(rows, 1):
            try:
                problems.append(Problem.model_validate(row))
            except ValueError as exc:
                raise DatasetSourceError(f"{folder}: split {split}, row {n}: not a problem: {exc}") from None
    return version, sorted(problems, key=lambda p: p.id)


def install_bank(folder: str | Path, data_dir: str | Path, source: dict[str, Any] | None = None,
                 data: ExportedDataset | None = None) -> Path:
    """Write the bank of a dataset folder into ``data_dir`` in the shipped layout
    (``bank-<version>.jsonl.gz`` and its manifest), so ``load_bank(version, data_dir)`` and a
    stage's ``bank_dir`` read it. The file's bytes are those `py4 problems build` writes for
    the same problems, so its hash is the original bank's. ``source``: where the folder came
    from (a Hub pin: id, revision, commit), kept in the manifest's ``dataset`` entry beside the
    card's content hash; ``data``: the folder already read (`read_dataset`), so it is not read and
    hashed again. Returns the bank file."""
    import hashlib
    from collections import Counter

    from py4.hub.dataset_source import read_dataset
    from py4.problems.bank import bank_paths
    from py4.problems.build import _gzip_deterministic, _jsonl
    from py4.runs import atomic_write_json

    data = read_dataset(folder) if data is None else data
    version, problems = _bank_of(data, folder)
    bank_path, manifest_path = bank_paths(version, data_dir)
    bank_path.parent.mkdir(parents=True, exist_ok=True)
    raw = _jsonl(problems)
    tmp = bank_path.with_suffix(".tmp")
    tmp.write_bytes(_gzip_deterministic(raw))
    tmp.replace(bank_path)
    atomic_write_json(manifest_path, {
        "version": version, "problems": len(problems), "families": len({p.family for p in problems}),
        "per_split": dict(sorted(Counter(p.split for p in problems).items())),
        "jsonl_sha256": hashlib.sha256(raw).hexdigest(), "file": bank_path.name,
        "dataset": {**(source or {}), "folder": str(Path(folder).resolve()),
                    "content_sha256": data.metadata["content_sha256"]}})
    return bank_path
