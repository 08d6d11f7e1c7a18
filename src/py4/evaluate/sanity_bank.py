"""The smoke study's train_sanity split: the gold problems a model was EFT-trained on.

A tiny model scores near zero on the test splits, so a broken loss mask, adapter or data
path would hide behind zeros. Evaluating the dose's own problems (memorisation is fine at
this scale) shows such breakage as a flat line: the certified rate must rise after EFT.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections import Counter
from pathlib import Path

from py4.errors import Py4Error
from py4.fileio import read_json_object
from py4.problems.bank import bank_paths
from py4.runs import RunRecorder, atomic_write_json


class SanityBankError(Py4Error, ValueError):
    """A dose that names no gold problem or one the bank does not hold, or a malformed dose
    manifest: the user's to fix (``py4 campaign sanity-bank`` prints it as one line, exit 2)."""


def write_sanity_bank(dose_dir: str | Path, out_dir: str | Path, version: str = "v1",
                      bank_dir: str | Path | None = None) -> int:
    """Copy the bank (the shipped one, or the one in ``bank_dir``: a campaign's pinned bank) to
    out_dir with the dose's gold problems moved to `train_sanity`; its manifest keeps the
    bank's own entries (a pinned bank's ``dataset`` provenance).

    Returns the number of train_sanity problems. Raises SanityBankError when the dose's manifest
    is missing or malformed (naming path:line), names no problem or a problem the bank does not
    hold; OSError when the bank version is not shipped or out_dir cannot be written. out_dir is a
    run folder: its ``run_manifest.json`` records the code, command line and library versions.
    """
    with RunRecorder(out_dir, None, kind="sanity_bank") as recorder:
        recorder.add_input("dose", path=Path(dose_dir) / "manifest.json")
        found = _write_sanity_bank(dose_dir, out_dir, version, bank_dir)
        recorder.add_output("bank", bank_paths(version, out_dir)[0], train_sanity=found)
    return found


def _write_sanity_bank(dose_dir: str | Path, out_dir: str | Path, version: str, bank_dir: str | Path | None) -> int:
    manifest = read_json_object(Path(dose_dir) / "manifest.json", error=SanityBankError,
                                missing="no such file (an EFT dose folder, written by py4 train eft_dose, is expected)")
    ids = set(manifest.get("problem_ids") or [])
    if not ids:
        raise SanityBankError(f"{dose_dir}/manifest.json: no problem_ids (a dose with gold rows is needed)")
    bank_path, manifest_path = bank_paths(version, bank_dir)
    lines, found = [], set()
    for line in gzip.decompress(bank_path.read_bytes()).decode("utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if row["id"] in ids:
            row["split"] = "train_sanity"
            found.add(row["id"])
        lines.append(json.dumps(row, ensure_ascii=False, sort_keys=True))
    if found != ids:
        raise SanityBankError(f"{dose_dir}: problems not in bank {version}: {sorted(ids - found)[:5]}")
    raw = ("\n".join(lines) + "\n").encode("utf-8")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    target_bank, target_manifest = bank_paths(version, out)
    target_bank.write_bytes(gzip.compress(raw, mtime=0))
    bank_manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    bank_manifest.update({"jsonl_sha256": hashlib.sha256(raw).hexdigest(),
                          "per_split": dict(Counter(json.loads(x)["split"] for x in lines)),
                          "train_sanity_from": {"dose": str(dose_dir), "sha256": manifest.get("sha256")}})
    atomic_write_json(target_manifest, bank_manifest)
    return len(found)
