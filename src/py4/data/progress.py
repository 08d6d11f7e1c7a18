"""A rich progress bar for streamed work (total may be unknown); quiet when not a terminal."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from collections.abc import Iterator

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

__all__ = ["progress_bar"]


@contextmanager
def progress_bar(description: str, total: int | None = None, unit: str = "tokens") -> Iterator:
    """Yield ``advance(n)``; shows a bar on a terminal, nothing otherwise (tests, logs)."""
    if not sys.stderr.isatty():
        yield lambda n=1: None
        return
    columns = [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn(unit), TimeElapsedColumn()]
    with Progress(*columns, transient=False) as progress:
        task = progress.add_task(description, total=total)
        yield lambda n=1: progress.advance(task, n)
