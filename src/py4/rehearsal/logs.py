"""Reading a rehearsal run's log: the line a reader needs to route a failure.

Used by the child executor (the failure's message) and by the report (each failed run's
cause), so it sits below both.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["last_error"]


def last_error(log_path: Path, lines: int = 1) -> str:
    """The last exception line(s) of a log (what a reader needs to route the failure)."""
    text = log_path.read_text(encoding="utf-8", errors="replace").splitlines() if log_path.exists() else []
    starts = [i for i, ln in enumerate(text) if ln.startswith("$ ")]
    text = text[starts[-1]:] if starts else text  # the last attempt only (the log is appended to)
    stated = list(dict.fromkeys(ln for ln in text if ln.startswith("error:")))  # py4's own, file and field named
    if stated:
        return " | ".join(stated[:lines])
    errors = [ln for ln in text if ln and not ln.startswith(" ") and ("Error" in ln or "Exception" in ln)]
    return " | ".join(errors[-lines:]) if errors else (text[-1] if text else "(empty log)")
