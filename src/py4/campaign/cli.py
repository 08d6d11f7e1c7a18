"""`py4 campaign plan|run|status|cancel FILE [--only PATTERN] [key=value ...]` (docs/campaign.md).
plan, run, status and cancel take key=value overrides of the campaign spec; plan and run also check
every run's stage config, flags and overrides against the stage's types before anything runs.
(`py4 campaign rehearse`, docs/rehearsal.md, is added to this group by py4.cli: it sits above.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from py4.cli_options import options_command
from py4.errors import Py4Error, cli_errors, fail
from py4.stages import DatasetOptions, SanityBankOptions

app = typer.Typer(help="The campaign: spec -> DAG of runs, runner (skip-done, resume), ledgers.",
                  no_args_is_help=True)

ONLY = typer.Option(None, "--only", help="glob (or substring) of run ids, e.g. 'tiny/iso/*' or 'eval:'")
OUT = typer.Option(None, "--out", help="campaign output folder (default: the spec's out_dir)")
OVERRIDES = typer.Argument(None, metavar="[KEY=VALUE]...",
                           help="overrides of the campaign spec, e.g. eft.doses=[0,8] (after --out)")
THREADS = typer.Option(None, "--threads", help="torch threads of each CPU run (default: the cores free when it "
                                               "starts; 'torch': torch's own default); sets PY4_THREADS")


def set_threads(threads: Optional[str]) -> None:
    """``--threads``: the runs' torch threads (`py4.threads`), checked before anything runs."""
    import os

    from py4.threads import ENV, cpu_threads

    if threads is None:
        return
    try:
        cpu_threads(environ={ENV: threads})
    except ValueError as exc:
        raise Py4Error(f"--threads: {exc}") from None
    os.environ[ENV] = threads


def selected(nodes, pattern: Optional[str], flag: str = "--only"):
    """The runs ``pattern`` selects (all when None); one that selects nothing is the user's
    mistake: Py4Error naming the closest run ids."""
    import difflib

    from py4.campaign.dag import select

    chosen = select(nodes, pattern)
    if pattern and not chosen:
        ids = [n.id for n in nodes]
        close = difflib.get_close_matches(pattern, ids, n=5, cutoff=0.3) or ids[:5]
        raise Py4Error(f"{flag} {pattern!r} matches no run of the campaign; closest run ids: {', '.join(close)}")
    return chosen


def interrupted_exit(exc: KeyboardInterrupt) -> typer.Exit:
    """The exit status of a runner stopped by Ctrl-C (130) or SIGTERM (143); the runner has said
    what stopped and how to resume."""
    return typer.Exit(143 if exc.args and exc.args[0] == "SIGTERM" else 130)


def _spec_overrides(out: Optional[str], overrides: Optional[list[str]]) -> list[str]:
    """--out as out_dir=…, then the key=value overrides (which win)."""
    return [*([f"out_dir={out}"] if out else []), *(overrides or [])]


def _load_spec(file: Path, out: Optional[str], overrides: Optional[list[str]] = None):
    """The campaign spec with ``--out`` and the overrides; an unreadable spec file is the user's to fix."""
    from py4.campaign.spec import load_campaign

    try:
        return load_campaign(file, _spec_overrides(out, overrides))
    except OSError as exc:
        raise fail(str(exc)) from None


def _load(file: Path, out: Optional[str], overrides: Optional[list[str]] = None, check: bool = False):
    """The spec and its DAG; with ``check``, every run's stage call is checked against its types.

    A ConfigError or DagError (Py4Error) goes to the command's cli_errors as it is."""
    from py4.campaign.dag import build_dag, check_dag

    spec = _load_spec(file, out, overrides)
    nodes = build_dag(spec, check=check)
    if check:
        check_dag(nodes)
    return spec, nodes


