"""`py4 train STAGE --config FILE [key=value ...]`: run one training stage, through the stage registry;
and the generated command of a stage without one of its own (:func:`add_stage_commands`).

The stages it takes are the registry's stages whose command is ``train STAGE`` (`py4.stages`); its
options are `py4.stages.TrainOptions` (py4.cli_options builds the command from them).
On several GPUs, accelerate launches the same command with an FSDP2 config (``python -m py4`` is
the ``py4`` command, py4/__main__.py):
``accelerate launch --config_file configs/accelerate/fsdp2.yaml --num_processes N -m py4 train sft --config FILE``
(N: the config's ``optimisation.gpus``).

A user's error (a :class:`~py4.errors.Py4Error`: an unknown stage, a config problem, a missing or
malformed input file, a training guard) is one line ``error: …`` and exit 2; anything else a
stage raises is a bug and keeps its traceback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from py4.cli_options import options_command
from py4.errors import Py4Error, cli_errors
from py4.stages import STAGES, Stage, TrainOptions

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
    from py4.overrides import overrides as parse_overrides

    if stage not in TRAINING_STAGES:
        raise Py4Error(unknown_stage(stage, TRAINING_STAGES))
    result = run_call(StageCall(stage=stage, config=options.config, overrides=tuple(parse_overrides(overrides))))
    Console(stderr=True).print(f"[green]done[/green] {stage}: {result_summary(result)}")


# A single command: py4.cli registers a plain function as `py4 train`.
app = train


def stage_command(stage: Stage) -> Callable[..., None]:
    """The command of a stage that has none of its own: the stage's options (and ``key=value``
    overrides where it has a config type) as built by py4.cli_options, the stage run in this process
    (`py4.stages.run_call`), one line of its result. Its help is the options model's docstring."""

    def run(options: Any, overrides: list[str]) -> None:
        from rich.console import Console

        from py4.stages import StageCall, result_summary, run_call
        from py4.overrides import overrides as parse_overrides

        call = StageCall(stage=stage.name, config=getattr(options, "config", None),
                         options=options.model_dump(exclude={"config"}), overrides=tuple(parse_overrides(overrides)))
        result = run_call(call)
        Console(stderr=True).print(f"[green]done[/green] {stage.name}: {result_summary(result, stage.name)}")

    def without_overrides(options: Any) -> None:
        run(options, [])

    command = run if stage.config_type else without_overrides
    command.__doc__ = stage.options.__doc__
    overrides = "key=value overrides of the config" if stage.config_type else None
    return cli_errors(options_command(stage.options, overrides=overrides)(command))


def add_stage_commands(root: typer.Typer) -> list[str]:
    """Give each registry stage whose ``py4`` command does not exist yet the generated one
    (:func:`stage_command`), under an existing group or at the top; returns those stages. A stage
    with a command of its own (``py4 corpus generate``, ``py4 train STAGE``) keeps it."""
    added = []
    for stage in STAGES.values():
        *groups, name = stage.command
        parent: typer.Typer | None = root
        for word in groups:
            parent = next((g.typer_instance for g in parent.registered_groups if g.name == word), None)
            if parent is None:  # not a group of py4 (``train`` is one command taking STAGE)
                break
        if parent is None or name in _names(parent):
            continue
        parent.command(name)(stage_command(stage))
        added.append(stage.name)
    return added


def _names(group: typer.Typer) -> set[str]:
    """The words a group answers to: its commands' and sub-groups' names."""
    commands = {c.name or (c.callback.__name__.replace("_", "-") if c.callback else "")
                for c in group.registered_commands}
    return commands | {g.name for g in group.registered_groups if g.name}
