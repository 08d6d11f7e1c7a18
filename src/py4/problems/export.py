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
from py4.problems.schema import CANARY, SPLITS, Problem

JSON_COLUMNS = ["tests", "provenance"]


def export_bank(out_dir: str | Path, version: str = "v1", *, force: bool = False) -> dict[str, Any]:
    """Write the bank `version` as a dataset folder; returns write_dataset's summary.

    Raises DatasetExportError when the bank holds rule-probe text (it must not ship so).
    """
    from py4.fileio import read_json_object
    from py4.probes.verify import bank_leaks
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
                    "No row contains the text of any rule probe (checked by `py4.probes.verify.bank_leaks` "
                    "when this folder was written).",
                    "Test splits share no family with training splits."],
        json_columns=JSON_COLUMNS, tags=["code", "programming-language"],
        extra_metadata={"bank_version": version, "canary": CANARY})
    return write_dataset(out_dir, {s: rows for s, rows in splits.items() if rows}, card, force=force)


def _row(problem: Problem) -> dict[str, Any]:
    return problem.model_dump(mode="json")
