"""`py4 train STAGE --config FILE [key=value ...]`: run one training stage, through the stage registry.

The stages it takes are the registry's stages whose command is ``train STAGE`` (`py4.stages`); its
options are `py4.stages.TrainOptions` (py4.cli_options builds the command from them).
On several GPUs, launch the same module through accelerate with an FSDP2 config:
``accelerate launch --config_file configs/accelerate/fsdp2.yaml --num_processes N -m py4.train sft --config FILE``
(N: the config's ``optimisation.gpus``)
(``python -m py4.train`` is this command: py4/train/__main__.py).

A user's error (a :class:`~py4.errors.Py4Error`: an unknown stage, a config problem, a missing or
malformed input file, a training guard) is one line ``error: …`` and exit 2; anything else a
stage raises is a bug and keeps its traceback.
"""

from __future__ import annotations

import typer

from py4.cli_options import options_command
from py4.errors import Py4Error, cli_errors
from py4.stages import STAGES, TrainOptions

TRAINING_STAGES = [name for name, stage in STAGES.items() if stage.command == ("train", name)]


@cli_errors
@options_command(TrainOptions, overrides="key=value overrides, e.g. optimisation.learning_rate=2e-5")
def train(
    options: TrainOptions,
    overrides: list[str],
    stage: str = typer.Argument(..., help=" | ".join(TRAINING_STAGES)),
) -> None:
    """Run STAGE with its config; every run writes resolved_config.yaml and run_manifest.json."""
    from rich.console import Console

    from py4.stages import StageCall, result_summary, run_call, unknown_stage
    from py4.stages import overrides as parse_overrides

    if stage not in TRAINING_STAGES:
        raise Py4Error(unknown_stage(stage, TRAINING_STAGES))
    result = run_call(StageCall(stage=stage, config=options.config, overrides=tuple(parse_overrides(overrides))))
    Console(stderr=True).print(f"[green]done[/green] {stage}: {result_summary(result)}")


# A single command: py4.cli registers a plain function as `py4 train`.
app = train


def main() -> None:
    typer.run(train)
