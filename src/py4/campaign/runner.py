"""Run a campaign's DAG: dependency order, skip-done, resume, progress.

Each node's completion is recorded by the runner (`py4.campaign.records`): a node whose record
says ``done`` for its current fingerprint is skipped, unless what it made has changed or gone
since (size and mtime, every hash with ``verify``), an input was run again after it, or it is
asked for again (``rerun``): then it runs afresh, saying why. One that says ``running`` /
``failed`` / ``interrupted`` is run again, and the stage itself resumes from its checkpoints
(``run.resume: auto``). A record that cannot be read is moved aside and its run counts as not
done. One runner at a time per campaign folder (`py4.campaign.lock`); Ctrl-C and SIGTERM stop
it with a line saying what stopped and how to resume. The runner reads the machine's load from
one run's start to the next and hands each run the reading (`py4.threads.MachineLoad`,
``PY4_BUSY_CORES``), so a stage's start picks its torch threads without sampling. Stages are
dispatched through an explicit table (`default_executors`, stage -> callable) so tests can
substitute cheap fakes. In this process a node runs through the stage registry
(`py4.stages.run_call`: its typed config, its stage's ``run``); as a child process it runs its
command line (`Node.argv`, the one Slurm runs too).

An evaluation through a served endpoint (``node.server``, campaign ``evaluation.serve``) runs
inside the server's lifecycle, which the runner owns: the server is started for the node's
weights, the evaluation runs once it answers, and it is stopped afterwards — also when the
evaluation fails, on Ctrl-C and on SIGTERM (``py4.evaluate.serve.serving``). Its output goes
to ``<out_dir>/_campaign/runs/<node id>/server.log``.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import traceback
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from py4.campaign.dag import Node, select
from py4.campaign.lock import runner_lock, this_runner
from py4.campaign.progress import CampaignProgress
from py4.campaign.records import (NodeStatus, damage, fingerprints, missing_inputs, node_is_done, node_status,
                                  record_dir, record_problem, recorded_fingerprint, resumes, run_token,
                                  snapshot_outputs, superseded)
from py4.errors import Py4Error
from py4.run_owner import RUNNER_ENV
from py4.runs import MANIFEST_NAME, RunRecorder, read_manifest
from py4.stages import STAGES, result_summary, run_call
from py4.threads import BUSY_ENV, MachineLoad

Executor = Callable[[Node], None]


class RunFailed(RuntimeError):
    """A node's command exited with a non-zero status."""


def run_inprocess(node: Node) -> None:
    """Run the node's stage in this process (imports are paid once), through the stage registry.

    Raises RunFailed when the stage fails: a user's error (Py4Error: a bad config, a missing
    input) with its message, anything else after printing its traceback (to the node's stage
    log). A multi-GPU run goes to `run_subprocess` (it must start under accelerate).
    """
    if node.launch_argv:
        return run_subprocess(node)
    try:
        result = run_call(node.call)
    except Py4Error as exc:
        raise RunFailed(f"{node.command}: {exc}") from exc
    except Exception as exc:
        traceback.print_exc()  # not known to be the user's: the traceback goes to the stage log
        raise RunFailed(f"{node.command}: {type(exc).__name__}: {exc}") from exc
    print(f"done {node.stage}: {result_summary(result, node.stage)}")


