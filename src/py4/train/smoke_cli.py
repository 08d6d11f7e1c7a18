"""`py4 smoke assets --out DIR`: build the smoke tokenizer, tiny base and tiny -it models."""

from __future__ import annotations

import typer

from py4.errors import cli_errors

app = typer.Typer(help="smoke-scale assets", no_args_is_help=True)


@app.command("assets")
@cli_errors  # an invalid SmokeAssetsConfig (ConfigError): one line naming the file and field, exit 2
def assets(
    out: str = typer.Option("smoke-assets", "--out", help="folder to write tokenizer/, base/, it/ into"),
    config: str = typer.Option(None, "--config", help="SmokeAssetsConfig YAML (defaults if omitted)"),
    force: bool = typer.Option(False, "--force", help="rebuild even if a complete build is there"),
    overrides: list[str] = typer.Argument(None, help="key=value overrides, e.g. it_training.steps=200"),
) -> None:
    """Write smoke assets (deterministic; a complete earlier build with the same config is reused)."""
    from rich.console import Console

    from py4.config import load_config
    from py4.train.assets import SmokeAssetsConfig, build_smoke_assets

    console = Console(stderr=True)
    cfg = load_config(SmokeAssetsConfig, config, overrides or [])
    with console.status("building smoke assets (tokenizer, base, -it SFT)…"):
        path = build_smoke_assets(out, cfg, force=force)
    console.print(f"[green]smoke assets[/green] in {path}")


@app.command("heldout-loss")
@cli_errors  # a corpus folder without shards, a malformed document (file:line: field), nothing held out: exit 2
def heldout_loss(
    model: str = typer.Option(..., "--model", help="model folder (weights + tokenizer)"),
    docs: str = typer.Option(..., "--docs", help="corpus folder of held-out documents (py4 corpus generate)"),
    exclude: list[str] = typer.Option([], "--exclude", help="training corpus folder(s): their documents are dropped"),
    max_tokens: int = typer.Option(40000, "--max-tokens", help="tokens scored (documents in order)"),
    out: str = typer.Option(..., "--out", help="run folder: results.json"),
) -> None:
    """Mean next-token loss of a model on held-out Python-4 documents (docs/campaign.md)."""
    from py4.train.heldout_loss import heldout_loss as score

    result = score(model, docs, list(exclude), max_tokens, out)
    typer.echo(f"held-out loss {result['all']['loss']:.4f} over {result['all']['scored_tokens']} tokens "
               f"({result['documents']} documents, {result['dropped_as_trained_on']} dropped as trained on) "
               f"-> {out}/results.json")
