"""The Slurm backend: the campaign's DAG as batch jobs chained by ``--dependency=afterok``.

`submit_campaign` submits one job per node that is not done, in dependency order: a node
depends (``afterok``) on the jobs of its inputs that are not done yet, and a job whose input
fails is cancelled by Slurm (``--kill-on-invalid-dep=yes``), so a failure blocks exactly its
dependants. Each job runs ``python -m py4.campaign.slurm_job`` (this interpreter), which runs
its node with `py4.campaign.runner.run_node`: the same record (``_campaign/runs/<id>/
run_manifest.json``, the single source of truth for done / failed), the same fingerprint
check, the same command line as the local runner (`run_subprocess`: ``py4 <argv>``, or this
interpreter's ``accelerate launch`` for a multi-GPU training run; ``srun`` + accelerate's
multi-node launch for a training run whose GPUs exceed one machine's, `multinode_launch`).

Jobs are requeued (``--requeue``) when Slurm preempts them, and requeue themselves when their
time limit nears: Slurm signals the job ``cluster.stop_before_end_s`` before it
(``--signal=B:USR1@<s>``), slurm_job stops the run (its record says ``interrupted``) and runs
``scontrol requeue``; the job starts again from its script and its run resumes from its last
checkpoint (``run.resume: auto``). The log of every start is appended to one file.

Submitted jobs are appended to ``<out>/_campaign/slurm/jobs.jsonl`` (node, job id,
fingerprint, sbatch command, log); `py4 campaign status` reads their states (squeue, sacct)
and `py4 campaign cancel` cancels those job ids and nothing else. A job's output goes to
``_campaign/runs/<id>/slurm-<job id>.log``, beside the node's record: the stage's own run
folder is removed when a run starts again from scratch, and GRPO's segments share one.
"""

from __future__ import annotations

import datetime as _dt
import json
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from py4.campaign.dag import Node
from py4.campaign.records import fingerprints, node_is_done, record_dir
from py4.campaign.spec import CampaignSpec
from py4.errors import Py4Error, where
from py4.runs import run_is_done

JOBS_FILE = Path("_campaign") / "slurm" / "jobs.jsonl"
JOB_SCRIPT = "slurm-job.sh"
# Slurm sends it to the job's batch process `cluster.stop_before_end_s` before the time limit
# (``--signal=B:USR1@<s>``): slurm_job stops the run (recorded interrupted) and requeues the job.
STOP_SIGNAL = "USR1"
MAIN_PROCESS_IP_ENV = "PY4_MAIN_PROCESS_IP"

# Job states in which a job may still run (squeue); anything else has ended.
LIVE_STATES = frozenset({"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD",
                         "REQUEUE_FED", "RESIZING", "SIGNALING", "STAGE_OUT", "RESV_DEL_HOLD", "STOPPED"})
RUNNING_STATES = frozenset({"CONFIGURING", "RUNNING", "COMPLETING", "SIGNALING", "STAGE_OUT", "RESIZING"})


class SlurmError(Py4Error, RuntimeError):
    """A Slurm command failed or is missing, jobs.jsonl is malformed, or the campaign cannot be
    submitted as it is: the command line prints it as one line and exits 2."""


@dataclass
class JobRecord:
    """One submitted job, as appended to jobs.jsonl."""

    node: str
    job_id: str
    fingerprint: str
    submitted_at: str
    log: str
    sbatch: list[str] = field(default_factory=list)


@dataclass
class JobState:
    job_id: str
    state: str
    """Slurm's state: PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ... (UNKNOWN: no
    longer known to squeue and no accounting)."""
    reason: str = ""
    exit_code: str = ""

    @property
    def live(self) -> bool:
        return self.state in LIVE_STATES

    @property
    def running(self) -> bool:
        return self.state in RUNNING_STATES


@dataclass
class SubmitSummary:
    submitted: dict[str, str] = field(default_factory=dict)
    """node id -> new job id."""
    queued: dict[str, str] = field(default_factory=dict)
    """node id -> the job already queued or running for it (not submitted again)."""
    cancelled: dict[str, str] = field(default_factory=dict)
    """node id -> its queued job that could never start (its dependency failed, or an input is
    submitted again in this pass), cancelled before the node was submitted again."""
    skipped: list[str] = field(default_factory=list)
    """Done (same fingerprint): not submitted."""
    blocked: list[str] = field(default_factory=list)
    """An input is neither done nor submitted (e.g. outside ``--only``)."""


