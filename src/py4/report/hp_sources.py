"""What the hyperparameter table reads: the campaign spec and the stage config files it names.

Every stage config is loaded as the campaign loads it, through the stage registry
(``py4.stages.load``: midtrain, sft, eft, grpo, data mix and pack, graft), and a data.schedule
file through ``ScheduleConfig``. The table reads typed attributes, so a field a file leaves
unset reads as the type's default, the value the run uses; the files need not repeat defaults.
Step schedules are computed with `py4.data.schedule.compute_schedule` from the data.schedule
configs, so step counts, tokens per step and totals are derived, never copied.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from py4.campaign.node import ACCELERATE_CONFIG
from py4.campaign.spec import CampaignSpec, ModelSpec
from py4.config import ConfigError, load_config, read_yaml
from py4.data.schedule import StepSchedule, compute_schedule
from py4.errors import Py4Error

if TYPE_CHECKING:
    from py4.data.configs import MixConfig, PackConfig
    from py4.graft.config import GraftConfig
    from py4.train.eft import EFTConfig
    from py4.train.grpo import GRPOStageConfig
    from py4.train.midtrain import MidtrainConfig
    from py4.train.sft import SFTStageConfig


# A value the campaign spec does not record (the smoke campaign computes it at run time or has no
# as-run measurement): the table says so instead of failing.
NOT_RECORDED = "n/a (computed at run time)"


@dataclass(frozen=True)
class NotRecorded:
    """Stands in for an as-run fact (``recorded.*``) a campaign spec does not have."""

    value: str = "n/a (not recorded)"
    provenance: str = "not recorded in the campaign spec"


def recorded(facts: dict[str, Any], key: str) -> Any:
    """``facts[key]`` (a recorded value with its provenance), or :class:`NotRecorded`."""
    return facts.get(key) or NotRecorded()


class TableError(Py4Error):
    """A config the table needs is missing or inconsistent (names the file and field).

    A user error: ``py4 report hyperparameters`` (under ``cli_errors``) shows it as one line, exit 2.
    """


@dataclass(frozen=True)
class Launch:
    """What the table reads of the accelerate launch config (configs/accelerate/fsdp2.yaml)."""

    mixed_precision: str
    fsdp_version: int | None
    activation_checkpointing: bool


@dataclass
class Sources:
    """The campaign spec and its stage configs, each loaded once through its config type."""

    spec: CampaignSpec
    spec_path: str
    root: Path = Path(".")
    _loaded: dict[tuple[Any, ...], Any] = field(default_factory=dict)

    def _file(self, what: str, path: str | None) -> Path:
        """The file at ``path`` (relative to the repo root); TableError when unnamed or absent."""
        if path is None:
            raise TableError(f"{self.spec_path}: no {what} config file named")
        full = self.root / path
        if not full.is_file():
            raise TableError(f"{self.spec_path}: {what} config file {path} does not exist")
        return full

    def _stage(self, stage: str, path: str | None, optional: bool = False, **options: Any) -> Any:
        """A stage's config file loaded as the campaign loads it: through the stage registry
        (``py4.stages.load``: the stage's config type, and its flags for the graft). ``optional``:
        no file named means the type's defaults."""
        from py4.stages import StageCall, load

        key = (stage, path or "", *sorted(options.items()))
        if key not in self._loaded:
            config = None if path is None and optional else str(self._file(stage, path))
            self._loaded[key] = load(StageCall(stage=stage, config=config, options=options))
        return self._loaded[key]

    def midtrain(self, path: str) -> MidtrainConfig:
        return self._stage("midtrain", path)

    def sft(self, path: str) -> SFTStageConfig:
        return self._stage("sft", path)

    def eft(self, path: str | None) -> EFTConfig:
        return self._stage("eft", path)

    def grpo(self, path: str | None) -> GRPOStageConfig:
        return self._stage("grpo", path)

    def mix(self, path: str | None) -> MixConfig:
        return self._stage("mix", path)

    def pack(self, path: str | None) -> PackConfig:
        return self._stage("pack", path)

    def graft(self, model: ModelSpec) -> GraftConfig:
        """The model's graft policies: its ``files.graft`` (none named: GraftConfig's defaults). The
        checkpoints are the campaign DAG's flags per run; the table reads only the policies, so the
        folders are described rather than named (the -it pins are the spec's)."""
        return self._stage("graft", model.files.get("graft"), optional=True, mid="<each arm's midtraining endpoint>",
                           out="<each arm's graft folder>", it=model.it.hub_id, it_revision=model.it.revision,
                           base=model.it_base.hub_id, base_revision=model.it_base.revision)

    def schedule(self, path: str) -> StepSchedule:
        """The step schedule a data.schedule config describes (not a campaign stage: ``py4 data
        schedule``); checks its expected_max_steps."""
        from py4.data.configs import ScheduleConfig

        key = ("data.schedule", path)
        if key not in self._loaded:
            self._loaded[key] = load_config(ScheduleConfig, self._file("data.schedule", path))
        config = self._loaded[key]
        if config.total_tokens_from is not None:
            raise TableError(f"{path}: total_tokens_from needs a run's output; the table's schedules give "
                             "total_tokens or rows")
        schedule = compute_schedule(
            seq_len=config.seq_len, micro_batch=config.micro_batch, grad_accum=config.grad_accum, gpus=config.gpus,
            rounding=config.rounding, total_tokens=config.total_tokens, rows=config.rows, epochs=config.epochs,
            warmup=config.warmup, max_steps_cap=config.max_steps_cap)
        if config.expected_max_steps is not None and config.expected_max_steps != schedule.max_steps:
            raise TableError(f"{path}: expected_max_steps {config.expected_max_steps} but the schedule computes "
                             f"{schedule.max_steps}")
        return schedule

    @property
    def models(self) -> list[ModelSpec]:
        return list(self.spec.models.values())

    @staticmethod
    def launch_file(gpus: int) -> str | None:
        """The accelerate config a run on `gpus` GPUs launches with: the campaign DAG's one FSDP2
        file for every count (`py4.campaign.node.ACCELERATE_CONFIG`, ``--num_processes`` = gpus);
        None on one GPU (no launch)."""
        return ACCELERATE_CONFIG if gpus > 1 else None

    def launch(self, gpus: int) -> Launch | None:
        """What the FSDP2 accelerate config of a run on `gpus` GPUs sets (None: one GPU).

        Accelerate's own YAML (no py4 type); read for the three settings the table prints."""
        path = self.launch_file(gpus)
        if path is None:
            return None
        if not (self.root / path).is_file():
            raise TableError(f"{self.spec_path}: accelerate config file {path} does not exist")
        data = read_yaml(self.root / path)
        if not isinstance(data, dict):
            raise ConfigError(path, ["<root>: expected a mapping"])
        fsdp = data.get("fsdp_config") or {}
        return Launch(mixed_precision=data.get("mixed_precision", "bf16"), fsdp_version=fsdp.get("fsdp_version"),
                      activation_checkpointing=bool(fsdp.get("fsdp_activation_checkpointing")))


def files_of(paths: Sequence[str | None]) -> str:
    """Distinct paths in order, ';'-joined (a row's source)."""
    seen: list[str] = []
    for path in paths:
        if path and path not in seen:
            seen.append(path)
    return "; ".join(seen)
