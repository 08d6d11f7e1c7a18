"""``py4 data``: mix, pack, schedule, inspect (and smoke-replay).

    py4 data mix --config configs/data/smoke_mix_iso.yaml [key=value ...]
    py4 data pack --config configs/data/smoke_sft.yaml [key=value ...]
    py4 data schedule --total-tokens 80090880 --micro-batch 1 --grad-accum 8 --gpus 4 --rounding ceil --warmup 0.03
    py4 data inspect runs/smoke/mix_iso --index 0

mix and pack are campaign stages: their options are declared once, on `MixOptions` and `PackOptions`
(py4.cli_options builds the commands, py4.stages writes a run's command line from them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer
from pydantic import Field
from rich.console import Console

from py4.cli_options import options_command, overrides_argument
from py4.config import StrictModel
from py4.data.errors import DataError
from py4.errors import cli_errors

app = typer.Typer(help="Data: replay and instruction sources, mixing, packing, step schedules.",
                  no_args_is_help=True)

_console = Console(soft_wrap=True)
OVERRIDES_HELP = "key=value overrides of the config, e.g. seed=7 replay.path=dir"
OVERRIDES = overrides_argument(OVERRIDES_HELP)


def _load(kind: str, config: Optional[Path], overrides: list[str] | None, extra: dict[str, Any] | None = None):
    from py4.config import apply_overrides, read_config_mapping, validate_config
    from py4.data.configs import config_type_for

    model = config_type_for(kind)
    data = apply_overrides(read_config_mapping(config, str(config)), overrides or [])
    data.update({k: v for k, v in (extra or {}).items() if v is not None})
    return validate_config(model, data, str(config) if config else "<command line>")


def _summary(manifest: dict[str, Any]) -> None:
    keys = ("kind", "arm", "total_mix_tokens", "total_tokens", "rows", "content_sha256")
    for key in keys:
        if key in manifest:
            _console.print(f"{key}: {manifest[key]}", highlight=False)
    for section in ("counts", "source"):
        if section in manifest:
            _console.print(f"{section}: {json.dumps(manifest[section])}", highlight=False)
    if "step_schedule" in manifest:
        s = manifest["step_schedule"]
        _console.print(f"max_steps: {s['max_steps']} ({s['rounding']}), warmup_steps: {s['warmup_steps']}",
                       highlight=False)


class MixOptions(StrictModel):
    """``py4 data mix`` (the mix stage)."""

    config: Path = Field(description="a data.mix YAML")


@app.command()
@cli_errors
@options_command(MixOptions, overrides=OVERRIDES_HELP)
def mix(options: MixOptions, overrides: list[str]) -> None:
    """Mix N corpus copies into an equal-token replay stream and pack it (midtraining data)."""
    from py4.data.mix import run_mix

    _summary(run_mix(_load("data.mix", options.config, overrides)))


class PackOptions(StrictModel):
    """``py4 data pack`` (the pack stage)."""

    config: Path = Field(description="a data.pack YAML")


@app.command()
@cli_errors
@options_command(PackOptions, overrides=OVERRIDES_HELP)
def pack(options: PackOptions, overrides: list[str]) -> None:
    """Pack chat conversations (SFT, assistant-only labels) or text documents."""
    from py4.data.pack import run_pack

    _summary(run_pack(_load("data.pack", options.config, overrides)))


def _total_from(path: str) -> int:
    from py4.data.packed_io import read_data_manifest

    manifest = read_data_manifest(path)
    total = manifest.get("total_mix_tokens", manifest.get("total_tokens"))
    if not isinstance(total, int):
        raise DataError(f"{path}: manifest has no total_mix_tokens/total_tokens")
    return total


@app.command()
@cli_errors
def schedule(
    config: Optional[Path] = typer.Option(None, "--config", help="a data.schedule YAML"),
    overrides: list[str] = OVERRIDES,
    total_tokens: Optional[str] = typer.Option(None, help="tokens of the mix (80090880, 80,090,880, 77.05M)"),
    rows: Optional[int] = typer.Option(None, help="rows per epoch, for unpacked stages (EFT)"),
    epochs: Optional[int] = typer.Option(None),
    seq_len: Optional[int] = typer.Option(None, help="sequence length [default 8192]"),
    micro_batch: Optional[int] = typer.Option(None),
    grad_accum: Optional[int] = typer.Option(None),
    gpus: Optional[int] = typer.Option(None),
    rounding: Optional[str] = typer.Option(None, help="ceil | floor [default floor]"),
    warmup: Optional[float] = typer.Option(None, help="warmup steps (>= 1) or ratio (< 1)"),
    max_steps_cap: Optional[int] = typer.Option(None, help="upper bound on steps"),
    out: Optional[Path] = typer.Option(None, help="folder for step_schedule.json [default: current folder]"),
    as_json: bool = typer.Option(False, "--json", help="print the schedule as JSON"),
) -> None:
    """Compute max steps from token (or row) counts and write step_schedule.json."""
    from py4.data.schedule import compute_schedule, parse_count, write_step_schedule

    flags = {"total_tokens": parse_count(total_tokens) if total_tokens is not None else None, "rows": rows,
             "epochs": epochs, "seq_len": seq_len, "micro_batch": micro_batch, "grad_accum": grad_accum,
             "gpus": gpus, "rounding": rounding, "warmup": warmup, "max_steps_cap": max_steps_cap,
             "out_dir": str(out) if out is not None else None}
    if config is not None and (flags["total_tokens"] is not None or rows is not None):
        overrides = list(overrides or []) + ["total_tokens=null", "total_tokens_from=null", "rows=null"]
    cfg = _load("data.schedule", config, overrides, flags)
    total = cfg.total_tokens if cfg.total_tokens_from is None else _total_from(cfg.total_tokens_from)
    result = compute_schedule(seq_len=cfg.seq_len, micro_batch=cfg.micro_batch, grad_accum=cfg.grad_accum,
                              gpus=cfg.gpus, rounding=cfg.rounding, total_tokens=total if cfg.rows is None else None,
                              rows=cfg.rows, epochs=cfg.epochs, warmup=cfg.warmup, max_steps_cap=cfg.max_steps_cap)
    if cfg.expected_max_steps is not None and result.max_steps != cfg.expected_max_steps:
        raise DataError(f"max_steps {result.max_steps} differs from the expected {cfg.expected_max_steps}")
    path = write_step_schedule(cfg.out_dir or ".", result)
    if as_json:
        print(json.dumps(result.to_json(), indent=2))
        return
    size = f"{result.total_tokens:,} tokens" if result.unit == "tokens" else f"{result.rows:,} rows"
    _console.print(
        f"sequence length {result.seq_len:,}; micro {result.micro_batch} x accum {result.grad_accum} x "
        f"gpus {result.gpus} = {result.sequences_per_step} sequences = {result.tokens_per_step:,} tokens per step\n"
        f"total {size} x {result.epochs} epoch(s) -> max steps {result.max_steps:,} ({result.rounding}"
        f"{', capped at %d' % result.max_steps_cap if result.max_steps_cap else ''}); "
        f"warmup steps {result.warmup_steps}\nwrote {path}", highlight=False)


@app.command()
@cli_errors
def inspect(
    args: list[str] = typer.Argument(None, help="[DATASET] [key=value ...]: a packed dataset folder and/or overrides"),
    config: Optional[Path] = typer.Option(None, "--config", help="a data.inspect YAML"),
    index: Optional[int] = typer.Option(None, help="row to show [default 0]"),
    tokenizer: Optional[str] = typer.Option(None, help="default: the tokenizer in the dataset's manifest.json"),
    max_tokens: Optional[int] = typer.Option(None, help="show at most this many tokens"),
    tokens: bool = typer.Option(False, "--tokens", help="also list every token: index id label position token"),
) -> None:
    """Decode a packed row and mark the supervised tokens (like axolotl preprocess --debug)."""
    from py4.data.inspect import inspect_packed_row

    overrides = [a for a in args or [] if "=" in a]
    positional = [a for a in args or [] if "=" not in a]
    if len(positional) > 1:
        raise DataError(f"one dataset folder expected, got {positional}")
    cfg = _load("data.inspect", config, overrides, {"dataset": positional[0] if positional else None,
                                                   "index": index, "tokenizer": tokenizer,
                                                   "max_tokens": max_tokens, "show_tokens": tokens or None})
    text = inspect_packed_row(cfg.dataset, cfg.index, tokenizer_name=cfg.tokenizer,
                              tokenizer_revision=cfg.tokenizer_revision, max_tokens=cfg.max_tokens,
                              show_tokens=cfg.show_tokens)
    _console.print(text, highlight=False, markup=False)


@app.command("smoke-replay")
@cli_errors
def smoke_replay(
    out: Path = typer.Option(..., help="folder for the jsonl shards and manifest.json"),
    max_docs: Optional[int] = typer.Option(None, help="stop after this many documents"),
    target_tokens: Optional[str] = typer.Option(None, help="stop once this many tokens are written "
                                                "(needs --tokenizer)"),
    tokenizer: Optional[str] = typer.Option(None, help="tokenizer to count with"),
    max_chars_per_doc: int = typer.Option(8000),
) -> None:
    """Write the smoke replay corpus made from the standard library's docstrings and source."""
    from py4.data.replay import build_smoke_replay
    from py4.data.schedule import parse_count
    from py4.data.tokens import load_tokenizer

    tok = load_tokenizer(tokenizer) if tokenizer else None
    manifest = build_smoke_replay(out, target_tokens=parse_count(target_tokens) if target_tokens else None,
                                  max_docs=max_docs, tokenizer=tok, max_chars_per_doc=max_chars_per_doc)
    _console.print(json.dumps(manifest, indent=2), highlight=False)