# --- job records -------------------------------------------------------------------------------

def jobs_path(out_dir: str | Path) -> Path:
    return Path(out_dir) / JOBS_FILE


def read_jobs(out_dir: str | Path, warn: Callable[[str], None] | None = None) -> list[JobRecord]:
    """Every job submitted for this campaign folder, oldest first.

    A last line that does not parse is the partial append of a crash mid-submission: it is
    skipped with a warning (``warn``; default: stderr). A malformed line before it is an error.
    """
    path = jobs_path(out_dir)
    if not path.exists():
        return []
    lines = [(n, line) for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if line.strip()]
    records = []
    for number, line in lines:
        record = _parse_job(line)
        if isinstance(record, JobRecord):
            records.append(record)
        elif number == lines[-1][0]:
            (warn or _warn)(f"warning: {where(path, number)}: skipped the last line, not a job record ({record}); "
                            "a submission interrupted while recording its job (that job, if any, is not tracked)")
        else:
            raise SlurmError(f"{where(path, number)}: not a job record ({record}); expected one JSON object per "
                             "line with node, job_id, fingerprint, submitted_at, log")
    return records


def _parse_job(line: str) -> JobRecord | str:
    """The record on ``line``, or why it is not one."""
    try:
        return JobRecord(**json.loads(line))
    except (json.JSONDecodeError, TypeError) as exc:
        return str(exc)


def _warn(message: str) -> None:
    print(message, file=sys.stderr)


def latest_jobs(out_dir: str | Path, warn: Callable[[str], None] | None = None) -> dict[str, JobRecord]:
    """node id -> its most recent job."""
    return {r.node: r for r in read_jobs(out_dir, warn)}


def _append_job(out_dir: str | Path, record: JobRecord) -> None:
    path = jobs_path(out_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    _drop_partial_line(path)
    # One line per write in append mode: a crash mid-submission loses at most the line being
    # written, never the ids already recorded (which `cancel` must find).
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(asdict(record)) + "\n")


def _drop_partial_line(path: Path) -> None:
    """Before appending: cut a last line that is not a record (read_jobs skipped it), or end a
    complete one that lost only its newline, so the new record does not join it."""
    if not path.exists():
        return
    data = path.read_bytes()
    start = data.rstrip(b"\n").rfind(b"\n") + 1  # where the last non-empty line starts
    last = data[start:].strip()
    if not last:
        return
    if isinstance(_parse_job(last.decode("utf-8", errors="replace")), JobRecord):
        if not data.endswith(b"\n"):
            with open(path, "ab") as fh:
                fh.write(b"\n")
        return
    with open(path, "r+b") as fh:  # truncating only after the last whole line keeps every recorded id
        fh.truncate(start)


# --- what a job asks for -------------------------------------------------------------------------

def gpu_request(node: Node, spec: CampaignSpec) -> tuple[int, str | None]:
    """(GPUs, Slurm GPU type or None) of a node: its own GPUs, or more when it also holds a server
    (GRPO's vLLM rollout server: ``meta.reserve_gpus``) or generates with its model in one process
    (an EFT dose's replay answers: ``meta.generate_gpus``)."""
    count = max(node.gpus, node.meta.held_gpus)
    if count == 0:
        return 0, None
    model = spec.models.get(node.meta.model or "")
    if model is None:
        return count, None
    return count, spec.cluster.gpu_types.get(model.gpu_type, model.gpu_type.lower())


def sbatch_argv(node: Node, spec: CampaignSpec, script: Path, dependencies: list[str], cwd: Path) -> list[str]:
    """The sbatch command that submits ``node``'s job script."""
    c = spec.cluster
    log = record_dir(spec.out_dir, node).resolve() / "slurm-%j.log"
    count, gpu_type = gpu_request(node, spec)
    spans = machines(node, spec)
    argv = ["sbatch", "--parsable", f"--job-name=py4:{spec.name}:{node.id}", f"--output={log}",
            f"--chdir={cwd}", f"--nodes={spans}", "--ntasks-per-node=1" if spans > 1 else "--ntasks=1"]
    if c.requeue:
        # Requeued, the job starts again from its script and appends to the same log; its run
        # resumes from its last checkpoint (slurm_job stops it on the signal, then requeues).
        argv += ["--requeue", f"--signal=B:{STOP_SIGNAL}@{c.stop_before_end_s}", "--open-mode=append"]
    else:
        argv.append("--no-requeue")
    for option, value in (("--partition", c.partition), ("--account", c.account),
                          ("--time", c.time_per_stage.get(node.stage, c.time)),
                          ("--cpus-per-task", c.cpus_per_task), ("--mem", c.mem)):
        if value is not None:
            argv.append(f"{option}={value}")
    if count:
        count //= spans  # both options count the GPUs of each machine
        spelled = f"{gpu_type}:{count}" if gpu_type else str(count)
        argv.append(f"--gres=gpu:{spelled}" if c.gpu_option == "gres" else f"--gpus-per-node={spelled}")
    if dependencies:
        argv += [f"--dependency=afterok:{':'.join(dependencies)}", "--kill-on-invalid-dep=yes"]
    return [*argv, *c.sbatch_args, str(script)]