def _refuse_missing_pins(spec, nodes=None) -> None:
    """The Hub datasets the campaign reads (``datasets:``), found offline in the Hugging Face cache
    and read back as the exports they name, before anything runs; given the runs (``nodes``), its
    pinned models and every Hub model, tokenizer and streamed dataset their stage configs name too
    (`py4.campaign.pin_check`: what a Slurm login node checks before it submits).
    Py4Error: one line, the problems of every pin joined."""
    from py4.campaign.dataset_pins import check_dataset_pins
    from py4.campaign.pin_check import check_pins

    missing = check_pins(spec, nodes) if nodes is not None else check_dataset_pins(spec)
    if missing:
        raise Py4Error("; ".join(missing))


@app.command()
@cli_errors  # a bad spec, stage config or override (ConfigError, DagError): one line, exit 2
def plan(file: Path = typer.Argument(..., help="campaign YAML"), only: Optional[str] = ONLY,
         out: Optional[str] = OUT, as_json: bool = typer.Option(False, "--json", help="print the DAG as JSON"),
         resolve: bool = typer.Option(False, "--resolve", help="also resolve each training run's stage config"),
         overrides: Optional[list[str]] = OVERRIDES) -> None:
    """Print the DAG: each run's id, stage, inputs, GPU needs and command; at campaign scale, each training
    run's memory per GPU, host RAM, disk and GPU-hours (a run that cannot fit, or a pinned dataset missing
    from the Hugging Face cache: exit 2)."""
    from collections import Counter

    from py4.campaign.node_meta import GRPOSegmentMeta
    from py4.campaign.records import node_status

    spec, nodes = _load(file, out, overrides, check=True)
    _refuse_missing_pins(spec)
    chosen = selected(nodes, only)
    plans = _memory_plans(spec, chosen)
    if as_json:
        items = [n.to_json() | ({"resolved_config": _resolved(n)} if resolve else {})
                 | ({"memory_plan": plans[n.id].to_json()} if n.id in plans else {}) for n in chosen]
        typer.echo(json.dumps(items, indent=2))
        _refuse_unfit(plans)
        return
    for i, n in enumerate(chosen, 1):
        reserve = n.meta.reserve_gpus if isinstance(n.meta, GRPOSegmentMeta) else 0
        gpus = f"{n.gpus} GPU" + (f" + vLLM server, {reserve} GPUs reserved" if reserve else "")
        typer.echo(f"{i:3d}. {n.id}  [{n.stage}, {gpus}, {node_status(spec.out_dir, n)}]")
        if n.inputs:
            typer.echo(f"       inputs: {', '.join(n.inputs)}")
        typer.echo(f"       {n.command}")
        if n.server:  # the runner starts it around the evaluation and stops it after
            typer.echo(f"       served by: {n.server.command}")
        if resolve and _resolved(n):
            typer.echo("       resolved: " + json.dumps(_resolved(n)))
        for line in plans[n.id].lines() if n.id in plans else ():
            typer.echo(f"       {line}")
    counts = Counter(n.stage for n in chosen)
    typer.echo(f"{len(chosen)} runs: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    if plans:
        from py4.campaign.memory_plan import summary

        total = summary(list(plans.values()))
        typer.echo(f"GPU-hours: {total['gpu_hours_total']:,.0f} (" + ", ".join(
            f"{k} {v:,.0f}" for k, v in total["gpu_hours_per_stage"].items()) + ")")
    _refuse_unfit(plans)


def _memory_plans(spec, nodes) -> dict:
    """The memory and time plan of each training run (campaign scale; docs/campaign.md)."""
    from py4.campaign.memory_plan import plan_runs, read_measured

    if spec.scale != "campaign":
        return {}
    return {p.node_id: p for p in plan_runs(spec, nodes, read_measured())}


def _refuse_unfit(plans: dict) -> None:
    """A run that cannot fit its GPUs is the user's to fix: one line per run, exit 2."""
    from py4.train.fit import knob

    unfit = [p for p in plans.values() if not p.fits]
    if unfit:
        raise Py4Error("; ".join(
            f"{p.node_id}: {p.plan.memory.total / 2**30:.1f} GiB per GPU > {p.gpu_bytes / 2**30:.1f} GiB "
            f"(change {knob(p.plan)})" for p in unfit))


@app.command()
@cli_errors  # a bad spec or stage config: one line, exit 2
def preflight(file: Path = typer.Argument(..., help="campaign YAML"), out: Optional[str] = OUT,
              fetch: bool = typer.Option(True, "--fetch/--no-fetch",
                                         help="fetch the pinned models' metadata into the HF cache first (Hub access)"),
              as_json: bool = typer.Option(False, "--json", help="print the report as JSON"),
              overrides: Optional[list[str]] = OVERRIDES) -> None:
    """Fetch every pinned model's metadata (config, tokenizer, template, safetensors index and headers;
    never weights) and check the campaign against it: a go/no-go per training run (exit 1 on a no-go)."""
    from py4.campaign.preflight import fetch_metadata, run_checks

    spec, nodes = _load(file, out, overrides, check=True)
    if fetch:
        fetch_metadata(spec, log=lambda s: typer.echo(s, err=True))
    report = run_checks(spec, nodes)
    if as_json:
        typer.echo(json.dumps(report.to_json(), indent=2))
    else:
        for line in report.lines():
            typer.echo(line)
        typer.echo("go" if report.go else "no-go: see the NO lines above")
    if not report.go:
        raise typer.Exit(1)


def _resolved(node) -> dict | None:
    """The stage config a training run will use (file + overrides), or None for other stages."""
    from py4.stages import get_stage, load

    if not get_stage(node.stage).multi_gpu:
        return None
    return load(node.call).model_dump(mode="json")


@app.command()
@cli_errors  # a bad spec or flag, a Slurm submission refused (SlurmError): one line, exit 2
def run(file: Path = typer.Argument(..., help="campaign YAML"), only: Optional[str] = ONLY, out: Optional[str] = OUT,
        subprocess: bool = typer.Option(False, "--subprocess", help="run each command as a child process"),
        no_progress: bool = typer.Option(False, "--no-progress"),
        backend: str = typer.Option("local", "--backend",
                                    help="local: run here, one run at a time; slurm: submit each run as a batch job"),
        dry_run: bool = typer.Option(False, "--dry-run", help="slurm: print the sbatch commands, submit nothing"),
        rerun: Optional[str] = typer.Option(None, "--rerun", help="glob (or substring) of done run ids to run again "
                                                                  "from scratch (their dependants follow)"),
        verify: bool = typer.Option(False, "--verify", help="hash every recorded output of a done run before "
                                                            "skipping it (default: size and mtime)"),
        threads: Optional[str] = THREADS,
        overrides: Optional[list[str]] = OVERRIDES) -> None:
    """Run the DAG in dependency order; finished runs are skipped (unless their outputs changed),
    interrupted ones resumed."""
    import shlex

    from py4.campaign.ledgers import write_ledgers
    from py4.campaign.runner import default_executors, run_campaign

    if backend not in ("local", "slurm"):
        raise Py4Error(f"--backend {backend!r}: expected local or slurm")
    if dry_run and backend != "slurm":
        raise Py4Error("--dry-run prints what the slurm backend would submit: add --backend slurm")
    if backend == "slurm" and (rerun or verify):
        raise Py4Error("--rerun and --verify are for the local runner (--backend local)")
    set_threads(threads)
    spec, nodes = _load(file, out, overrides, check=True)
    # Slurm: the login node checks the models too, before any job waits in the queue for them
    # (the jobs get this shell's environment, so its Hugging Face cache: `py4.campaign.pin_check`).
    _refuse_missing_pins(spec, nodes if backend == "slurm" else None)
    chosen = {n.id for n in selected(nodes, only)}
    if rerun:
        selected(nodes, rerun, "--rerun")
    if backend == "slurm":
        _submit(file, spec, nodes, chosen, _spec_overrides(out, overrides), dry_run)
        return
    again = ["py4", "campaign", "run", str(file), *(["--only", only] if only else []), *(["--out", out] if out else []),
             *(["--subprocess"] if subprocess else []), *(["--threads", threads] if threads else []),
             *(overrides or [])]
    try:
        summary = run_campaign(nodes, spec.out_dir, default_executors("subprocess" if subprocess else "inprocess"),
                               chosen, progress=not no_progress, log=lambda s: typer.echo(s, err=True),
                               rerun=rerun, verify=verify, resume_hint=shlex.join(again))
    except KeyboardInterrupt as exc:
        write_ledgers(nodes, spec.out_dir, spec.name)
        raise interrupted_exit(exc) from None
    paths = write_ledgers(nodes, spec.out_dir, spec.name)
    typer.echo(f"ran {len(summary.ran)}, skipped {len(summary.skipped)} (done), failed {len(summary.failed)}, "
               f"blocked {len(summary.blocked)}")
    for p in paths:
        typer.echo(f"-> {p}")
    if not summary.ok:  # the summary above says what failed; no error line of its own
        raise typer.Exit(1)


def _submit(file: Path, spec, nodes, selected: set[str], overrides: list[str], dry_run: bool) -> None:
    """`run --backend slurm`: submit what is not done; the jobs record themselves as they run.
    A SlurmError (sbatch refused, a malformed jobs.jsonl) is a Py4Error: run's cli_errors shows it."""
    from py4.campaign.slurm import jobs_path, submit_campaign

    summary = submit_campaign(spec, nodes, file, overrides, selected, dry_run=dry_run,
                              log=lambda s: typer.echo(s, err=not dry_run))  # a dry run's sbatch lines: stdout
    verb = "would submit" if dry_run else "submitted"
    typer.echo(f"{verb} {len(summary.submitted)}, already queued {len(summary.queued)}, skipped "
               f"{len(summary.skipped)} (done), blocked {len(summary.blocked)}")
    if not dry_run:
        typer.echo(f"-> {jobs_path(spec.out_dir)}  (py4 campaign status {file} shows progress)")
    if summary.blocked:
        raise typer.Exit(1)


@app.command()
@cli_errors  # a malformed jobs.jsonl (SlurmError): one line naming file and line, exit 2
def status(file: Path = typer.Argument(..., help="campaign YAML"), out: Optional[str] = OUT,
           show_all: bool = typer.Option(False, "--all", help="list every run that is not done"),
           verify: bool = typer.Option(False, "--verify", help="hash the recorded outputs of done runs (those "
                                       "not hashed since they last changed), as `run --verify` does"),
           overrides: Optional[list[str]] = OVERRIDES) -> None:
    """Progress per stage (runs done / running / pending / failed / interrupted / blocked / damaged, Slurm
    jobs) and a summary; a done run whose outputs changed or went, or whose input was redone, shows as
    damaged with why (the runner's check before skipping). Also regenerates CAMPAIGN_STATUS.md and
    WEIGHTS_INDEX.md from the run manifests."""
    from rich.console import Console

    from py4.campaign.ledgers import write_ledgers
    from py4.campaign.slurm import SlurmError, latest_jobs, query_jobs
    from py4.campaign.dag import unresolved_training_runs
    from py4.campaign.records import record_problem
    from py4.campaign.status import run_states, status_tables, summary_line

    spec, nodes = _load(file, out, overrides)
    jobs, job_states = latest_jobs(spec.out_dir, warn=lambda s: typer.echo(s, err=True)), {}
    try:
        job_states = query_jobs([j.job_id for j in jobs.values()]) if jobs else {}
    except SlurmError as exc:  # e.g. looked at from a machine without Slurm: the records still tell
        typer.echo(f"warning: no Slurm job states ({exc}); states from the run records only", err=True)
    for node in nodes:  # an unreadable record is a run not done: said, not a stop (the runner sets it aside)
        problem = record_problem(spec.out_dir, node)
        if problem:
            typer.echo(f"warning: {problem}: {node.id} counts as not done (py4 campaign run moves the record "
                       "aside and runs it again)", err=True)
    rows = run_states(nodes, spec.out_dir, jobs, job_states, verify=verify)
    console = Console()
    for table in status_tables(rows, show_all, spec.out_dir):
        if table is not None:
            console.print(table)
    typer.echo(summary_line(rows))  # one line whatever the terminal width (scripts grep it)
    damaged = [r.node.id for r in rows if r.state == "damaged"]
    if damaged:
        typer.echo(f"{len(damaged)} damaged run(s) ({', '.join(damaged[:3])}{', ...' if len(damaged) > 3 else ''}): "
                   f"`py4 campaign run {file}` redoes them, saying why")
    unresolved = unresolved_training_runs(nodes)
    if unresolved:  # their GPUs and commands are unknown here: a ledger would show them wrong
        typer.echo(f"warning: {len(unresolved)} training run(s) whose stage config does not load from here "
                   f"({', '.join(unresolved[:3])}{', ...' if len(unresolved) > 3 else ''}; `py4 campaign plan` "
                   "names each problem): CAMPAIGN_STATUS.md and WEIGHTS_INDEX.md left as they are", err=True)
        return
    for p in write_ledgers(nodes, spec.out_dir, spec.name):
        typer.echo(f"-> {p}")


@app.command()
@cli_errors  # a bad spec, scancel refused, a malformed jobs.jsonl (SlurmError): one line, exit 2
def cancel(file: Path = typer.Argument(..., help="campaign YAML"), out: Optional[str] = OUT,
           overrides: Optional[list[str]] = OVERRIDES) -> None:
    """Cancel this campaign's Slurm jobs that are queued or running (only the job ids it recorded)."""
    from py4.campaign.slurm import cancel_campaign, jobs_path

    spec = _load_spec(file, out, overrides)  # its out_dir: cancelling needs no DAG, so no stage config stops it
    cancelled = cancel_campaign(spec.out_dir, warn=lambda s: typer.echo(s, err=True))
    if cancelled:
        typer.echo(f"cancelled {len(cancelled)} job(s): {' '.join(cancelled)}")
    else:
        typer.echo(f"nothing to cancel: no job in {jobs_path(spec.out_dir)} is queued or running")


@app.command("sanity-bank")
@cli_errors  # a dose without gold problems, a missing or malformed file: one line, exit 2
@options_command(SanityBankOptions)
def sanity_bank(options: SanityBankOptions) -> None:
    """Write a bank whose train_sanity split is the dose's gold problems (the smoke memorisation check)."""
    from py4.evaluate.sanity_bank import write_sanity_bank

    try:
        n = write_sanity_bank(options.dose, options.out, options.version, bank_dir=options.bank_dir)
    except OSError as exc:  # a bank version that is not shipped, an output folder we cannot write
        raise fail(str(exc)) from None
    typer.echo(f"train_sanity: {n} problems -> {options.out}")


@app.command("dataset")
@cli_errors  # a pin the cache does not hold, a folder that is not the export it names: one line, exit 2
@options_command(DatasetOptions)
def dataset(options: DatasetOptions) -> None:
    """Read a dataset pinned on the Hub from the local Hugging Face cache (offline, hashes checked) and write
    it as its stages take it: a bank folder, a probe-set folder or a corpus folder."""
    from py4.pinned_datasets import install_pinned

    o = options
    result = install_pinned(o.kind, o.hub_id, o.revision, o.out)
    typer.echo(f"{o.kind} {o.hub_id}@{result['commit']} (content sha256 {result['content_sha256']}) "
               f"-> {result['path']}")
