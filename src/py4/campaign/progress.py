"""One progress display per campaign run: runs done / total, the current run, elapsed, ETA.

While a run executes, everything it prints — training progress bars, per-step loss dicts,
library warnings, its own summary — goes to its stage log,
``<out_dir>/_campaign/runs/<node id>/stage.log`` (file descriptors 1 and 2 are redirected,
so C-level and child-process output land there too), and the console keeps one display:

- on a terminal, a rich progress bar (``campaign ━━━━ 12/64 0:03:10 ETA 0:12:40 [eft] tiny/iso/eft_8``)
  with one line per finished run above it, and under it the current run's own progress
  (``run ━━━ 12/40 step 12/40, loss 2.310``);
- otherwise (a CI log, ``make demo > log``), one line when a run starts and one when it ends,
  each with the counter, the elapsed time and the ETA, and every 30 s of a run a line with its
  own progress.

A run's own progress is what its stage reports through `py4.run_progress` (training steps and
loss, evaluated episodes, scored probe pairs, generated documents, replay rows): the display
names the file in ``PY4_PROGRESS_FILE`` while the run executes and reads it once a second.

The ETA is the sum of the expected cost of each run still to do (runs whose record is done now
cost nothing), less the time the current run has already taken. A stage's expected cost is the
mean wall time of its runs recorded in this campaign folder (every invocation's, updated as
runs end); a stage with none yet takes `SMOKE_STAGE_SECONDS` for a CPU campaign (measured on a
2-core machine), else the mean over the stages that have run. Disabled (``--no-progress``),
nothing is redirected and every message goes to ``log`` as before.
"""

from __future__ import annotations

import io
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from py4.campaign.records import read_record, record_dir
from py4.run_progress import ENV as PROGRESS_ENV
from py4.run_progress import describe, read

if TYPE_CHECKING:
    from py4.campaign.dag import Node

STAGE_LOG = "stage.log"
PROGRESS_FILE = "progress.json"
_LOG_EVERY_S = 30.0  # a run's own progress in a log that is not a terminal

SMOKE_STAGE_SECONDS: dict[str, float] = {
    "assets": 60.0, "corpus": 5.0, "subset": 0.5, "pack": 0.5, "mix": 2.5, "midtrain": 13.0, "sft": 5.0,
    "graft": 0.5, "eft_dose": 1.5, "eft": 22.0, "grpo": 5.0, "eval": 3.5, "sanity_bank": 0.5, "probes": 3.0,
    "heldout_corpus": 3.0, "heldout_loss": 3.0,
}
"""Seconds per run of each stage of the smoke campaign on an idle 2-core machine (the runner's
``timings.total_s``, benchmarks/RESULTS.md ``## demo``): a CPU campaign's expected costs until
its own runs say otherwise."""