def machines(node: Node, spec: CampaignSpec) -> int:
    """How many machines ``node``'s job spans: 1, or, for a training run launched by accelerate
    whose GPUs exceed one machine's (``cluster.gpus_per_node``), its GPUs / GPUs per machine.
    Raises SlurmError for a run that would need several machines but cannot span them."""
    per = spec.cluster.gpus_per_node
    count, _ = gpu_request(node, spec)
    if per is None or count <= per:
        return 1
    if node.launch_argv is None or count != node.gpus:
        raise SlurmError(f"{node.id}: asks for {count} GPUs, more than one machine's (cluster.gpus_per_node: {per}), "
                         "but only a training run launched by accelerate can span machines")
    if count % per:
        raise SlurmError(f"{node.id}: {count} GPUs are not a whole number of machines of {per} GPUs "
                         "(cluster.gpus_per_node): set its optimisation.gpus to a multiple")
    return count // per


def multinode_launch(node: Node, spec: CampaignSpec) -> list[str] | None:
    """The command a job spanning several machines runs its node with: ``srun`` starts one
    accelerate launcher per machine, each with the run's total process count, the number of
    machines, its own rank (``$SLURM_NODEID``, read on that machine) and the main process on the
    first machine of the allocation (``$PY4_MAIN_PROCESS_IP``, set by the job script). None for a
    job on one machine (it runs `Node.launch_argv` or ``py4 <argv>`` itself)."""
    spans = machines(node, spec)
    if spans == 1:
        return None
    launch = node.launch_argv
    assert launch is not None  # machines() admits only accelerate-launched runs
    at = launch.index("--num_processes") + 2
    words = [shlex.quote(w) for w in launch[:at]]
    words += ["--num_machines", str(spans), "--machine_rank", '"$SLURM_NODEID"',
              "--main_process_ip", f'"${MAIN_PROCESS_IP_ENV}"', "--main_process_port",
              str(spec.cluster.main_process_port)]
    words += [shlex.quote(w) for w in launch[at:]]
    return ["srun", f"--nodes={spans}", "--ntasks-per-node=1", "--kill-on-bad-exit=1", "bash", "-c",
            "exec " + " ".join(words)]


def job_command(campaign_file: str | Path, overrides: list[str], node: Node, fingerprint: str) -> list[str]:
    """What a job runs: its node through `run_node`, with this interpreter."""
    argv = [sys.executable, "-m", "py4.campaign.slurm_job", str(Path(campaign_file).resolve()),
            "--node", node.id, "--fingerprint", fingerprint]
    for override in overrides:
        argv += ["--set", override]
    return argv


def job_script(node: Node, spec: CampaignSpec, command: list[str], cwd: Path) -> str:
    lines = ["#!/bin/bash",
             f"# py4 campaign {spec.name}: run {node.id} (stage {node.stage}); "
             "written by py4 campaign run --backend slurm.",
             "# The node's command, run by py4.campaign.slurm_job under the node's record:",
             f"#   {node.command}",
             "set -eo pipefail",  # not -u: module and env scripts of the setup lines often read unset variables
             f"cd {shlex.quote(str(cwd))}",
             *spec.cluster.setup]
    srun = multinode_launch(node, spec)
    if srun:
        lines += [f"# {machines(node, spec)} machines: srun starts accelerate on each (machine rank $SLURM_NODEID);",
                  "# the main process runs on the allocation's first machine:",
                  f'export {MAIN_PROCESS_IP_ENV}="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"',
                  f"#   {shlex.join(srun)}"]
    lines.append("exec " + shlex.join(command))
    return "\n".join(lines) + "\n"


