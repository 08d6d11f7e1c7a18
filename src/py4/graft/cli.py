"""`py4 graft`: the chat-vector graft, and `py4 graft verify`.

    py4 graft --mid runs/mid --it google/gemma-3-1b-it --it-revision <sha> --base google/gemma-3-1b-pt \\
              --lambda 1.0 --out runs/graft
    py4 graft --config configs/graft/smoke.yaml lambda_=0.5 missing.only_in_it=skip
    py4 graft verify --out runs/graft --all

Flags and ``key=value`` overrides are fields of ``py4.graft.config.GraftConfig``. The graft's options
are declared once, on `GraftOptions` (py4.cli_options builds the command, py4.stages writes a graft
run's command line from it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import Field
from typer.core import TyperGroup

from py4.cli_options import Cli, options_command
from py4.config import StrictModel
from py4.errors import Py4Error, cli_errors

__all__ = ["app"]


class _GraftGroup(TyperGroup):
    """A group whose callback is the graft itself and which accepts ``key=value`` overrides.

    Click would read a bare ``key=value`` as a sub-command name, so in the main form
    (no sub-command first) each one is passed on as ``--set key=value``.
    """

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands:
            flags = {opt for p in self.params if getattr(p, "is_flag", False)
                     for opt in [*p.opts, *getattr(p, "secondary_opts", [])]}
            rewritten, expects_value = [], False
            for arg in args:
                if not expects_value and "=" in arg and not arg.startswith("-"):
                    rewritten += ["--set", arg]
                else:
                    rewritten.append(arg)
                expects_value = arg.startswith("--") and "=" not in arg and arg not in flags
            args = rewritten
        return super().parse_args(ctx, args)


app = typer.Typer(cls=_GraftGroup, invoke_without_command=True, no_args_is_help=True, add_completion=False,
                  help="Chat-vector graft: W_graft = W_mid + lambda (W_it - W_base), streamed over safetensors shards.")


class GraftOptions(StrictModel):
    """``py4 graft``'s options (the graft stage); all but ``progress`` and ``config`` set fields of
    py4.graft.config.GraftConfig (:meth:`config_fields`)."""

    mid: str | None = Field(None, description="model grafted onto: folder or Hub id")
    it: str | None = Field(None, description="instruction-tuned model: folder or Hub id")
    base: str | None = Field(None, description="pretrained model of -it: folder or Hub id")
    out: str | None = Field(None, description="output folder")
    progress: Annotated[bool, Cli(flag="--progress/--no-progress")] = Field(True, description="a progress bar")
    config: Path | None = Field(None, description="YAML GraftConfig; flags and key=value override it")
    it_revision: str | None = Field(None, description="Hub revision of --it")
    base_revision: str | None = Field(None, description="Hub revision of --base")
    mid_revision: str | None = Field(None, description="Hub revision of --mid")
    lambda_: float | None = Field(None, description="scale of the chat vector (default 1.0)")
    output_dtype: str | None = Field(None, description="bfloat16 | float16 | float32")
    accumulate_dtype: str | None = Field(None, description="float32 | float64")
    max_shard_size: str | None = Field(None, description="e.g. 5GB")
    overwrite: bool = Field(False, description="replace a different graft already in --out")

    def config_fields(self) -> dict[str, Any]:
        """The GraftConfig fields these options set (dotted; None: left as the file has it)."""
        return {"mid.path": self.mid, "it.path": self.it, "base.path": self.base, "mid.revision": self.mid_revision,
                "it.revision": self.it_revision, "base.revision": self.base_revision, "lambda_": self.lambda_,
                "out": self.out, "output_dtype": self.output_dtype, "accumulate_dtype": self.accumulate_dtype,
                "max_shard_size": self.max_shard_size, "overwrite": True if self.overwrite else None}


@app.callback()
@cli_errors  # bad input (ConfigError, GraftError: a config, a checkpoint, an output folder): one line, exit 2
@options_command(GraftOptions)
def graft(
    ctx: typer.Context,
    options: GraftOptions,
    overrides: list[str] = typer.Option([], "--set", help="key=value override (a bare key=value works too)"),
) -> None:
    """Graft (the main form); `verify` re-checks a finished graft."""
    if ctx.invoked_subcommand is not None:
        return
    from py4.graft.config import resolve_graft_config
    from py4.graft.engine import run

    cfg = resolve_graft_config(options.config, options.config_fields(), overrides)
    result = run(cfg, show_progress=options.progress)
    typer.echo(result.summary())
    rate = result.total_size / 1e6 / result.stream_seconds if result.stream_seconds else float("nan")
    typer.echo(f"stream {result.stream_seconds:.1f} s ({rate:.0f} MB/s); peak RSS "
               f"{result.peak_rss_bytes / 2**20:.0f} MiB; verified {len(result.verified)} tensor(s) bit-exactly")


@app.command("verify")
@cli_errors
def verify(
    out: Path = typer.Option(..., "--out", help="a graft's output folder"),
    config: Path | None = typer.Option(None, "--config", help="GraftConfig (default: OUT/resolved_config.yaml)"),
    all_tensors: bool = typer.Option(False, "--all", help="check every stored tensor"),
    sample: int | None = typer.Option(None, "--sample", help="tensors to check (default: the config's verify_sample)"),
    seed: int | None = typer.Option(None, "--seed", help="sampling seed (default: the config's verify_seed)"),
    mid: str | None = typer.Option(None, "--mid", help="where mid is now, if it moved"),
    it: str | None = typer.Option(None, "--it", help="where -it is now, if it moved"),
    base: str | None = typer.Option(None, "--base", help="where base is now, if it moved"),
) -> None:
    """Recompute stored tensors from the inputs and compare them bit for bit; exit 1 on a mismatch, 2 on bad input."""
    from py4.graft.config import resolve_graft_config
    from py4.graft.verify import verify_graft

    config_file = config or out / "resolved_config.yaml"
    if not config_file.is_file():
        raise Py4Error(f"{config_file}: not found; pass --config with the graft's GraftConfig")
    flags = {"out": str(out), "mid.path": mid, "it.path": it, "base.path": base}
    cfg = resolve_graft_config(config_file, flags)
    count = None if all_tensors else (sample if sample is not None else max(cfg.verify_sample, 1))
    result = verify_graft(cfg, sample=count, seed=cfg.verify_seed if seed is None else seed)
    for problem in result.mismatches:
        typer.secho(f"MISMATCH {problem}", err=True, fg=typer.colors.RED)
    typer.echo(f"checked {len(result.checked)} tensor(s): {len(result.mismatches)} problem(s)")
    if not result.ok:
        raise typer.Exit(1)
