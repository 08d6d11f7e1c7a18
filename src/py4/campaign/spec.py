"""The campaign spec: models (scales), arms, stage config files, EFT doses, GRPO, evaluation.

A campaign YAML (configs/campaign/*.yaml) is loaded strictly into `CampaignSpec`; the DAG
(`py4.campaign.dag`) expands it into runs and the hyperparameter table
(`py4.report.hyperparameters`) reads it together with the stage config files it names.

As-run measurements that only a campaign-scale run can produce (corpus token counts,
adapted-module counts, filtered row counts, ...) are `Recorded` values: a value plus its
provenance. Everything derivable (step counts, tokens per step, dose splits) is derived
by code, never recorded.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import pydantic

from py4.config import StrictModel, load_config
from py4.evaluate.serve import ServeConfig
from py4.stages import STAGES
from py4.stages import config_type as stage_config_type

ARMS = ("control", "iso", "prop")


class Recorded(StrictModel):
    """An as-run measurement: the value and where it was measured."""

    value: Any
    provenance: str


class HubPin(StrictModel):
    """A checkpoint: a Hub id (or a local folder at smoke scale) and its revision."""

    hub_id: str
    revision: str | None = None

    @property
    def name(self) -> str:
        """The repository name without its owner: google/gemma-4-12b -> gemma-4-12b."""
        return self.hub_id.rstrip("/").split("/")[-1]


class DatasetPins(StrictModel):
    """Datasets the campaign reads from the Hub by id and pinned revision (exported by ``py4
    problems export``, ``py4 probes export``, ``py4 corpus export``), each read from the local
    Hugging Face cache (`py4.campaign.dataset_pins`). None: this checkout's shipped bank and
    probe set, and the corpus the campaign generates."""

    bank: HubPin | None = None
    probes: HubPin | None = None
    corpus: HubPin | None = None

    @pydantic.model_validator(mode="after")
    def _pinned(self) -> "DatasetPins":
        unpinned = [k for k in ("bank", "probes", "corpus") if getattr(self, k) and not getattr(self, k).revision]
        if unpinned:
            raise ValueError("; ".join(f"datasets.{k}: {getattr(self, k).hub_id!r} has no revision: set "
                                       f"datasets.{k}.revision to the dataset commit the campaign reads"
                                       for k in unpinned))
        return self


# Entries of a model's ``files`` that are not named after a stage: a stage's config in a second
# role, and the step schedules the EFT runs and the hyperparameter table read.
OTHER_FILES = {
    "sft_data": "the pack config of the SFT data (stage pack)",
    "eft512_warmstart": "the EFT config of the GRPO warm start (stage eft)",
    "schedules": "per arm: data.schedule YAMLs (campaign scale: the schedules the as-run mixes produced)",
    "eft_schedules": "per dose (rows, as a string): data.schedule YAMLs of the EFT runs",
}

# The stages every model runs (the campaign's chain), so their files must be given.
REQUIRED_FILES = ("midtrain", "sft", "eft")


class StageFiles(pydantic.RootModel[dict[str, str | dict[str, str]]]):
    """A model's stage config files: stage name -> its config file, or a mapping from variant (an
    arm, a dose) to file (``midtrain``, ``mix``: per arm). The keys are the stage registry's names
    (`py4.stages.STAGES`) or one of `OTHER_FILES`; a stage without an entry runs on its config
    type's defaults (``graft``: GraftConfig's; ``eft_dose``: built from the campaign)."""

    @pydantic.field_validator("root")
    @classmethod
    def _known(cls, files: dict[str, str | dict[str, str]]) -> dict[str, str | dict[str, str]]:
        unknown = [k for k in files if k not in STAGES and k not in OTHER_FILES]
        if unknown:
            raise ValueError("; ".join(f"{k}: unknown stage {k!r}; known stages: {', '.join(STAGES)} "
                                       f"(or {', '.join(OTHER_FILES)})" for k in unknown))
        return files

    def __contains__(self, key: str) -> bool:
        return key in self.root

    def get(self, key: str) -> str | None:
        """The one config file of ``key`` (None: none given). ValueError when it is given per variant."""
        value = self.root.get(key)
        if isinstance(value, dict):
            raise ValueError(f"files.{key}: one config file expected, got a mapping ({', '.join(value)})")
        return value

    def per(self, key: str) -> dict[str, str]:
        """``key``'s files by variant (an arm, a dose); one file given serves every variant: {}."""
        value = self.root.get(key)
        return dict(value) if isinstance(value, dict) else {}

    def of(self, key: str, variant: str) -> str:
        """``key``'s file for ``variant``: its own, or the one file given for every variant.
        KeyError when there is none."""
        value = self.root.get(key)
        if isinstance(value, str):
            return value
        if value is None or variant not in value:
            raise KeyError(f"files.{key}: no config for {variant!r}")
        return value[variant]

    def paths(self) -> list[str]:
        """Every file named, in the order given."""
        return [p for v in self.root.values() for p in (v.values() if isinstance(v, dict) else [v])]


