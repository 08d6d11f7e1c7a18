"""`py4`: the pipeline's command line. Each package contributes one sub-command group; `py4 train`
runs the stage registry's training stages (py4.stage_cli), and `py4 campaign rehearse` and
`py4 demo` are added here because they sit above the campaign (and the report).

Sub-command modules import heavy libraries (torch, transformers) inside their
commands, never at import time, so `py4 --help` stays fast.
"""

from __future__ import annotations

import importlib

import typer

from py4.campaign.cli import app as _campaign_app
from py4.cli_help import install as _plain_help_types
from py4.errors import cli_errors
from py4.rehearsal.cli import rehearse
from py4.stage_cli import add_stage_commands

_plain_help_types()  # --help shows TEXT / INTEGER / KEY=VALUE..., not <str> / <list[str]> (py4.cli_help)

app = typer.Typer(
    name="py4",
    help="The Python-4 study toolkit: problems, corpus, data, training, graft, evaluation, campaign.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# name -> module holding a `typer.Typer` called `app`. The order is the help's order.
SUBCOMMANDS: dict[str, str] = {
    "problems": "py4.problems.cli",
    "corpus": "py4.corpus.cli",
    "data": "py4.data.cli",
    "smoke": "py4.train.smoke_cli",
    "train": "py4.stage_cli",
    "graft": "py4.graft.cli",
    "eval": "py4.evaluate.cli",
    "probes": "py4.probes.cli",
    "campaign": "py4.campaign.cli",
    "report": "py4.report.cli",
}

for _name, _module in SUBCOMMANDS.items():
    _sub = importlib.import_module(_module).app
    if isinstance(_sub, typer.Typer):
        app.add_typer(_sub, name=_name)
    else:  # a single command (a plain function)
        app.command(_name)(_sub)

add_stage_commands(app)  # a registry stage without a command of its own gets one built from its options

FORCE = typer.Option(False, "--force", help="let a stage write into a run folder a campaign owns "
                                           "(py4 --force corpus generate ...; refused otherwise)")


@app.callback()
def _root(force: bool = FORCE) -> None:
    """Options of every command (before the command's name)."""
    if force:
        import os

        from py4.run_owner import FORCE_ENV

        os.environ[FORCE_ENV] = "1"


# `py4 campaign rehearse`: the rehearsal runs the campaign's DAG, so it sits above the campaign.
_campaign_app.command("rehearse")(rehearse)


@app.command()
def demo(out: str = typer.Option("campaign-out/smoke", help="where the smoke campaign writes its runs"),
         threads: str = typer.Option(None, "--threads", help="torch threads of each run (default: the cores free "
                                                            "when it starts; 'torch': torch's own default)")) -> None:
    """Run the smoke campaign end to end and print where the results are, and how long it took."""
    from py4.demo import run_demo

    raise typer.Exit(run_demo(out, threads=threads))


@app.command()
@cli_errors
def push(model_dir: str = typer.Argument(..., help="a model folder a py4 run wrote (…/model, or a graft)"),
         repo_id: str = typer.Argument(..., help="Hub model repository ORG/NAME (created private if missing)"),
         revision: str = typer.Option(None, "--revision", help="branch to upload to (made if missing)"),
         results: list[str] = typer.Option([], "--results", help="an evaluation or probes run folder whose "
                                                                 "results go into the card (repeatable; "
                                                                 "default: the campaign's runs that measured "
                                                                 "this folder)")) -> None:
    """Upload a model with a card saying what made it (base, data, config, code, results)."""
    from py4.hub.model_card import campaign_results, push_model

    chosen = results or campaign_results(model_dir)
    if not results:
        typer.echo(f"results in the card: {', '.join(str(r) for r in chosen)}" if chosen else
                   "results in the card: none (no evaluation or probe run of a campaign measured this folder; "
                   "--results RUN_DIR adds one)")
    typer.echo(f"pushed to {push_model(model_dir, repo_id, revision=revision, results=chosen)}")
