"""One progress display per campaign run: runs done / total, the current run, elapsed, ETA.

While a run executes, everything it prints — training progress bars, per-step loss dicts,
library warnings, its own summary — goes to its stage log,
``<out_dir>/_campaign/runs/<node id>/stage.log`` (file descriptors 1 and 2 are redirected,
so C-level and child-process output land there too), and the console keeps one display:

- on a terminal, a rich progress bar (``campaign ━━━━ 12/64 0:03:10 ETA 0:12:40 [eft] tiny/iso/eft_8``)
  with one line per finished run above it;
- otherwise (a CI log, ``make demo > log``), one line when a run starts and one when it ends,
  each with the counter, the elapsed time and the ETA.

The ETA is the mean wall time of the runs finished so far in this invocation times the runs
left (skipped runs take no time and do not count). Disabled (``--no-progress``), nothing is
redirected and every message goes to ``log`` as before.
"""

from __future__ import annotations

import io
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from py4.campaign.records import record_dir

if TYPE_CHECKING:
    from py4.campaign.dag import Node

STAGE_LOG = "stage.log"

_now = time.monotonic  # the display's clock, its own name so a test can set it for this module only


def stage_log_path(out_dir: str | Path, node: "Node") -> Path:
    """Where a run's console output goes while the progress display is on."""
    return record_dir(out_dir, node) / STAGE_LOG


def clock(seconds: float | None) -> str:
    """0:03:07 (or '?' when unknown)."""
    if seconds is None:
        return "?"
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


@contextmanager
def output_to(path: Path) -> Iterator[None]:
    """Send this process's stdout and stderr — Python's and the file descriptors' — to ``path``
    (appended) for the duration; restored however the block ends."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(path, "a", encoding="utf-8", buffering=1) as log:
        try:
            os.dup2(log.fileno(), 1)
            os.dup2(log.fileno(), 2)
            with redirect_stdout(log), redirect_stderr(log):
                yield
        finally:
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)


def _own_stream(stream: TextIO) -> tuple[TextIO, bool]:
    """A stream to the console that survives :func:`output_to`: a duplicate of ``stream``'s
    descriptor when it has one (True: ours to close), else ``stream`` itself."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):
        return stream, False
    stream.flush()
    return os.fdopen(os.dup(fd), "w", buffering=1, encoding=getattr(stream, "encoding", None) or "utf-8"), True


class CampaignProgress:
    """The display of one ``run_campaign``; see the module's docstring."""

    def __init__(self, total: int, out_dir: str | Path, enabled: bool = True,
                 log: Callable[[str], None] = print, stream: TextIO | None = None):
        self.total, self.out_dir, self.enabled, self._log = total, Path(out_dir), enabled and total > 0, log
        self.finished = 0
        self._run_seconds: list[float] = []
        self._t0 = _now()
        self._started: float | None = None
        self._bar = None
        if not self.enabled:
            return
        from rich.console import Console

        self._stream, self._owned = _own_stream(stream or sys.stderr)
        self.console = Console(file=self._stream, highlight=False)
        if self.console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(TextColumn("campaign"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                 TextColumn("ETA {task.fields[eta]}"), TextColumn("{task.description}"),
                                 console=self.console)
            self._task = self._bar.add_task("", total=total, eta="?")
            self._bar.start()

    # -- what the runner calls -------------------------------------------------------------
    def log(self, message: str) -> None:
        """A runner message for the console (above the bar when there is one)."""
        if not self.enabled:
            self._log(message)
        else:
            self.console.print(message, markup=False, soft_wrap=True)  # a long path stays on its line

    def node_log(self, node: "Node") -> Callable[[str], None]:
        """Where ``run_node``'s messages about ``node`` go: its stage log while the display is on."""
        if not self.enabled:
            return self._log
        path = stage_log_path(self.out_dir, node)

        def write(message: str) -> None:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(message + "\n")
        return write

    def capturing(self, executor: Callable[["Node"], None]) -> Callable[["Node"], None]:
        """``executor`` with its output sent to the node's stage log (unchanged when disabled)."""
        if not self.enabled:
            return executor

        def run(node: "Node") -> None:
            with output_to(stage_log_path(self.out_dir, node)):
                executor(node)
        return run

    def skipped(self, node: "Node") -> None:
        self._advance()

    def blocked(self, node: "Node", missing: list[str]) -> None:
        self._advance()
        self.log(f"[{self.finished}/{self.total}] blocked {node.id}: needs {', '.join(missing)}")

    def started(self, node: "Node", resumed: bool) -> None:
        self._started = _now()
        what = f"{'resume' if resumed else 'run'} [{node.stage}] {node.id}"
        if self._bar is not None:
            self._bar.update(self._task, description=what)
        elif self.enabled:
            self.log(f"[{self.finished + 1}/{self.total}] {what} (log: {stage_log_path(self.out_dir, node)})")

    def ended(self, node: "Node", ok: bool) -> None:
        seconds = _now() - (self._started or _now())
        self._run_seconds.append(seconds)
        self._advance()
        if not self.enabled:
            return
        times = f"elapsed {clock(_now() - self._t0)}, ETA {clock(self.eta())}"
        if ok:
            self.log(f"[{self.finished}/{self.total}] done {node.id} in {seconds:.0f} s; {times}")
        else:
            self.log(f"[{self.finished}/{self.total}] FAILED {node.id} after {seconds:.0f} s: {self._error(node)} "
                     f"(log: {stage_log_path(self.out_dir, node)}); {times}")

    def close(self) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(self._task, description="")
            self._bar.stop()
        if self._owned:
            self._stream.close()

    # -- internals --------------------------------------------------------------------------
    def eta(self) -> float | None:
        """Seconds left: the mean of this invocation's runs times the runs left (None: no run yet)."""
        if not self._run_seconds:
            return None if self.finished < self.total else 0.0
        return sum(self._run_seconds) / len(self._run_seconds) * (self.total - self.finished)

    def _advance(self) -> None:
        self.finished += 1
        if self._bar is not None:
            self._bar.update(self._task, advance=1, eta=clock(self.eta()))

    def _error(self, node: "Node") -> str:
        from py4.runs import read_manifest

        error = (read_manifest(record_dir(self.out_dir, node)) or {}).get("error") or "see its log"
        return error.splitlines()[-1] if error else error