class ModelSpec(StrictModel):
    label: str
    params_b: float
    gpus: int = pydantic.Field(1, ge=1)
    gpu_type: str = "H200"
    base: HubPin
    """The pretrained checkpoint that is midtrained."""
    it: HubPin
    """The instruction-tuned model: the chat vector's W_it, the graft's tokenizer/config."""
    it_base: HubPin
    """W_base of the chat vector, spelled as the -it model names it."""
    files: StageFiles
    prop_corpus: Recorded | None = None
    """The prop-token arm's Python-4 tokens per copy (count basis: the campaign's tokenizer)."""
    recorded: dict[str, Recorded] = {}


class CorpusSpec(StrictModel):
    config: str | None = None
    """py4 corpus generate config (smoke: generated; campaign: recorded below)."""
    iso: Recorded
    """The iso-token arm's Python-4 tokens per copy."""
    full: Recorded | None = None
    copies: int = 4
    replay_ratio: float = 1.0
    """Replay tokens per Python-4 token in a mix (1:1)."""
    overrides: list[str] = []
    """key=value overrides of the corpus config (smoke: fewer documents)."""


class EFTSpec(StrictModel):
    doses: list[int] = [0, 256, 1024]
    """Rows; 0 = the parent itself (no EFT run). Smaller doses are drawn from the largest."""
    matrix_dose: int | None = 2048
    """The +EFT matrix cells' dose (None: not run)."""
    matrix_allow_held_out_rules: bool = True
    replay_fraction: float = 0.1
    replay_temperature: float = 0.7
    eft_split: str = "eft_pool"
    matrix_split: str = "eft_large"
    overrides: list[str] = []
    """key=value overrides of every EFT dose run (smoke: settings that memorise the dose, the train_sanity check)."""
    warmstart_overrides: list[str] | None = None
    """key=value overrides of the GRPO warm-start EFT run (None: the same as ``overrides``)."""


class GRPOSpec(StrictModel):
    model: str
    arm: str = "prop"
    warmstart_dose: int = 512
    segments: list[int] = [32, 64]
    """Stop points: each segment after the first resumes from the previous checkpoint."""


class EvalSpec(StrictModel):
    splits: list[str] = ["test_heldin", "test_heldout"]
    sanity_split: str | None = None
    """Smoke scale: a split of EFT-trained problems whose rate must rise after EFT (its own
    evaluation run per model, ``eval:<model>:<split>``)."""
    sanity_overrides: list[str] = []
    """key=value overrides of the sanity split's evaluations, after ``overrides`` (smoke: greedy
    decoding, one sample — it is a memorisation check)."""
    config: str | None = None
    overrides: list[str] = []
    grpo_steps: list[int] = []
    """GRPO checkpoints evaluated for the ladder figure (besides the final model)."""
    serve: ServeConfig | None = None
    """Evaluate through a server the runner starts per evaluated model (``py4.evaluate.serve``:
    vLLM on GPU nodes, ``transformers serve`` on CPU); None: the local policy in-process (smoke)."""