def run_subprocess(node: Node) -> None:
    """Run `py4 <argv>` as a child process. Raises RunFailed on a non-zero exit."""
    cmd = node.launch_argv or [sys.executable, "-m", "py4", *node.argv]
    proc = subprocess.run(cmd, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    if proc.returncode in (-signal.SIGINT, -signal.SIGTERM, 128 + signal.SIGINT, 128 + signal.SIGTERM):
        # Ctrl-C reaches the child first (one process group): the run was stopped, not failed.
        raise KeyboardInterrupt(f"{node.command} stopped by a signal (exit {proc.returncode})")
    if proc.returncode != 0:
        raise RunFailed(f"{node.command} exited with {proc.returncode}")


def default_executors(mode: str = "inprocess") -> dict[str, Executor]:
    """stage -> executor; every stage runs its py4 command (in-process or as a subprocess)."""
    fn = {"inprocess": run_inprocess, "subprocess": run_subprocess}[mode]
    return {s: fn for s in STAGES}


@dataclass
class RunSummary:
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.blocked


def run_campaign(nodes: list[Node], out_dir: str | Path, executors: dict[str, Executor] | None = None,
                 selected: set[str] | None = None, progress: bool = True,
                 log: Callable[[str], None] = print, rerun: str | None = None, verify: bool = False,
                 resume_hint: str | None = None, load: MachineLoad | None = None) -> RunSummary:
    """Run `nodes` (in the given dependency order); only `selected` ids when given.

    A node runs when every input is done; a failure blocks its dependants but not the
    rest. ``rerun``: a pattern of run ids (`py4.campaign.dag.select`) to run again although done;
    ``verify``: hash every recorded output of a done run before skipping it. Raises KeyError when
    a node's stage has no executor, CampaignLocked when another runner holds the folder, and
    KeyboardInterrupt (Ctrl-C, or SIGTERM turned into it) after saying what stopped and
    ``resume_hint`` (the command that resumes). ``load``: where each run's reading of the
    machine's load comes from (default: /proc/stat, from the runner's start).
    """
    executors = executors if executors is not None else default_executors()
    summary = RunSummary()
    todo = [n for n in nodes if selected is None or n.id in selected]
    prints = fingerprints(nodes)
    again = {n.id for n in select(nodes, rerun)} if rerun else set()
    continued = superseded(nodes)
    load = load if load is not None else MachineLoad()
    with runner_lock(out_dir) as me, _sigterm_as_interrupt():
        # One display for the whole campaign; each run's own output goes to its stage log (py4.campaign.progress).
        to_run = {n.id for n in todo if n.id in again or not node_is_done(out_dir, n, prints[n.id])}
        bar = CampaignProgress(len(todo), out_dir, enabled=progress, log=log, nodes=todo, to_run=to_run,
                               history=nodes)
        current: Node | None = None
        started = time.monotonic()
        try:
            for node in todo:
                if node.stage not in executors:
                    raise KeyError(f"no executor for stage {node.stage!r} (run {node.id})")
                _set_aside_unreadable_record(out_dir, node, bar.log)
                afresh = None
                if node_is_done(out_dir, node, prints[node.id]):
                    afresh = _why_again(out_dir, node, node.id in again, node.id not in continued, verify)
                    if afresh is None:
                        summary.skipped.append(node.id)
                        bar.skipped(node)
                        continue
                    bar.log(f"{node.id}: running it again: {afresh}")
                missing = missing_inputs(out_dir, node)
                if missing:
                    summary.blocked.append(node.id)
                    bar.blocked(node, missing)
                    continue
                current, started = node, time.monotonic()
                bar.started(node, resumed=afresh is None and resumes(out_dir, node, prints[node.id]))
                with _load_for_run(load.busy()):
                    ok = run_node(node, nodes, out_dir, bar.capturing(executors[node.stage]), prints[node.id],
                                  bar.node_log(node), runner=me, afresh=afresh)
                current = None
                (summary.ran if ok else summary.failed).append(node.id)
                bar.ended(node, ok)
        except KeyboardInterrupt as exc:
            bar.interrupted(current)
            what = (f"{current.id} ([{current.stage}], after {time.monotonic() - started:.0f} s; its record says "
                    "interrupted)" if current else "between runs")
            bar.log(f"stopped ({_signal_name(exc)}): {what}; {len(summary.ran)} run(s) finished in this invocation. "
                    f"Resume with: {resume_hint or 'the same command'} (finished runs are skipped, "
                    "the interrupted one resumes from its last checkpoint)")
            raise
        finally:
            bar.close()
    return summary


def _why_again(out_dir: str | Path, node: Node, asked: bool, check_outputs: bool, verify: bool) -> str | None:
    """Why a done run must run again (None: it stays done): asked to, or its `damage` (an input
    was redone, what it made has changed or gone)."""
    if asked:
        return "asked to (--rerun)"
    return damage(out_dir, node, check_outputs=check_outputs, verify=verify)


def _set_aside_unreadable_record(out_dir: str | Path, node: Node, log: Callable[[str], None]) -> None:
    """A record that cannot be read is renamed beside itself (kept for a person to look at) and
    the run counts as not done."""
    problem = record_problem(out_dir, node)
    if problem is None:
        return
    path = record_dir(out_dir, node) / MANIFEST_NAME
    aside = path.with_name(f"{MANIFEST_NAME}.unreadable-{time.strftime('%Y%m%dT%H%M%S')}")
    path.rename(aside)
    log(f"{node.id}: its record cannot be read ({problem}); treated as not done, moved to {aside}")


def _signal_name(exc: KeyboardInterrupt) -> str:
    return "SIGTERM" if exc.args and exc.args[0] == _SIGTERM else "Ctrl-C"


_SIGTERM = "SIGTERM"


@contextmanager
def _sigterm_as_interrupt():
    """SIGTERM raises KeyboardInterrupt for the block (the main thread only: elsewhere Python
    cannot set a handler), so a terminated runner records its run interrupted and says so."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise KeyboardInterrupt(_SIGTERM)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_node(node: Node, nodes: list[Node], out_dir: str | Path, executor: Executor, fingerprint: str,
             log: Callable[[str], None] = print, runner: dict | None = None, afresh: str | None = None) -> bool:
    """Run one node under its record (``running`` -> ``done`` / ``failed``); False when it failed.

    The one way a node runs: `run_campaign` calls it for each node in turn, and a Slurm job
    (`py4.campaign.slurm_job`) for its own node. A run whose command or inputs changed since its
    record was written starts from scratch, and so does one run ``afresh`` (the reason: its outputs
    changed, an input ran again, asked to); one that was interrupted resumes. Ctrl-C (and a
    SIGTERM that the caller turns into KeyboardInterrupt) marks the record interrupted and propagates.
    ``runner``: who runs it (PID and host, or the Slurm job), kept in the record so a reader can
    tell a live run from one whose runner is gone (`py4.campaign.records.node_status`).
    """
    recorded = recorded_fingerprint(out_dir, node)
    if recorded is not None and recorded != fingerprint:
        log(f"{node.id}: its command or an input's changed since it last ran; running it again from scratch")
        _clear_stale_run(node, nodes, out_dir, log)
    elif afresh:
        log(f"{node.id}: running it again from scratch: {afresh}")
        _clear_stale_run(node, nodes, out_dir, log)
        recorded = None
    # A stale run starts afresh: its record's status is the old command's, nothing to resume
    # (records.resumes, from the fingerprint already read).
    previous: NodeStatus = node_status(out_dir, node) if recorded == fingerprint else "pending"
    resuming = f" (resuming after {previous})" if previous != "pending" else ""
    log(f"[{node.stage}] {node.id}{resuming}\n  {node.command}")
    t0 = time.monotonic()
    try:
        with RunRecorder(record_dir(out_dir, node), None, "campaign.node") as rec:
            rec.set(node=node.to_json(), fingerprint=fingerprint, runner=runner or this_runner(),
                    resumed_from=previous if previous != "pending" else None)
            with _served(node, record_dir(out_dir, node), rec, log), _owned_by_runner(node):
                executor(node)
            stage_manifest = read_manifest(node.run_dir)
            if stage_manifest:
                rec.set(stage_status=stage_manifest.get("status"), stage_kind=stage_manifest.get("kind"))
            # What a later skip checks: the folder's files, and which run of each input it read.
            rec.set(outputs_seen=snapshot_outputs(node.run_dir), run_token=uuid.uuid4().hex,
                    input_tokens={i: run_token(out_dir, i) for i in node.inputs})
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # noqa: BLE001 - the record says failed; dependants are blocked, the rest go on
        log(f"FAILED {node.id} after {time.monotonic() - t0:.1f}s: {exc}")
        return False
    return True


@contextmanager
def _load_for_run(busy: float | None):
    """``PY4_BUSY_CORES`` for the run (this process's stage and a child's alike); left as it is
    when the runner has no reading yet (its first run), so the stage samples the machine itself."""
    if busy is None:
        yield
        return
    saved = os.environ.get(BUSY_ENV)
    os.environ[BUSY_ENV] = f"{busy:.2f}"
    try:
        yield
    finally:
        os.environ.pop(BUSY_ENV, None)
        if saved is not None:
            os.environ[BUSY_ENV] = saved


@contextmanager
def _owned_by_runner(node: Node):
    """The run's stage may write its campaign-owned folder (`py4.run_owner`): the runner is behind it."""
    saved = os.environ.get(RUNNER_ENV)
    os.environ[RUNNER_ENV] = node.id  # this process's stage and a child's alike
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(RUNNER_ENV, None)
        else:
            os.environ[RUNNER_ENV] = saved


@contextmanager
def _served(node: Node, record: Path, rec: RunRecorder, log: Callable[[str], None]):
    """The node's server around its run (nothing when it has none); stopped however the run ends."""
    if node.server is None:
        yield None
        return
    from py4.evaluate.serve import serving

    server_log = record / "server.log"
    log(f"  serving {node.server.weights} at {node.server.base_url} as {node.server.request_model!r} "
        f"(log: {server_log})\n  {node.server.command}")
    with serving(node.server, server_log) as server:
        rec.set(server={"command": node.server.command, "ready_s": round(server.ready_s, 1), "log": str(server_log),
                        "language_model_only": node.server.language_model_only})
        yield server


def _clear_stale_run(node: Node, nodes: list[Node], out_dir: str | Path, log: Callable[[str], None]) -> None:
    """Remove what another command left in ``node``'s run folder, so the stage does not resume
    a stale checkpoint (``run.resume: auto``) of different settings.

    Kept: a folder outside the campaign's out_dir, and a folder shared with an input (GRPO's
    later segments resume the checkpoint their first segment has just written).
    """
    run_dir, out = Path(node.run_dir).resolve(), Path(out_dir).resolve()
    shared = any(Path(n.run_dir).resolve() == run_dir for n in nodes if n.id in node.inputs)
    if shared or out not in run_dir.parents or not run_dir.exists():
        return
    shutil.rmtree(run_dir)
    log(f"  removed the previous outputs in {run_dir}")

