"""`py4 report`: the hyperparameter table, result tables and figures of a campaign.

    py4 report hyperparameters configs/campaign/python4.yaml --format latex
    py4 report results configs/campaign/smoke.yaml [--out DIR] [out_dir=CAMPAIGN_FOLDER]
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from py4.errors import Py4Error, cli_errors

app = typer.Typer(help="Tables and figures: the hyperparameter table, results, dose-response and GRPO ladder.",
                  no_args_is_help=True)


@app.command()
@cli_errors  # a campaign or stage config the table cannot be read from: one line, exit 2
def hyperparameters(
    file: Path = typer.Argument(..., help="campaign YAML (configs/campaign/*.yaml)"),
    fmt: str = typer.Option("json", "--format", help="json | latex | md"),
    out: Optional[Path] = typer.Option(None, "--out", help="write here instead of stdout"),
) -> None:
    """Regenerate the hyperparameter table from the campaign config and the stage configs it names."""
    from py4.report.hyperparameters import build_table, render_latex, render_markdown

    if fmt not in ("json", "latex", "md"):
        raise Py4Error(f"--format must be json, latex or md, got {fmt!r}")
    # ConfigError (an invalid campaign or stage config) and TableError (the configs disagree, or one
    # the table needs is missing) are Py4Errors naming the file: cli_errors shows them
    table = build_table(file)
    text = {"json": lambda: json.dumps(table, indent=2, ensure_ascii=False) + "\n",
            "latex": lambda: render_latex(table), "md": lambda: render_markdown(table)}[fmt]()
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        typer.echo(f"-> {out}")
    else:
        typer.echo(text, nl=False)


@app.command()
@cli_errors
def results(
    file: Path = typer.Argument(..., help="campaign YAML whose runs are reported"),
    out: Optional[Path] = typer.Option(None, "--out", help="report folder (default: <campaign out_dir>/report)"),
    figures: bool = typer.Option(True, "--figures/--no-figures", help="also draw the PNG figures"),
    calibration: bool = typer.Option(True, "--calibration/--no-calibration",
                                     help="run the scripted calibration evaluations that are missing or stale"),
    overrides: Optional[list[str]] = typer.Argument(None, help="key=value overrides of the campaign "
                                                    "(out_dir=DIR: the campaign folder of `py4 demo --out DIR`)"),
) -> None:
    # The docstring is the command's help, one line in `py4 report --help`: two adjacent literals keep it one line.
    ("Certified rates (95% CI, n) per model x arm x dose x split, calibration, probes (probes.json), GRPO; "
     "markdown + JSON + PNGs.")
    from py4.campaign.spec import load_campaign
    from py4.report.results import write_results

    spec = load_campaign(file, overrides or [])  # ConfigError (a Py4Error): one line, exit 2
    paths = write_results(spec, out or Path(spec.out_dir) / "report", figures=figures, calibration=calibration)
    for p in paths:
        typer.echo(f"-> {p}")