class ProbesSpec(StrictModel):
    """Rule probes (`py4 eval probes`, docs/probes.md) of every model the campaign makes.

    One run per model: the base, each arm's midtrained model, SFT parent, graft, EFT doses,
    GRPO warm start and evaluated GRPO steps. A Python-4 arm's model is compared (paired
    difference, ``minus_compare``) with the control arm's model of the same kind.
    """

    limit: int | None = None
    """About N pairs per model (every k-th pair, ``py4 eval probes --limit``); None: all pairs."""
    full_kinds: list[Literal["base", "midtrain", "sft", "graft", "eft", "grpo"]] = ["base", "midtrain"]
    """Model kinds always scored on every pair, whatever ``limit`` (the arm comparison's models)."""
    compare_control: bool = True
    """Each non-control arm's model also gets ``--compare`` the control arm's model of the same kind."""


class HeldoutLossSpec(StrictModel):
    """Loss of each arm's midtrained model (and the base) on held-out Python-4 documents.

    The documents are a second corpus generated with another seed (``overrides``); documents
    whose text also occurs in the training corpus are dropped, so none of them was trained on.
    """

    overrides: list[str] = ["seed=1", "max_docs=40"]
    """key=value overrides of the campaign's corpus config for the held-out corpus."""
    max_tokens: int = 40000
    """Tokens scored per model (documents in order, the last one cut)."""


class ReportSpec(StrictModel):
    what: str = ""
    source: str = ""
    notes: list[dict[str, str]] = []
    boa_pin: str = ""


# The options the Slurm backend sets itself (py4.campaign.slurm.sbatch_argv): `cluster.sbatch_args`
# may not repeat them, or a job would silently lose its dependencies, log or GPUs.
SBATCH_OWNED = ("--job-name", "-J", "--dependency", "-d", "--kill-on-invalid-dep", "--output", "-o", "--error", "-e",
                "--chdir", "-D", "--parsable", "--partition", "-p", "--account", "-A", "--time", "-t", "--gres",
                "--gpus", "-G", "--gpus-per-node", "--nodes", "-N", "--ntasks", "-n", "--cpus-per-task", "-c",
                "--mem", "--wrap", "--requeue", "--no-requeue", "--signal", "--open-mode", "--ntasks-per-node")
_SLURM_TIME = re.compile(r"^(\d+|\d+:\d{2}|\d+:\d{2}:\d{2}|\d+-\d+|\d+-\d+:\d{2}|\d+-\d+:\d{2}:\d{2})$")
_SLURM_NAME = re.compile(r"^[A-Za-z0-9_.,:+-]+$")


