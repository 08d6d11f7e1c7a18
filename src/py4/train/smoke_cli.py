"""`py4 smoke assets --out DIR`: build the smoke tokenizer, tiny base and tiny -it models; and
`py4 smoke heldout-loss`. Both are campaign stages: their options are declared once, on
`AssetsOptions` and `HeldoutLossOptions` (py4.cli_options builds the commands, py4.stages writes a
run's command line from them)."""

from __future__ import annotations

import typer
from pydantic import Field

from py4.cli_options import options_command
from py4.config import StrictModel
from py4.errors import cli_errors

app = typer.Typer(help="smoke-scale assets", no_args_is_help=True)


class AssetsOptions(StrictModel):
    """``py4 smoke assets`` (the assets stage)."""

    out: str = Field("smoke-assets", description="folder to write tokenizer/, base/, it/ into")
    config: str | None = Field(None, description="SmokeAssetsConfig YAML (defaults if omitted)")
    force: bool = Field(False, description="rebuild even if a complete build is there")


@app.command("assets")
@cli_errors  # an invalid SmokeAssetsConfig (ConfigError): one line naming the file and field, exit 2
@options_command(AssetsOptions, overrides="key=value overrides, e.g. it_training.steps=200")
def assets(options: AssetsOptions, overrides: list[str]) -> None:
    """Write smoke assets (deterministic; a complete earlier build with the same config is reused)."""
    from rich.console import Console

    from py4.config import load_config
    from py4.train.assets import SmokeAssetsConfig, build_smoke_assets

    console = Console(stderr=True)
    cfg = load_config(SmokeAssetsConfig, options.config, overrides)
    with console.status("building smoke assets (tokenizer, base, -it SFT)…"):
        path = build_smoke_assets(options.out, cfg, force=options.force)
    console.print(f"[green]smoke assets[/green] in {path}")


class HeldoutLossOptions(StrictModel):
    """``py4 smoke heldout-loss`` (the heldout_loss stage): a model's loss on held-out Python-4 documents."""

    model: str = Field(description="model folder (weights + tokenizer)")
    docs: str = Field(description="corpus folder of held-out documents (py4 corpus generate)")
    exclude: list[str] = Field([], description="training corpus folder(s): their documents are dropped")
    max_tokens: int = Field(40000, description="tokens scored (documents in order)")
    out: str = Field(description="run folder: results.json")


@app.command("heldout-loss")
@cli_errors  # a corpus folder without shards, a malformed document (file:line: field), nothing held out: exit 2
@options_command(HeldoutLossOptions)
def heldout_loss(options: HeldoutLossOptions) -> None:
    """Mean next-token loss of a model on held-out Python-4 documents (docs/campaign.md)."""
    from py4.train.heldout_loss import heldout_loss as score

    result = score(options.model, options.docs, list(options.exclude), options.max_tokens, options.out)
    typer.echo(f"held-out loss {result['all']['loss']:.4f} over {result['all']['scored_tokens']} tokens "
               f"({result['documents']} documents, {result['dropped_as_trained_on']} dropped as trained on) "
               f"-> {options.out}/results.json")
