"""`py4 probes`: build the probe set and score models on it (docs/probes.md).

    py4 probes build [--out DIR]
    py4 probes export --out DIR [--push ORG/NAME [--revision BRANCH]]
    py4 probes eval --model DIR [--adapter DIR] [--base DIR|RESULTS.json] [--compare RESULTS.json] --out DIR
    py4 probes eval --endpoint URL --model SERVED [--tokenizer DIR] [--base SERVED] --out DIR

``py4 eval probes`` is the same command (``eval_probes``, registered in py4.evaluate.cli); its options
are declared once, on `ProbesOptions` (py4.cli_options builds the command, py4.stages writes a probes
run's command line from it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from pydantic import Field

from py4.cli_options import options_command
from py4.config import StrictModel
from py4.errors import Py4Error, cli_errors
from py4.probes.score import BATCH_SIZE

app = typer.Typer(help="Rule probes: minimal Python-4 / Python 3 pairs and model scores on them.",
                  no_args_is_help=True)


@app.command("build")
@cli_errors
def build(out: Optional[Path] = typer.Option(None, "--out", help="data folder (default: the shipped one)")) -> None:
    """Build the probe set (deterministic) and write it with its manifest and content hash."""
    from py4.problems.probe_set.build import build_probes, write_probes

    path, manifest = write_probes(build_probes(), out)
    typer.echo(f"wrote {path} and {manifest.name}")


@app.command("export")
@cli_errors
def export(out: Path = typer.Option(..., "--out", help="dataset folder to write (data/ shard + README.md card)"),
           push: Optional[str] = typer.Option(None, "--push", help="then upload it to this Hub dataset ORG/NAME"),
           revision: Optional[str] = typer.Option(None, "--revision", help="branch to upload to (made if missing)"),
           force: bool = typer.Option(False, "--force", help="write into a folder that holds other files")) -> None:
    """Write the shipped probe set as a Hub dataset folder (a test split, a dataset card); --push uploads it."""
    from py4.hub.push import check_repo_id, export_summary
    from py4.probes.export import export_probes

    if push:
        check_repo_id(push)
    typer.echo(export_summary(export_probes(out, force=force), push, revision, "dataset"))


class ProbesOptions(StrictModel):
    """``py4 eval probes`` / ``py4 probes eval`` (the probes stage): score a model (and its base) on the
    rule probes."""

    model: str = Field(description="local model folder; with --endpoint: the served model name")
    out: Path = Field(description="run folder (results.json, results.md, run_manifest.json)")
    progress: bool = Field(True, description="no progress bar")
    adapter: str | None = Field(None, description="PEFT adapter folder (local model)")
    base: str | None = Field(None, description="the untrained base, scored beside as the floor: a model folder "
                             "(with --endpoint: a served name) or its probes results.json")
    limit: int | None = Field(None, description="every k-th pair so that about N are scored")
    compare: Path | None = Field(None, description="another run's results.json: paired difference")
    probes: Path | None = Field(None, description="a probe-set folder (probes-<version>.jsonl.gz + manifest, e.g. "
                                "a campaign's pinned set); default: the shipped set")
    endpoint: str | None = Field(None, description="OpenAI-compatible base URL (…/v1) returning prompt "
                                 "log-probabilities (vLLM /v1/completions, echo)")
    tokenizer: str | None = Field(None, description="with --endpoint: the served model's tokenizer folder "
                                  "(token-id prompts: the local path's exact scores)")
    batch_size: int = Field(BATCH_SIZE, description="pairs per model call / request")


@cli_errors
@options_command(ProbesOptions)
def eval_probes(options: ProbesOptions) -> None:
    """Score a model (and its base) on the rule probes; write results.json and results.md."""
    from py4.endpoint_client import EndpointError
    from py4.probes.evaluate import evaluate_probes

    o = options
    try:
        results = evaluate_probes(o.model, o.out, adapter=o.adapter, base=o.base, endpoint=o.endpoint,
                                  tokenizer=o.tokenizer, compare=o.compare, limit=o.limit, batch_size=o.batch_size,
                                  progress=o.progress, probes_dir=o.probes)
    except EndpointError as exc:  # the server refused or kept failing: what to fix is in the message
        raise Py4Error(str(exc)) from None
    from py4.probes.stats import accuracy_text

    for label, s in (("model", results["summary"]), ("base", (results.get("base") or {}).get("summary"))):
        if s:
            typer.echo(f"{label}: {accuracy_text(s)} on {s['all']['pairs']} pairs")
    if not o.base:
        from py4.probes.evaluate import NO_BASE

        typer.echo(f"note: {NO_BASE}", err=True)
    typer.echo(f"-> {o.out}")


app.command("eval")(eval_probes)


def eval_group(episodes) -> typer.Typer:
    """`py4 eval`: ``py4 eval probes …`` scores rule probes; any other arguments go to ``episodes``
    (the bank-episodes command, unchanged: ``py4 eval --split … --out …``).

    The episodes command ends with free ``key=value`` overrides, so it cannot be a group's
    callback (the overrides would swallow a sub-command's name): it is the group's default
    command instead, also reachable as ``py4 eval episodes``.
    """
    from typer.core import TyperGroup

    class DefaultEpisodes(TyperGroup):
        def parse_args(self, ctx, args):
            if not args or args[0] not in self.commands:
                args = ["episodes", *args]
            return super().parse_args(ctx, args)

    group = typer.Typer(cls=DefaultEpisodes, help="Evaluate: episodes on bank splits (py4 eval --help) or rule "
                        "probes (py4 eval probes --help).")
    group.command("episodes", epilog="Rule probes: py4 eval probes --help (docs/probes.md).")(episodes)
    group.command("probes")(eval_probes)
    return group