# --- submission ---------------------------------------------------------------------------------

def submit_campaign(spec: CampaignSpec, nodes: list[Node], campaign_file: str | Path, overrides: list[str],
                    selected: set[str] | None = None, dry_run: bool = False,
                    log: Callable[[str], None] = print) -> SubmitSummary:
    """Submit every selected node that is not done (see the module's docstring).

    ``overrides``: the key=value overrides the spec was loaded with (out_dir included), so each
    job rebuilds the very same DAG. Raises SlurmError when sbatch fails or a node still has a job
    queued from another version of the campaign.
    """
    out_dir, cwd = spec.out_dir, Path.cwd()
    prints = fingerprints(nodes)
    todo = [n for n in nodes if selected is None or n.id in selected]
    previous = latest_jobs(out_dir, log)
    states = query_jobs([previous[n.id].job_id for n in todo if n.id in previous])
    for node in todo:  # a job that cannot be laid out stops the submission before any job is queued
        machines(node, spec)
    summary = SubmitSummary()
    job_of: dict[str, str] = {}  # node id -> job id its dependants wait for
    dry_ids = iter(range(1, len(todo) + 1))
    for node in todo:
        if node_is_done(out_dir, node, prints[node.id]):
            summary.skipped.append(node.id)
            continue
        earlier = previous.get(node.id)
        stuck = None  # a live job of this node that can never run: cancelled, then submitted again
        if earlier and states.get(earlier.job_id) and states[earlier.job_id].live:
            stuck = _never_runs(node, states[earlier.job_id], summary)
        if earlier and states.get(earlier.job_id) and states[earlier.job_id].live and not stuck:
            if earlier.fingerprint != prints[node.id]:
                raise SlurmError(f"{node.id}: job {earlier.job_id} is still {states[earlier.job_id].state} for an "
                                 "earlier version of this run (its command or an input changed); "
                                 "cancel it first: py4 campaign cancel")
            job_of[node.id] = summary.queued[node.id] = earlier.job_id
            continue
        dependencies, missing = [], []
        for i in node.inputs:
            if i in job_of:  # submitted or queued in this pass: wait for it, even if an old record says done
                dependencies.append(job_of[i])
            elif not run_is_done(record_dir(out_dir, Node(id=i, stage="", run_dir=""))):
                missing.append(i)
        if missing:
            summary.blocked.append(node.id)
            log(f"blocked {node.id}: needs {', '.join(missing)} (neither done nor submitted)")
            continue
        record = record_dir(out_dir, node).resolve()
        script = record / JOB_SCRIPT
        argv = sbatch_argv(node, spec, script, dependencies, cwd)
        text = job_script(node, spec, job_command(campaign_file, overrides, node, prints[node.id]), cwd)
        if stuck:
            summary.cancelled[node.id] = earlier.job_id
            log(f"{'would cancel' if dry_run else 'cancelling'} {node.id}'s job {earlier.job_id}: {stuck}")
            if not dry_run:
                _scancel([earlier.job_id])
        if dry_run:
            job_id = f"<{next(dry_ids)}>"
            log(shlex.join(argv) + "\n  " + text.splitlines()[-1])
        else:
            record.mkdir(parents=True, exist_ok=True)
            script.write_text(text, encoding="utf-8")
            script.chmod(0o755)
            job_id = _sbatch(argv, node)
            _append_job(out_dir, JobRecord(node.id, job_id, prints[node.id], _now(),
                                           str(record / f"slurm-{job_id}.log"), argv))
            log(f"submitted {node.id}: job {job_id}" + (f" (after {', '.join(dependencies)})" if dependencies else ""))
        job_of[node.id] = summary.submitted[node.id] = job_id
    return summary


def _never_runs(node: Node, state: JobState, summary: SubmitSummary) -> str | None:
    """Why a live job of ``node`` will never start, or None: Slurm says its dependency can never
    be satisfied, or it waits (afterok) for the old job of an input submitted again in this pass."""
    if state.reason == "DependencyNeverSatisfied":
        return "its dependency can never be satisfied (an input's job failed)"
    again = [i for i in node.inputs if i in summary.submitted]
    if again:
        return f"it waits for the old job of {', '.join(again)}, submitted again"
    return None


