"""Scripted calibration rows: what a perfect, a Python-3-only, a migrator and a core-rules-only
answerer score on the campaign's own test splits, with its own sample size.

They bound every model's certified rate from above and below (gold 1.0, python3 0.0; migrated is
the migrator's fidelity, core-only a model that learned the syntax and nothing else) and show what
n the models' rates stand on. No model is involved: ``py4 eval --policy NAME`` with the campaign's
evaluation config and overrides, run by the report into ``<out>/calibration/<policy>/`` and reused
while its command is unchanged (``calibration.json`` records it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from py4.fileio import atomic_write_json, read_json_object
from py4.report.layout import CALIBRATION_DIR, RESULTS_FILE

POLICIES = ("gold", "python3", "migrated", "core-only")
RECORD = "calibration.json"


def calibration_runs(spec) -> dict[str, str]:
    """policy -> its run folder under the campaign's out_dir."""
    out = spec.out_dir.rstrip("/")
    return {p: f"{out}/{CALIBRATION_DIR}/{p}" for p in POLICIES}


def calibration_call(spec, policy: str):
    """The ``eval`` stage run of a scripted policy on the campaign's splits, with its evaluation
    overrides (sample count, problem limit, episode limits), so that its n is the models' n."""
    from py4.overrides import overrides
    from py4.stages import StageCall

    ev = spec.evaluation
    return StageCall(stage="eval", config=ev.config, overrides=tuple(overrides(ev.overrides)),
                     options={"out": calibration_runs(spec)[policy], "policy": policy, "split": list(ev.splits),
                              "progress": False})


def calibration_argv(spec, policy: str) -> list[str]:
    """The command line of `calibration_call` (``py4 eval --policy NAME ...``): its record."""
    from py4.stages import argv

    return argv(calibration_call(spec, policy))


def record_calibration(spec, policy: str) -> None:
    """Mark the policy's run as made by its current command."""
    atomic_write_json(Path(calibration_runs(spec)[policy]) / RECORD, {"argv": calibration_argv(spec, policy)})


def is_current(spec, policy: str) -> bool:
    run = Path(calibration_runs(spec)[policy])
    try:
        recorded = json.loads((run / RECORD).read_text(encoding="utf-8"))["argv"]
    except (OSError, ValueError, KeyError):
        return False
    return (run / RESULTS_FILE).is_file() and recorded == calibration_argv(spec, policy)


def run_calibration(spec, log: Callable[[str], None] = print) -> list[str]:
    """Run each scripted policy whose run is missing or stale; returns the policies run.

    A run that fails is logged and left out (its rows show as not run), so that the rest of the
    report is still written."""
    from py4.errors import Py4Error
    from py4.stages import run_call

    ran = []
    for policy, run in calibration_runs(spec).items():
        if is_current(spec, policy):
            continue
        log(f"calibration: py4 eval --policy {policy} -> {run}")
        try:
            run_call(calibration_call(spec, policy))
        except Py4Error as exc:
            log(f"calibration: {policy} failed, not shown: {exc}")
            continue
        record_calibration(spec, policy)
        ran.append(policy)
    return ran


def calibration_rows(spec) -> list[dict[str, Any]]:
    """One row per (policy, split) of the runs that exist and are current; nothing is invented."""
    from py4.binomial import wilson
    from py4.report.intervals import certified_count

    rows = []
    for policy, run in calibration_runs(spec).items():
        if not is_current(spec, policy):
            continue
        res = read_json_object(Path(run, RESULTS_FILE))
        for split, s in res.get("splits", {}).items():
            k = certified_count(s.get("certified_rate"), s.get("episodes"))
            lo, hi = wilson(k, s["episodes"]) if k is not None else (None, None)
            rows.append({"policy": policy, "split": split, "certified_rate": s.get("certified_rate"),
                         "certified": k, "episodes": s.get("episodes"), "problems": s.get("problems"),
                         "ci_low": lo, "ci_high": hi})
    return rows