class ClusterSpec(StrictModel):
    """How the Slurm backend (`py4 campaign run --backend slurm`) asks for resources.

    Every field may also be set on the command line (``cluster.partition=gpu``). The GPUs of a
    job come from the campaign itself: the node's GPU count and its model's ``gpu_type``.
    """

    partition: str | None = None
    account: str | None = None
    time: str | None = None
    """Default time limit of every job (Slurm syntax: ``MM``, ``HH:MM:SS``, ``D-HH:MM:SS``, ...)."""
    time_per_stage: dict[str, str] = {}
    """stage -> time limit, over ``time`` (e.g. ``midtrain: 3-00:00:00``, ``eval: "04:00:00"``)."""
    gpu_option: Literal["gres", "gpus-per-node"] = "gres"
    """How GPUs are requested: ``--gres=gpu:<type>:<n>`` or ``--gpus-per-node=<type>:<n>``."""
    gpu_types: dict[str, str | None] = {}
    """A model's ``gpu_type`` -> the cluster's name of that GPU (None: any GPU). Default: the
    ``gpu_type`` lower-cased (H200 -> h200)."""
    cpus_per_task: int | None = pydantic.Field(None, ge=1)
    mem: str | None = None
    """Memory per job (Slurm syntax: ``256G``; ``0`` = the whole node)."""
    sbatch_args: list[str] = []
    """Further sbatch options, e.g. ``["--qos=high", "--exclusive"]`` (not the ones the backend sets)."""
    setup: list[str] = []
    """Shell lines each job runs before its command (``module load cuda/12.4``, ``source env.sh``)."""
    requeue: bool = True
    """Jobs are requeued when preempted or about to reach their time limit (``--requeue``; the job
    stops its run ``stop_before_end_s`` before the limit and requeues itself, and the run resumes
    from its last checkpoint). False: ``--no-requeue``, a stopped job stays stopped."""
    stop_before_end_s: int = pydantic.Field(300, ge=1)
    """Seconds before the time limit at which Slurm signals the job (``--signal=B:USR1@<s>``) to
    stop its run and requeue itself."""
    gpus_per_node: int | None = pydantic.Field(None, ge=1)
    """GPUs of one machine. A training run asking for more spans ``gpus / gpus_per_node``
    machines (``srun`` + accelerate's multi-node launch); None: every job on one machine."""
    main_process_port: int = pydantic.Field(29500, ge=1, le=65535)
    """The port of a multi-node run's main process (accelerate's ``--main_process_port``)."""

    @pydantic.field_validator("time", "time_per_stage", mode="before")
    @classmethod
    def _quoted_times(cls, value: Any) -> Any:
        # YAML reads an unquoted 4:00:00 as the number 14400 (base 60) and 90 as 90: neither is
        # what the user wrote, so a time limit must be a string.
        for v in (value.values() if isinstance(value, dict) else [value]):
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                raise ValueError(f"{v!r} is a number: write the time limit as a quoted string, e.g. '04:00:00' "
                                 "(YAML reads an unquoted 4:00:00 as 14400)")
        return value

    @pydantic.model_validator(mode="after")
    def _check(self) -> "ClusterSpec":
        problems = []
        for field in ("partition", "account"):
            value = getattr(self, field)
            if value is not None and not _SLURM_NAME.match(value):
                problems.append(f"cluster.{field}: {value!r} is not a Slurm name (letters, digits, _.,:+-)")
        for where, value in [("cluster.time", self.time)] + [(f"cluster.time_per_stage.{k}", v)
                                                             for k, v in self.time_per_stage.items()]:
            if value is not None and not _SLURM_TIME.match(str(value)):
                problems.append(f"{where}: {value!r} is not a Slurm time limit (MM, HH:MM:SS, D-HH, D-HH:MM:SS, ...)")
        problems += [f"cluster.time_per_stage: unknown stage {k!r}; expected one of {', '.join(STAGES)}"
                     for k in self.time_per_stage if k not in STAGES]
        for gpu_type, name in self.gpu_types.items():
            if name is not None and not _SLURM_NAME.match(name):
                problems.append(f"cluster.gpu_types.{gpu_type}: {name!r} is not a Slurm GPU type name")
        if self.mem is not None and not re.match(r"^\d+[KMGT]?$", self.mem):
            problems.append(f"cluster.mem: {self.mem!r} is not a Slurm memory size (e.g. 256G, 0)")
        for arg in self.sbatch_args:
            option = arg.split("=", 1)[0]
            if not arg.startswith("-"):
                problems.append(f"cluster.sbatch_args: {arg!r} is not an option (write --name=value)")
            elif option in SBATCH_OWNED:
                problems.append(f"cluster.sbatch_args: {option} is set by the Slurm backend itself"
                                " (use the cluster fields or the campaign spec)")
        if problems:
            raise ValueError("; ".join(problems))
        return self


