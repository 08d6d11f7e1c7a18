"""`py4 corpus` command group: generate, export, subset, stats, validate (docs/corpus.md).

`generate` and `subset` are campaign stages: their options are declared once, on `CorpusOptions` and
`SubsetOptions` (py4.cli_options builds the commands; py4.stages writes a run's command line from them)."""

from __future__ import annotations

import json
from typing import Optional

import typer
from pydantic import Field

from py4.cli_options import options_command
from py4.config import StrictModel
from py4.errors import cli_errors, fail

app = typer.Typer(help="Synthetic documents that teach Python-4: generate, subset, stats, validate.",
                  no_args_is_help=True)


class CorpusOptions(StrictModel):
    """``py4 corpus generate`` (the corpus and heldout_corpus stages)."""

    config: str = Field(description="corpus YAML (configs/corpus/*.yaml)")
    out: str = Field(description="output folder (shards + manifest.json)")
    progress: bool = Field(True, description="no progress bar")
    probes: Optional[str] = Field(None, description="probe set folder (`py4 probes build`'s) whose text no "
                                  "document may hold (default: the shipped set)")


@app.command()
@cli_errors
@options_command(CorpusOptions, overrides="key=value overrides")
def generate(options: CorpusOptions, overrides: list[str]) -> None:
    """Generate a corpus: documents validated by Boa, deduplicated, token-counted."""
    from py4.config import load_config
    from py4.corpus.config import CorpusConfig
    from py4.corpus.generate import run

    cfg = load_config(CorpusConfig, options.config, overrides)
    try:
        manifest = run(cfg, options.out, progress=options.progress, probes_dir=options.probes)
    except OSError as exc:  # an unwritable output folder, a full disk: the user's to fix
        raise fail(str(exc)) from None
    typer.echo(f"{manifest['docs']} docs, {manifest['tokens']} tokens -> {options.out}")


@app.command()
@cli_errors
def export(corpus: str = typer.Argument(..., help="corpus folder (shards + manifest.json)"),
           out: str = typer.Option(..., "--out", help="dataset folder to write (data/ shards + README.md card)"),
           name: Optional[str] = typer.Option(None, "--name", help="the dataset's title in its card"),
           push: Optional[str] = typer.Option(None, "--push", help="then upload it to this Hub dataset ORG/NAME"),
           revision: Optional[str] = typer.Option(None, "--revision", help="branch to upload to (made if missing)"),
           force: bool = typer.Option(False, "--force", help="write into a folder that holds other files")) -> None:
    """Write a corpus as a Hub dataset folder (a train split, a dataset card); --push uploads it."""
    from py4.corpus.export import export_corpus
    from py4.hub.push import check_repo_id, export_summary

    if push:
        check_repo_id(push)
    typer.echo(export_summary(export_corpus(corpus, out, name=name, force=force), push, revision, "dataset"))


class SubsetOptions(StrictModel):
    """``py4 corpus subset`` (the subset stage)."""

    corpus: str = Field(description="corpus folder to draw whole documents from")
    target_tokens: int = Field(description="stop once the subset holds at least this many tokens")
    seed: int = Field(description="seed of the documents' random order")
    out: str = Field(description="output folder (shards + manifest.json)")


@app.command()
@cli_errors
@options_command(SubsetOptions)
def subset(options: SubsetOptions) -> None:
    """Whole documents in seeded random order until the total reaches at least N tokens."""
    from py4.corpus.subset import subset as make_subset

    manifest = make_subset(options.corpus, options.target_tokens, options.seed, options.out)
    typer.echo(f"{manifest['docs']} docs, {manifest['tokens']} tokens -> {options.out}")


@app.command()
@cli_errors
def stats(corpus: str = typer.Argument(..., help="corpus folder"),
          as_json: bool = typer.Option(False, "--json", help="print the JSON object only")) -> None:
    """Documents, tokens, documents per rule and per type."""
    from py4.corpus.subset import stats as corpus_stats

    data = corpus_stats(corpus)
    if as_json:
        typer.echo(json.dumps(data))
        return
    typer.echo(f"{data['docs']} docs, {data['tokens']} tokens")
    for rule, n in data["per_rule"].items():
        typer.echo(f"  {rule}: {n} docs ({100 * n / max(1, data['docs']):.1f}%)")
    for kind, n in data["per_type"].items():
        typer.echo(f"  {kind}: {n} docs")


@app.command()
@cli_errors
def validate(corpus: str = typer.Argument(..., help="corpus folder"),
             cache_dir: Optional[str] = typer.Option("campaign-out/cache/corpus-boa",
                                                     help="Boa results cache ('' = none)"),
             workers: int = typer.Option(2),
             probes: Optional[str] = typer.Option(None, help="probe set folder (`py4 probes build`'s, or a "
                                                  "campaign's pinned one) whose text no document may hold "
                                                  "(default: the shipped set)")) -> None:
    """Re-check every code block of every document with Boa, and that no document holds probe
    text; exit 1 when any claim is wrong."""
    from py4.corpus.subset import validate_corpus

    report = validate_corpus(corpus, cache_dir or None, workers, probes_dir=probes)
    typer.echo(json.dumps(report, indent=2))
    raise typer.Exit(1 if report["failed_docs"] else 0)
