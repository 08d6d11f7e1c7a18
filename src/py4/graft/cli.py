"""`py4 graft`: the chat-vector graft, and `py4 graft verify`.

    py4 graft --mid runs/mid --it google/gemma-3-1b-it --it-revision <sha> --base google/gemma-3-1b-pt \\
              --lambda 1.0 --out runs/graft
    py4 graft --config configs/graft/smoke.yaml lambda_=0.5 missing.only_in_it=skip
    py4 graft verify --out runs/graft --all

Flags and ``key=value`` overrides are fields of ``py4.graft.config.GraftConfig``.
"""

from __future__ import annotations

from pathlib import Path

import typer
from typer.core import TyperGroup

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


@app.callback()
@cli_errors  # bad input (ConfigError, GraftError: a config, a checkpoint, an output folder): one line, exit 2
def graft(
    ctx: typer.Context,
    mid: str | None = typer.Option(None, "--mid", help="model grafted onto: folder or Hub id"),
    it: str | None = typer.Option(None, "--it", help="instruction-tuned model: folder or Hub id"),
    base: str | None = typer.Option(None, "--base", help="pretrained model of -it: folder or Hub id"),
    mid_revision: str | None = typer.Option(None, "--mid-revision", help="Hub revision of --mid"),
    it_revision: str | None = typer.Option(None, "--it-revision", help="Hub revision of --it"),
    base_revision: str | None = typer.Option(None, "--base-revision", help="Hub revision of --base"),
    lambda_: float | None = typer.Option(None, "--lambda", help="scale of the chat vector (default 1.0)"),
    out: str | None = typer.Option(None, "--out", help="output folder"),
    output_dtype: str | None = typer.Option(None, "--output-dtype", help="bfloat16 | float16 | float32"),
    accumulate_dtype: str | None = typer.Option(None, "--accumulate-dtype", help="float32 | float64"),
    max_shard_size: str | None = typer.Option(None, "--max-shard-size", help="e.g. 5GB"),
    config: Path | None = typer.Option(None, "--config", help="YAML GraftConfig; flags and key=value override it"),
    overrides: list[str] = typer.Option([], "--set", help="key=value override (a bare key=value works too)"),
    overwrite: bool = typer.Option(False, "--overwrite", help="replace a different graft already in --out"),
    progress: bool = typer.Option(True, "--progress/--no-progress"),
) -> None:
    """Graft (the main form); `verify` re-checks a finished graft."""
    if ctx.invoked_subcommand is not None:
        return
    from py4.graft.config import resolve_graft_config
    from py4.graft.engine import run

    flags = {"mid.path": mid, "it.path": it, "base.path": base, "mid.revision": mid_revision,
             "it.revision": it_revision, "base.revision": base_revision, "lambda_": lambda_, "out": out,
             "output_dtype": output_dtype, "accumulate_dtype": accumulate_dtype,
             "max_shard_size": max_shard_size, "overwrite": True if overwrite else None}
    cfg = resolve_graft_config(config, flags, overrides)
    result = run(cfg, show_progress=progress)
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