class CampaignSpec(StrictModel):
    name: str
    scale: Literal["campaign", "smoke"]
    out_dir: str
    smoke_assets: str | None = None
    """py4 smoke assets config (smoke scale only)."""
    models: dict[str, ModelSpec]
    arms: dict[str, str] = {"control": "control", "iso": "iso-token", "prop": "prop-token"}
    """Arm key -> label."""
    corpus: CorpusSpec
    replay: HubPin | None = None
    """The midtraining replay corpus (campaign: Dolmino)."""
    sft_data: HubPin | None = None
    sft_rows: Recorded | None = None
    eft: EFTSpec = EFTSpec()
    grpo: GRPOSpec | None = None
    evaluation: EvalSpec = EvalSpec()
    probes: ProbesSpec | None = ProbesSpec()
    """Rule probes of every model made (None: none)."""
    heldout_loss: HeldoutLossSpec | None = None
    """Held-out Python-4 loss per arm (smoke scale: the midtraining must measurably learn)."""
    report: ReportSpec = ReportSpec()
    recorded: dict[str, Recorded] = {}
    stage_overrides: dict[str, list[str]] = {}
    """stage (pack, mix, midtrain, sft, eft, grpo, eval, ...) -> key=value overrides added to every
    run of that stage (smoke: short schedules); checked against the stage's config type by
    ``py4 campaign plan`` (`py4.campaign.dag.check_dag`)."""
    datasets: DatasetPins = DatasetPins()
    """The bank, probe set or corpus taken from the Hub, pinned (docs/campaign.md)."""
    cluster: ClusterSpec = ClusterSpec()
    """Slurm resources of `py4 campaign run --backend slurm` (docs/campaign.md)."""

    @pydantic.model_validator(mode="after")
    def _check(self) -> "CampaignSpec":
        problems = [f"arms: unknown arm {a!r}; expected {', '.join(ARMS)}" for a in self.arms if a not in ARMS]
        problems += [f"stage_overrides.{k}: unknown stage {k!r}; expected one of {', '.join(STAGES)}"
                     for k in self.stage_overrides if k not in STAGES]
        for key, model in self.models.items():
            problems += [f"models.{key}.files.{stage}: required (the config of every model's {stage} runs)"
                         for stage in REQUIRED_FILES if stage not in model.files]
            for stage in ("midtrain", "mix"):
                missing = [a for a in self.arms if model.files.per(stage) and a not in model.files.per(stage)]
                if missing:
                    problems.append(f"models.{key}.files.{stage}: no config for arm(s) {', '.join(missing)}")
        gpu_types = {m.gpu_type for m in self.models.values()}
        problems += [f"cluster.gpu_types.{t}: no model has gpu_type {t!r} (models: {', '.join(sorted(gpu_types))})"
                     for t in self.cluster.gpu_types if t not in gpu_types]
        if self.grpo and self.grpo.model not in self.models:
            problems.append(f"grpo.model: {self.grpo.model!r} is not one of the models ({', '.join(self.models)})")
        serve = self.evaluation.serve
        if serve is not None:
            problems += [f"evaluation.serve.{field}.{k}: {k!r} is not one of the models ({', '.join(self.models)})"
                         for field in ("family", "tensor_parallel", "language_model_only", "merge_adapter")
                         for k in getattr(serve, field) if k not in self.models]
            if serve.engine == "vllm":
                problems += [f"evaluation.serve.family: no family for model {k!r} (vLLM needs its tool-call parser)"
                             for k in self.models if k not in serve.family]
        if problems:
            raise ValueError("; ".join(problems))
        return self


def load_campaign(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> CampaignSpec:
    """Load a campaign YAML strictly; raises py4.config.ConfigError naming file and fields."""
    return load_config(CampaignSpec, path, list(overrides))


def config_type_for_file(path: str | Path) -> type:
    """The config type of a YAML under configs/campaign/ (for the config-validation test)."""
    if Path(path).stem == "eft_dose":
        return stage_config_type("eft_dose")
    return CampaignSpec
