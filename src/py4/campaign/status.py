"""Where a campaign stands: each run's state from its record and, for Slurm jobs, the job's state.

States: ``done`` (record done, same fingerprint), ``running`` (its runner or job is alive),
``pending`` (queued in Slurm, or not run yet), ``failed`` (record failed, or its job ended without
a record), ``interrupted`` (stopped by Ctrl-C or SIGTERM, or its local runner is gone: the word
the runner's console and CAMPAIGN_STATUS.md use too), ``blocked`` (an input failed or is
blocked, and no job of its own is queued), ``damaged`` (its record says done, but the runner would
redo it: what it made changed or went, or an input was redone after it or is damaged itself —
`py4.campaign.records.damage`, the check the runner makes before skipping; every hash with
``verify``). The record is
the single source of truth for done / failed; Slurm's state only says what is queued or
running now and why a job ended. `py4 campaign status` prints `status_tables` and
`summary_line`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from py4.campaign.dag import Node
from py4.campaign.records import damage, fingerprints, node_is_done, node_status, read_record, superseded
from py4.campaign.slurm import LIVE_STATES

State = Literal["done", "running", "pending", "failed", "interrupted", "blocked", "damaged"]
"""A run's state in the campaign (the module's docstring says when each holds)."""
STATES: tuple[State, ...] = get_args(State)


@dataclass
class RunState:
    node: Node
    state: State
    job_id: str | None = None
    slurm_state: str | None = None
    """Slurm's state of the run's latest job (None: no job; UNKNOWN: purged, no accounting)."""
    slurm_reason: str = ""
    log: str | None = None
    why: str = ""
    """Why a run is damaged (what `py4 campaign run` would say before redoing it)."""


def run_states(nodes: list[Node], out_dir: str | Path, jobs: dict | None = None,
               job_states: dict | None = None, verify: bool = False) -> list[RunState]:
    """Every node's state, in the DAG's order.

    ``jobs``: node id -> its latest `py4.campaign.slurm.JobRecord`; ``job_states``: job id ->
    `py4.campaign.slurm.JobState` (both empty for a campaign run locally). ``verify``: hash the
    recorded outputs of done runs as ``py4 campaign run --verify`` does.
    """
    jobs, job_states = jobs or {}, job_states or {}
    prints = fingerprints(nodes)
    continued = superseded(nodes)
    states: dict[str, State] = {}
    rows = []
    for node in nodes:
        job = jobs.get(node.id)
        slurm = job_states.get(job.job_id) if job else None
        row = RunState(node, "pending", job.job_id if job else None,
                       (slurm.state if slurm else "UNKNOWN") if job else None,
                       slurm.reason if slurm else "", job.log if job else None)
        row.state = _state(node, out_dir, prints[node.id], job, slurm, states)
        if row.state == "done" and all(states.get(i, "done") in ("done", "damaged") for i in node.inputs):
            # (an input not done is the runner's to run first; its dependants' state follows from that)
            damaged = {i for i, state in states.items() if state == "damaged"}
            why = damage(out_dir, node, check_outputs=node.id not in continued, verify=verify, damaged=damaged)
            if why is not None:
                row.state, row.why = "damaged", why
        states[node.id] = row.state
        rows.append(row)
    return rows


def _state(node: Node, out_dir, fingerprint: str, job, slurm, earlier: dict[str, State]) -> State:
    if node_is_done(out_dir, node, fingerprint):
        return "done"
    if slurm is not None and slurm.live:
        if slurm.reason == "DependencyNeverSatisfied":  # an input failed: it will never start
            return "blocked"
        return "running" if slurm.running else "pending"
    recorded = node_status(out_dir, node)
    if recorded == "interrupted" and job is not None and (read_record(out_dir, node) or {}).get("status") == "running":
        recorded = "running"  # a Slurm job's record: whether its job lives is Slurm's to say (below)
    if recorded in ("failed", "interrupted"):
        return recorded
    if recorded == "running":
        # A local runner may be running it now; a Slurm job that is no longer live has ended
        # without finishing its record (killed: time limit, node failure, out of memory).
        return "failed" if job is not None else "running"
    if any(earlier.get(i) in ("failed", "blocked") for i in node.inputs):
        return "blocked"
    if job is not None and slurm is not None and slurm.state not in ("CANCELLED", "COMPLETED"):
        return "failed"  # the job ended before it could write a record (FAILED, TIMEOUT, NODE_FAIL, ...)
    return "pending"


def summary_line(rows: list[RunState]) -> str:
    counts = Counter(r.state for r in rows)
    line = f"{len(rows)} runs: " + ", ".join(f"{counts.get(s, 0)} {s}" for s in STATES)
    submitted = [r for r in rows if r.job_id]
    if submitted:
        queued = sum(1 for r in submitted if r.slurm_state in LIVE_STATES)
        line += f"; Slurm: {queued} of {len(submitted)} jobs queued or running"
    return line


def compact_ids(ids: list[str]) -> str:
    """'12,13,14,20' -> '12-14,20' (job ids of one stage in one cell)."""
    numbers = sorted({int(i) for i in ids})
    spans: list[list[int]] = []
    out: list[str] = []
    for n in numbers:
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    for a, b in spans:
        out.append(str(a) if a == b else f"{a}-{b}")
    return ",".join(out)


def status_tables(rows: list[RunState], show_all: bool = False, out_dir: str | Path | None = None):
    """(per-stage table, table of runs) as rich Tables; the second lists the runs that are
    running or failed (every run not done with ``show_all``), None when there are none.
    Logs are shown relative to ``out_dir`` when given."""
    from rich.table import Table

    stages: dict[str, list[RunState]] = {}
    for r in rows:
        stages.setdefault(r.node.stage, []).append(r)
    with_jobs = any(r.job_id for r in rows)
    per_stage = Table(title="Runs per stage", title_justify="left")
    per_stage.add_column("stage", no_wrap=True)
    per_stage.add_column("runs", justify="right")
    for state in STATES:
        per_stage.add_column(state, justify="right", style=_STYLE[state])
    if with_jobs:
        per_stage.add_column("jobs queued / running", overflow="fold")
    for stage, group in stages.items():
        counts = Counter(r.state for r in group)
        cells = [stage, str(len(group)), *(str(counts.get(s, 0) or "") for s in STATES)]
        if with_jobs:
            cells.append(compact_ids([r.job_id for r in group if r.job_id and r.slurm_state in LIVE_STATES]))
        per_stage.add_row(*cells)
    shown = [r for r in rows
             if r.state != "done" and (show_all or r.state in ("running", "failed", "interrupted", "damaged"))]
    if not shown:
        return per_stage, None
    runs = Table(title="Runs " + ("not done" if show_all else "running, failed, interrupted or damaged"),
                 title_justify="left")
    with_why = any(r.why for r in shown)
    for name in ("run", "stage", "state", *(("why",) if with_why else ()),
                 *(("job", "Slurm state", "log") if with_jobs else ())):
        runs.add_column(name, overflow="fold")  # ids and paths whole, folded: a truncated path is useless
    for r in shown:
        cells = [r.node.id, r.node.stage, f"[{_STYLE[r.state]}]{r.state}[/]"]
        if with_why:
            cells.append(r.why)
        if with_jobs:
            slurm = (r.slurm_state or "") + (f" ({r.slurm_reason})" if r.slurm_reason else "")
            cells += [r.job_id or "", slurm, _relative(r.log, out_dir)]
        runs.add_row(*cells)
    return per_stage, runs


def _relative(path: str | None, out_dir: str | Path | None) -> str:
    if not path or out_dir is None:
        return path or ""
    try:
        return str(Path(path).relative_to(Path(out_dir).resolve()))
    except ValueError:
        return path


_STYLE = {"done": "green", "running": "cyan", "pending": "white", "failed": "red", "interrupted": "magenta",
          "blocked": "yellow", "damaged": "bold red"}
