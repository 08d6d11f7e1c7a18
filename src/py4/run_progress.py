"""A run's own progress (step / total, loss, rows), written for the campaign runner to show.

The campaign runner names a file in ``PY4_PROGRESS_FILE`` while a run executes (in its own
process and in a child's environment alike); a stage's loop calls :func:`report` as it goes
(a training step, an evaluated problem, a scored probe pair, a generated document) and the
runner's display reads the file (`py4.campaign.progress`). Without the variable — a stage run
by hand — :func:`report` does nothing. Writes are atomic and at most every half second, so a
tight loop pays a clock read per call; the last step of a loop is always written.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

ENV = "PY4_PROGRESS_FILE"
_MIN_INTERVAL_S = 0.5
_last_write = 0.0


def report(what: str, done: int, total: int | None = None, **fields: Any) -> None:
    """``what`` (e.g. ``step``, ``problems``) at ``done`` of ``total``, with fields such as
    ``loss=2.31``; written to the file the runner named, when it named one."""
    global _last_write
    path = os.environ.get(ENV)
    if not path:
        return
    now = time.monotonic()
    if now - _last_write < _MIN_INTERVAL_S and (total is None or done < total):
        return
    _last_write = now
    entry = {"what": what, "done": done, "total": total, "fields": fields, "pid": os.getpid(), "time": time.time()}
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(entry, default=str), encoding="utf-8")
        os.replace(tmp, target)
    except OSError:  # a display aid: never a reason for the run to fail
        pass


def read(path: str | Path) -> dict | None:
    """The last report in ``path`` (None: none yet, or unreadable)."""
    try:
        entry = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return entry if isinstance(entry, dict) else None


def describe(entry: dict) -> str:
    """``step 12/40, loss 2.310`` (one line for a person)."""
    total = entry.get("total")
    text = f"{entry.get('what', '?')} {entry.get('done', '?')}" + (f"/{total}" if total else "")
    for key, value in (entry.get("fields") or {}).items():
        text += f", {key} {value:.4g}" if isinstance(value, float) else f", {key} {value}"
    return text
