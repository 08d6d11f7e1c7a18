"""One run of a campaign: a stage call with its run folder, inputs, GPUs and what it is about.

Its own module, below the DAG that builds nodes and the steps that add to them
(`py4.campaign.dataset_pins`), so those import it without importing each other.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass, field
from typing import Any

from py4.campaign.node_meta import NodeMeta
from py4.evaluate.serve import ServerPlan
from py4.overrides import Override
from py4.stages import StageCall, get_stage
from py4.stages import argv as stage_argv

# The FSDP2 config every multi-GPU training run launches with, whatever its GPU count: the file
# leaves the process count to the launch (num_processes: -1), which gives the run's own
# (``--num_processes``: its stage config's optimisation.gpus; accelerate 1.16 takes a value on the
# command line over the file's). The rehearsal swaps in a copy with use_cpu (py4.rehearsal.assets).
ACCELERATE_CONFIG = "configs/accelerate/fsdp2.yaml"


def accelerate_launch(config_file: str, processes: int, *program: str) -> list[str]:
    """``program`` (``-m module args…``) started as ``processes`` processes by accelerate with
    ``config_file``. accelerate is started by this interpreter (``python -m
    accelerate.commands.launch``), not as a bare ``accelerate`` looked up on PATH: the runner must
    work from ``.venv/bin/py4`` without an activated venv, and must never pick up another
    environment's accelerate."""
    return [sys.executable, "-m", "accelerate.commands.launch", "--config_file", config_file,
            "--num_processes", str(processes), *program]


@dataclass(kw_only=True)
class Node:
    """One run of the campaign: a stage call (stage, config file, options, typed overrides) with
    its run folder, the runs it needs, and the GPUs it asks for. Its command line is derived from
    the call by the stage registry (`py4.stages.argv`), so the local and Slurm backends, ``plan``
    and the run records all show the same command."""

    id: str
    stage: str
    run_dir: str
    config: str | None = None
    """The stage's config file (``--config``)."""
    options: dict[str, Any] = field(default_factory=dict)
    """The stage command's other flags, by field (`py4.stages.Stage.options`)."""
    overrides: list[Override] = field(default_factory=list)
    """``key=value`` overrides of the stage's config, in command-line order."""
    inputs: list[str] = field(default_factory=list)
    gpus: int = 0
    """GPUs the run asks for. A training run's: its stage config's ``optimisation.gpus`` as its call
    resolves it (`set_training_gpus`), which is also its process count (``launch_argv``)."""
    meta: NodeMeta = field(default_factory=NodeMeta)
    """What the run is about beyond its command (`py4.campaign.node_meta`: one type per kind of run)."""
    server: ServerPlan | None = None
    """An evaluation through a served endpoint: the server the runner starts around this run."""

    @property
    def call(self) -> StageCall:
        return StageCall(stage=self.stage, config=self.config, options=self.options, overrides=tuple(self.overrides))

    @property
    def argv(self) -> list[str]:
        """The ``py4`` command line (without ``py4``)."""
        return stage_argv(self.call)

    @property
    def launch_argv(self) -> list[str] | None:
        """Multi-GPU training runs start under accelerate + FSDP2 (`ACCELERATE_CONFIG`) as ``gpus``
        processes (`accelerate_launch`); None otherwise."""
        if self.gpus > 1 and get_stage(self.stage).multi_gpu:
            return accelerate_launch(ACCELERATE_CONFIG, self.gpus, "-m", "py4", *self.argv)
        return None

    @property
    def command(self) -> str:
        launch = self.launch_argv
        return shlex.join(launch) if launch else "py4 " + shlex.join(self.argv)

    def to_json(self) -> dict[str, Any]:
        out = {"id": self.id, "stage": self.stage, "command": self.command, "argv": self.argv,
               "run_dir": self.run_dir, "inputs": self.inputs, "gpus": self.gpus, "config": self.config,
               "meta": self.meta.to_json()}
        if self.server:
            out["server"] = self.server.to_json()
        return out