def stage_costs(nodes: list["Node"], out_dir: str | Path) -> dict[str, list[float]]:
    """stage -> wall seconds of each of its runs recorded done in ``out_dir``."""
    costs: dict[str, list[float]] = {}
    for node in nodes:
        record = read_record(out_dir, node) or {}
        seconds = (record.get("timings") or {}).get("total_s")
        if record.get("status") == "done" and isinstance(seconds, (int, float)):
            costs.setdefault(node.stage, []).append(float(seconds))
    return costs

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
    """The display of one ``run_campaign``; see the module's docstring.

    ``nodes``: the runs of this invocation, in order; ``to_run``: the ids among them not done
    when it starts (what the ETA counts); ``history``: every run of the campaign, whose records
    give the stages' costs.
    """

    def __init__(self, total: int, out_dir: str | Path, enabled: bool = True,
                 log: Callable[[str], None] = print, stream: TextIO | None = None,
                 nodes: list["Node"] | None = None, to_run: set[str] | None = None,
                 history: list["Node"] | None = None):
        self.total, self.out_dir, self.enabled, self._log = total, Path(out_dir), enabled and total > 0, log
        self.finished = 0
        self._nodes = list(nodes or [])
        self._to_run = set(to_run) if to_run is not None else {n.id for n in self._nodes}
        self._costs = stage_costs(history or self._nodes, out_dir)
        self._cpu = all(n.gpus == 0 for n in (history or self._nodes))
        self._position = 0  # index in nodes of the next run to reach
        self._t0 = _now()
        self._started: float | None = None
        self._current: "Node | None" = None
        self._bar = None
        self._watch: threading.Thread | None = None
        self._stop = threading.Event()
        if not self.enabled:
            return
        from rich.console import Console

        self._stream, self._owned = _own_stream(stream or sys.stderr)
        self.console = Console(file=self._stream, highlight=False)
        if self.console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(TextColumn("{task.fields[label]}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), TextColumn("{task.fields[eta]}"),
                                 TextColumn("{task.description}"), console=self.console)
            self._task = self._bar.add_task("", total=total, eta="ETA ?", label="campaign")
            self._run_task = self._bar.add_task("", total=None, eta="", label="  run", visible=False)
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
        """``executor`` with its output sent to the node's stage log and its own progress
        reported to the display (unchanged when disabled)."""
        if not self.enabled:
            return executor

        def run(node: "Node") -> None:
            progress_file = record_dir(self.out_dir, node) / PROGRESS_FILE
            progress_file.unlink(missing_ok=True)
            saved = os.environ.get(PROGRESS_ENV)
            os.environ[PROGRESS_ENV] = str(progress_file)  # this process's stages and a child's alike
            self._watch_run(node, progress_file)
            try:
                with output_to(stage_log_path(self.out_dir, node)):
                    executor(node)
            finally:
                self._stop_watch()
                if saved is None:
                    os.environ.pop(PROGRESS_ENV, None)
                else:
                    os.environ[PROGRESS_ENV] = saved
        return run

    def skipped(self, node: "Node") -> None:
        self._reach(node)
        self._advance()

    def blocked(self, node: "Node", missing: list[str]) -> None:
        self._reach(node)
        self._advance()
        self.log(f"[{self.finished}/{self.total}] blocked {node.id}: needs {', '.join(missing)}")

    def started(self, node: "Node", resumed: bool) -> None:
        self._reach(node)
        self._started, self._current = _now(), node
        what = f"{'resume' if resumed else 'run'} [{node.stage}] {node.id}"
        if self._bar is not None:
            self._bar.update(self._task, description=what, eta=f"ETA {clock(self.eta())}")
        elif self.enabled:
            self.log(f"[{self.finished + 1}/{self.total}] {what} (log: {stage_log_path(self.out_dir, node)}); "
                     f"ETA {clock(self.eta())}")

    def ended(self, node: "Node", ok: bool) -> None:
        seconds = _now() - (self._started or _now())
        self._costs.setdefault(node.stage, []).append(seconds)
        self._current = None
        self._advance()
        if not self.enabled:
            return
        times = f"elapsed {clock(_now() - self._t0)}, ETA {clock(self.eta())}"
        if ok:
            self.log(f"[{self.finished}/{self.total}] done {node.id} in {seconds:.0f} s; {times}")
        else:
            self.log(f"[{self.finished}/{self.total}] FAILED {node.id} after {seconds:.0f} s: {self._error(node)} "
                     f"(log: {stage_log_path(self.out_dir, node)}); {times}")

    def interrupted(self, node: "Node | None") -> None:
        """The run under way was stopped (Ctrl-C, SIGTERM): it is neither done nor failed."""
        self._stop_watch()
        if node is None or not self.enabled:
            return
        seconds = _now() - (self._started or _now())
        self.log(f"[{self.finished + 1}/{self.total}] interrupted {node.id} after {seconds:.0f} s "
                 f"(log: {stage_log_path(self.out_dir, node)})")

    def close(self) -> None:
        self._stop_watch()
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(self._task, description="")
            self._bar.stop()
        if self._owned:
            self._stream.close()

    # -- internals --------------------------------------------------------------------------
    def expected(self, stage: str) -> float | None:
        """Seconds a run of ``stage`` is expected to take (see the module's docstring); None: unknown."""
        seen = self._costs.get(stage)
        if seen:
            return sum(seen) / len(seen)
        if self._cpu and stage in SMOKE_STAGE_SECONDS:
            return SMOKE_STAGE_SECONDS[stage]
        means = [sum(v) / len(v) for v in self._costs.values() if v]
        return sum(means) / len(means) if means else None

    def eta(self) -> float | None:
        """Seconds left: the expected cost of every run still to do, less what the current one has
        taken (None: a cost is unknown)."""
        total = 0.0
        for node in self._nodes[self._position:]:
            if node.id not in self._to_run:
                continue
            cost = self.expected(node.stage)
            if cost is None:
                return None
            total += cost
        if self._current is not None and self._current.id in self._to_run:
            cost = self.expected(self._current.stage)
            if cost is None:
                return None
            total += max(0.0, cost - (_now() - (self._started or _now())))
        return total

    def _reach(self, node: "Node") -> None:
        """Past ``node`` in the order (whatever came before it was skipped or is done)."""
        ids = [n.id for n in self._nodes]
        if node.id in ids:
            self._position = max(self._position, ids.index(node.id) + 1)

    def _advance(self) -> None:
        self.finished += 1
        if self._bar is not None:
            self._bar.update(self._task, advance=1, eta=f"ETA {clock(self.eta())}")

    def _watch_run(self, node: "Node", path: Path) -> None:
        """Read the run's progress file once a second until the run ends, and show it."""
        self._stop.clear()

        def watch() -> None:
            last_logged, last_text = _now(), ""
            while not self._stop.wait(1.0):
                entry = read(path)
                if entry is None:
                    continue
                text = describe(entry)
                if self._bar is not None:
                    total = entry.get("total")
                    self._bar.update(self._run_task, visible=True, description=text, total=total or None,
                                     completed=entry.get("done") or 0)
                    self._bar.update(self._task, eta=f"ETA {clock(self.eta())}")
                elif text != last_text and _now() - last_logged >= _LOG_EVERY_S:
                    self.log(f"  {node.id}: {text}")
                    last_logged, last_text = _now(), text

        self._watch = threading.Thread(target=watch, name="py4-run-progress", daemon=True)
        self._watch.start()

    def _stop_watch(self) -> None:
        self._stop.set()
        if self._watch is not None:
            self._watch.join()
            self._watch = None
        if self._bar is not None:
            self._bar.update(self._run_task, visible=False, description="", completed=0, total=None)

    def _error(self, node: "Node") -> str:
        error = (read_record(self.out_dir, node) or {}).get("error") or "see its log"
        return error.splitlines()[-1] if error else error
