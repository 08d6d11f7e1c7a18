"""`py4 campaign plan|run|status|rehearse FILE [--only PATTERN]` (docs/campaign.md, docs/rehearsal.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(help="The campaign: spec -> DAG of runs, runner (skip-done, resume), ledgers.",
                  no_args_is_help=True)

ONLY = typer.Option(None, "--only", help="glob (or substring) of run ids, e.g. 'tiny/iso/*' or 'eval:'")
OUT = typer.Option(None, "--out", help="campaign output folder (default: the spec's out_dir)")


def _load(file: Path, out: Optional[str]):
    from py4.campaign.dag import DagError, build_dag
    from py4.campaign.spec import load_campaign
    from py4.config import ConfigError

    try:
        spec = load_campaign(file, [f"out_dir={out}"] if out else [])
        return spec, build_dag(spec)
    except (ConfigError, DagError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2)


@app.command()
def plan(file: Path = typer.Argument(..., help="campaign YAML"), only: Optional[str] = ONLY,
         out: Optional[str] = OUT, as_json: bool = typer.Option(False, "--json", help="print the DAG as JSON"),
         resolve: bool = typer.Option(False, "--resolve", help="also resolve each training run's stage config")) -> None:
    """Print the DAG: each run's id, stage, inputs, GPU needs and command."""
    from collections import Counter

    from py4.campaign.dag import select
    from py4.campaign.runner import node_status

    spec, nodes = _load(file, out)
    chosen = select(nodes, only)
    if as_json:
        items = [n.to_json() | ({"resolved_config": _resolved(n)} if resolve else {}) for n in chosen]
        typer.echo(json.dumps(items, indent=2))
        return
    for i, n in enumerate(chosen, 1):
        reserve = n.meta.get("reserve_gpus")
        gpus = f"{n.gpus} GPU" + (f" + vLLM server, {reserve} GPUs reserved" if reserve else "")
        typer.echo(f"{i:3d}. {n.id}  [{n.stage}, {gpus}, {node_status(spec.out_dir, n)}]")
        if n.inputs:
            typer.echo(f"       inputs: {', '.join(n.inputs)}")
        typer.echo(f"       {n.command}")
        if n.server:  # the runner starts it around the evaluation and stops it after
            typer.echo(f"       served by: {n.server.command}")
        if resolve and _resolved(n):
            typer.echo("       resolved: " + json.dumps(_resolved(n)))
    counts = Counter(n.stage for n in chosen)
    typer.echo(f"{len(chosen)} runs: " + ", ".join(f"{k} {v}" for k, v in counts.items()))


def _resolved(node) -> dict | None:
    """The stage config a training run will use (file + overrides), or None for other stages."""
    if node.argv[:1] != ["train"]:
        return None
    from py4.config import load_config
    from py4.train.stages import get_stage

    _, config_type = get_stage(node.argv[1])
    overrides = [a for a in node.argv[4:] if "=" in a]
    return load_config(config_type, node.argv[3], overrides).model_dump(mode="json")


@app.command()
def run(file: Path = typer.Argument(..., help="campaign YAML"), only: Optional[str] = ONLY, out: Optional[str] = OUT,
        subprocess: bool = typer.Option(False, "--subprocess", help="run each command as a child process"),
        no_progress: bool = typer.Option(False, "--no-progress")) -> None:
    """Run the DAG in dependency order; finished runs are skipped, interrupted ones resumed."""
    from py4.campaign.dag import select
    from py4.campaign.ledgers import write_ledgers
    from py4.campaign.runner import default_executors, run_campaign

    spec, nodes = _load(file, out)
    selected = {n.id for n in select(nodes, only)}
    summary = run_campaign(nodes, spec.out_dir, default_executors("subprocess" if subprocess else "inprocess"),
                           selected, progress=not no_progress, log=lambda s: typer.echo(s, err=True))
    paths = write_ledgers(nodes, spec.out_dir, spec.name)
    typer.echo(f"ran {len(summary.ran)}, skipped {len(summary.skipped)} (done), failed {len(summary.failed)}, "
               f"blocked {len(summary.blocked)}")
    for p in paths:
        typer.echo(f"-> {p}")
    if not summary.ok:
        raise typer.Exit(1)


@app.command()
def status(file: Path = typer.Argument(..., help="campaign YAML"), out: Optional[str] = OUT) -> None:
    """Regenerate CAMPAIGN_STATUS.md and WEIGHTS_INDEX.md from the run manifests."""
    from py4.campaign.ledgers import write_ledgers

    spec, nodes = _load(file, out)
    for p in write_ledgers(nodes, spec.out_dir, spec.name):
        typer.echo(f"-> {p}")


@app.command("sanity-bank")
def sanity_bank(dose: Path = typer.Option(..., "--dose", help="an EFT dose folder (rows.jsonl with problem ids)"),
                out: Path = typer.Option(..., "--out", help="bank folder to write"),
                version: str = typer.Option("v1", "--version")) -> None:
    """Write a bank whose train_sanity split is the dose's gold problems (the smoke memorisation check)."""
    from py4.campaign.sanity import write_sanity_bank

    try:
        n = write_sanity_bank(dose, out, version)
    except (OSError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2)
    typer.echo(f"train_sanity: {n} problems -> {out}")


@app.command()
def rehearse(file: Path = typer.Argument(..., help="campaign YAML (e.g. configs/campaign/python4.yaml)"),
             out: Path = typer.Option(Path("runs/rehearsal"), "--out", help="rehearsal folder (reused: done runs are skipped)"),
             only: Optional[str] = ONLY,
             model: Optional[str] = typer.Option(None, "--model", help="one model key, e.g. gemma4_12b (and what it needs)"),
             config: Optional[Path] = typer.Option(None, "--config", help="size-only overrides (default: configs/rehearsal/<FILE name>)")) -> None:
    """Run the campaign's DAG from its own stage configs on tiny CPU stand-ins (docs/rehearsal.md)."""
    from py4.config import ConfigError
    from py4.rehearsal.rehearse import rehearse as run_rehearsal

    try:
        report = run_rehearsal(file, out, config, model=model, only=only, log=lambda s: typer.echo(s, err=True))
    except (ConfigError, ValueError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2)
    typer.echo(", ".join(f"{k} {v}" for k, v in sorted(report["counts"].items())) + f" in {report['seconds']} s")
    typer.echo(f"-> {out / 'REHEARSAL_REPORT.md'}")
    if any(row["status"] != "done" for row in report["nodes"]):
        raise typer.Exit(1)
