"""`py4 train STAGE --config FILE [key=value ...]`: run one training stage.

On several GPUs, launch the same module through accelerate with an FSDP2 config:
``accelerate launch --config_file configs/accelerate/fsdp2_8gpu.yaml -m py4.train sft --config FILE``.
"""

from __future__ import annotations

import typer

def train(
    stage: str = typer.Argument(..., help="midtrain | sft | eft_dose | eft | grpo"),
    config: str = typer.Option(..., "--config", "-c", help="stage YAML (configs/train/...)"),
    overrides: list[str] = typer.Argument(None, help="key=value overrides, e.g. optimisation.learning_rate=2e-5"),
) -> None:
    """Run STAGE with its config; every run writes resolved_config.yaml and run_manifest.json."""
    from rich.console import Console

    from py4.config import ConfigError
    from py4.train.common import TrainingGuardError
    from py4.train.stages import run_stage

    console = Console(stderr=True)
    try:
        _check_data_path(stage, config, overrides or [])
        result = run_stage(stage, config, overrides or [])
    except (ConfigError, KeyError, FileNotFoundError, TrainingGuardError, ValueError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    console.print(f"[green]done[/green] {stage}: {_summary(result)}")


def _summary(result) -> str:
    """One line a person reads: where the weights are, steps, loss (not the result's repr)."""
    from dataclasses import is_dataclass

    if not is_dataclass(result):
        return f"-> {result}"  # eft_dose: the dose folder
    loss = "" if result.train_loss is None else f", train loss {result.train_loss:.4f}"
    resumed = f", resumed from {result.resumed_from}" if result.resumed_from else ""
    return f"{result.global_step} steps{loss}{resumed} -> {result.model_dir}"


def _check_data_path(stage: str, config: str, overrides: list[str]) -> None:
    """A ``data.path`` that does not exist, named as given (file or override) before anything
    reads a schedule or a manifest beside where the config's default data would be.

    Raises ConfigError (with the stage's other config problems, KeyError for an unknown stage).
    """
    from pathlib import Path

    from py4.config import ConfigError, load_config
    from py4.train.stages import get_stage

    _, config_type = get_stage(stage)
    data = getattr(load_config(config_type, config, overrides), "data", None)
    path = getattr(data, "path", None)
    if isinstance(path, str) and not Path(path).exists():
        given = "the command line" if any(o.startswith("data.path=") for o in overrides) else config
        raise ConfigError(config, [f"data.path {path!r} (from {given}) does not exist"])


# A single command: py4.cli registers a plain function as `py4 train`.
app = train


def main() -> None:
    typer.run(train)
