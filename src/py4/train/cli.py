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
        result = run_stage(stage, config, overrides or [])
    except (ConfigError, KeyError, FileNotFoundError, TrainingGuardError, ValueError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    console.print(f"[green]done[/green] {stage}: {result}")


# A single command: py4.cli registers a plain function as `py4 train`.
app = train


def main() -> None:
    typer.run(train)
