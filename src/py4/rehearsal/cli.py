"""`py4 campaign rehearse FILE`: the campaign's DAG on tiny CPU stand-ins (docs/rehearsal.md).

A command of the ``py4 campaign`` group, defined here because the rehearsal sits above the
campaign (it runs the campaign's DAG); py4.cli adds it to that group.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from py4.errors import cli_errors

ONLY = typer.Option(None, "--only", help="glob (or substring) of run ids, e.g. 'tiny/iso/*' or 'eval:'")


@cli_errors  # a campaign, rehearsal config or --model the rehearsal cannot use: one line, exit 2
def rehearse(file: Path = typer.Argument(..., help="campaign YAML (e.g. configs/campaign/python4.yaml)"),
             out: Path = typer.Option(Path("runs/rehearsal"), "--out",
                                      help="rehearsal folder (reused: done runs are skipped)"),
             only: Optional[str] = ONLY,
             model: Optional[str] = typer.Option(None, "--model",
                                                 help="one model key, e.g. gemma4_12b (and what it needs)"),
             config: Optional[Path] = typer.Option(
                 None, "--config", help="size-only overrides (default: configs/rehearsal/<FILE name>)")) -> None:
    """Run the campaign's DAG from its own stage configs on tiny CPU stand-ins (docs/rehearsal.md)."""
    from py4.rehearsal.rehearse import rehearse as run_rehearsal

    report = run_rehearsal(file, out, config, model=model, only=only, log=lambda s: typer.echo(s, err=True))
    typer.echo(", ".join(f"{k} {v}" for k, v in sorted(report["counts"].items())) + f" in {report['seconds']} s")
    typer.echo(f"-> {out / 'REHEARSAL_REPORT.md'}")
    if any(row["status"] != "done" for row in report["nodes"]):
        raise typer.Exit(1)
