"""Where to look at each training run: its TensorBoard event folders and its stage log.

Every training stage reports to TensorBoard by default (``run.report_to: [tensorboard]``,
py4.train.common), which the trainer writes under ``<run>/runs/<date_host>/``; the campaign
runner sends each run's console output to ``_campaign/runs/<id>/stage.log``
(py4.campaign.progress). The report lists both, relative to the campaign folder, so
``tensorboard --logdir <campaign out>`` and the log's path are all a reader needs.
Only what is on disk is listed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from py4.campaign.progress import stage_log_path

TRAINING_STAGES = ("midtrain", "sft", "eft", "grpo")


def _relative(path: Path, root: Path) -> str:
    try:
        return os.path.relpath(path, root)
    except ValueError:  # another drive: keep it whole
        return str(path)


def training_logs(out_dir: str | Path, nodes: Iterable) -> list[dict[str, Any]]:
    """[{run, stage, tensorboard: [event folders], stage_log}] for the training runs that have either."""
    root = Path(out_dir)
    rows = []
    for node in nodes:
        if node.stage not in TRAINING_STAGES:
            continue
        events = sorted({p.parent for p in Path(node.run_dir).glob("runs/*/events.out.tfevents.*")})
        log = stage_log_path(root, node)
        if events or log.is_file():
            rows.append({"run": node.id, "stage": node.stage,
                         "tensorboard": [_relative(p, root) for p in events],
                         "stage_log": _relative(log, root) if log.is_file() else None})
    return rows


def training_logs_md(rows: list[dict[str, Any]], out_dir: str) -> list[str]:
    if not rows:
        return []
    out = ["", "## Training logs", "",
           f"TensorBoard: `tensorboard --logdir {out_dir}` (paths below are relative to it).", "",
           "| run | stage | TensorBoard events | console log |", "|---|---|---|---|"]
    for r in rows:
        events = "<br>".join(f"`{p}`" for p in r["tensorboard"]) or "—"
        log = f"`{r['stage_log']}`" if r["stage_log"] else "—"
        out.append(f"| {r['run']} | {r['stage']} | {events} | {log} |")
    return out