def _sbatch(argv: list[str], node: Node) -> str:
    proc = _slurm(argv)
    if proc.returncode != 0:
        raise SlurmError(f"sbatch failed for {node.id} (exit {proc.returncode}): {proc.stderr.strip()}\n"
                         f"  command: {shlex.join(argv)}")
    job_id = proc.stdout.strip().split(";")[0]  # --parsable: "<id>" or "<id>;<cluster>"
    if not job_id.isdigit():
        raise SlurmError(f"sbatch printed {proc.stdout.strip()!r} for {node.id}, not a job id")
    return job_id


def _slurm(argv: list[str]) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise SlurmError(f"{argv[0]} not found on PATH: the Slurm backend needs Slurm's client commands "
                         "(sbatch, squeue, sacct, scancel) on this machine") from exc


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


# --- job states and cancelling ------------------------------------------------------------------

def query_jobs(job_ids: list[str]) -> dict[str, JobState]:
    """Slurm's view of ``job_ids``: squeue (queued, running, and ended within MinJobAge), then
    sacct for the others (when the cluster keeps accounting). Ids neither knows are absent."""
    ids = sorted(set(job_ids), key=int)
    if not ids:
        return {}
    wanted = set(ids)
    fmt = ["-h", "-t", "all", "-o", "%i|%T|%r"]
    proc = _slurm(["squeue", *fmt, f"--jobs={','.join(ids)}"])
    if proc.returncode != 0:  # one id squeue no longer knows fails the filtered query: list all instead
        proc = _slurm(["squeue", *fmt])
        if proc.returncode != 0:
            raise SlurmError(f"squeue failed (exit {proc.returncode}): {proc.stderr.strip()}")
    states: dict[str, JobState] = {}
    for line in proc.stdout.splitlines():
        parts = line.strip().split("|")
        if len(parts) == 3 and parts[0] in wanted:
            states[parts[0]] = JobState(parts[0], parts[1], parts[2] if parts[2] != "None" else "")
    rest = [i for i in ids if i not in states]
    if rest:
        acct = _slurm(["sacct", "-n", "-P", "-X", "-o", "JobID,State,ExitCode", f"--jobs={','.join(rest)}"])
        if acct.returncode == 0:  # no accounting on this cluster: those jobs' states are unknown
            for line in acct.stdout.splitlines():
                parts = line.strip().split("|")
                if len(parts) == 3 and parts[0] in wanted:
                    # "CANCELLED by 0" -> CANCELLED
                    states[parts[0]] = JobState(parts[0], parts[1].split()[0], exit_code=parts[2])
    return states


def cancel_campaign(out_dir: str | Path, warn: Callable[[str], None] | None = None) -> list[str]:
    """scancel this campaign's recorded jobs that are still queued or running; their ids.

    Only ids from jobs.jsonl are ever passed to scancel: another campaign's jobs, or anyone
    else's, are never touched.
    """
    ids = [r.job_id for r in read_jobs(out_dir, warn)]
    live = sorted((i for i, s in query_jobs(ids).items() if s.live), key=int)
    if live:
        _scancel(live)
    return live


def _scancel(job_ids: list[str]) -> None:
    proc = _slurm(["scancel", *job_ids])
    if proc.returncode != 0:
        raise SlurmError(f"scancel {' '.join(job_ids)} failed (exit {proc.returncode}): {proc.stderr.strip()}")


# --- the GPU layout (docs/campaign.md) ------------------------------------------------------------

def gpu_layout_markdown(spec: CampaignSpec, nodes: list[Node]) -> str:
    """A markdown table: per stage and model, the GPUs each job asks for and how many jobs.

    docs/campaign.md shows it for configs/campaign/python4.yaml (a test keeps the two equal).
    """
    from collections import Counter

    models = list(spec.models)
    cells: dict[str, dict[str, Counter]] = {}
    for node in nodes:
        model = node.meta.model if node.meta.model in spec.models else ""
        cells.setdefault(node.stage, {}).setdefault(model, Counter())[gpu_request(node, spec)] += 1
    header = ["stage", *(f"{spec.models[m].label} ({spec.models[m].gpu_type})" for m in models), "other"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for stage, by_model in cells.items():
        row = [stage]
        for model in [*models, ""]:
            counts = by_model.get(model)
            row.append(", ".join(_gpu_cell(gpus, n) for (gpus, _), n in sorted(counts.items())) if counts else "")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def _gpu_cell(gpus: int, jobs: int) -> str:
    return f"{'CPU' if gpus == 0 else f'{gpus} GPU'} × {jobs}"
