"""The stage registry: every stage a campaign runs, by name (docs/dev/stages.md).

A stage is one kind of run: its ``py4`` command, that command's options (``options``: a model whose
fields are declared once and from which the command itself is built, `py4.cli_options`), the type
its config file and ``key=value`` overrides validate against (``config_type``), the function that
runs it (``run(config, call) -> result``) and what that returns (``result_type``).
A run of a stage is a :class:`StageCall` — stage, config file, options, typed overrides — which is
what a campaign's DAG nodes carry. From a call the registry gives:

- :func:`argv`: the ``py4`` command line (what ``py4 campaign plan`` prints, a Slurm job runs);
- :func:`check`: every problem of the call, without running anything (``py4 campaign plan``);
- :func:`run_call`: the stage run in this process (the campaign runner, the report's calibration).

The stages' own commands (``py4 train``, ``py4 corpus generate``, ...) are built from the same
options models, so a call's command line is one the command parses back to the same options.
Stage modules are imported when a stage is used, so reading the registry loads no torch.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import pydantic

from py4.cli_options import Cli, command_words
from py4.config import ConfigError, StrictModel, load_config, resolve_reference, validate_config
from py4.corpus.cli import CorpusOptions, SubsetOptions
from py4.data.cli import MixOptions, PackOptions
from py4.evaluate.cli import EvalOptions
from py4.graft.cli import GraftOptions
from py4.overrides import Override
from py4.probes.cli import ProbesOptions
from py4.train.smoke_cli import AssetsOptions, HeldoutLossOptions


@dataclass(frozen=True, kw_only=True)
class Stage:
    """One stage: how it is written on the command line, configured, run and what it returns."""

    name: str
    command: tuple[str, ...]
    """The ``py4`` words before the flags: ``("train", "eft")``, ``("corpus", "generate")``."""
    options: type[StrictModel]
    """The command's options, declared once (`py4.cli_options`: flags, types, defaults, help, and the
    order a command line writes them); a field ``config`` is the call's config file. A stage without
    a config file: its whole config."""
    config_type: str | None
    """``module:Type`` of the config file + overrides; None: ``options`` is the config."""
    run: Callable[[Any, StageCall], Any]
    """``run(config, call) -> result``: the stage itself (the call gives its options)."""
    result_type: str
    load: Callable[[Stage, StageCall], Any] | None = None
    """The typed config of a call, when it is more than the file and the overrides (flags that
    set config fields: eval, graft). Never touches the run's inputs: it is what plan checks."""
    summary: Callable[[Any], str] | None = None
    """One line of a result for a person (`result_summary`); None: a training run's or the repr."""
    multi_gpu: bool = False
    """On several GPUs the stage starts as that many processes under accelerate, each running the
    stage's ``py4`` command: ``python -m accelerate.commands.launch … -m py4 <command>``."""

    def module(self) -> Any:
        """The module holding the stage's config type (a training stage's ``run(config, callbacks)``)."""
        return importlib.import_module(self.config_class().__module__ if self.config_type else __name__)

    def config_class(self) -> type:
        if self.config_type is None:
            return self.options
        return resolve_reference(self.config_type, "config_type", f"stage {self.name}", kind="type")


@dataclass(frozen=True, kw_only=True)
class StageCall:
    """One run of a stage: what a DAG node carries and what its command line is made of."""

    stage: str
    config: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    overrides: tuple[Override, ...] = ()
    """Typed: `load` gives the stage these values as they are; only `argv` writes them as text."""

    def override_texts(self) -> list[str]:
        """``key=value`` as a command line carries them (`py4.overrides.value_text`)."""
        return [str(o) for o in self.overrides]


# ---- the options of the commands that live here (the others: beside their commands) ----------

class TrainOptions(StrictModel):
    """``py4 train STAGE``: the stage's config file (then ``key=value`` overrides)."""

    config: Annotated[str, Cli(short=("-c",))] = pydantic.Field(description="stage YAML (configs/train/...)")


class SanityBankOptions(StrictModel):
    """``py4 campaign sanity-bank``: a bank whose train_sanity split is a dose's gold problems."""

    dose: Path = pydantic.Field(description="an EFT dose folder (rows.jsonl with problem ids)")
    out: Path = pydantic.Field(description="bank folder to write")
    bank_dir: Path | None = pydantic.Field(None, description="the bank to copy (a folder in the shipped layout, "
                                           "e.g. a pinned bank); default: shipped")
    version: str = pydantic.Field("v1", description="the shipped bank's version (without --bank-dir)")


class DatasetOptions(StrictModel):
    """``py4 campaign dataset``: a dataset pinned on the Hub, read from the local Hugging Face
    cache and written in the form its stages take (`py4.pinned_datasets`)."""

    kind: Literal["bank", "probes", "corpus"] = pydantic.Field(description="bank, probes or corpus")
    hub_id: str = pydantic.Field(description="the dataset's Hub id (ORG/NAME)")
    revision: str = pydantic.Field(min_length=1, description="the dataset commit it is pinned at (a short pin "
                                   "resolves through the cache's refs/); never unpinned")
    out: Path = pydantic.Field(description="folder to write it into, as its stages take it")
    probes: Path | None = pydantic.Field(None, description="a corpus or bank: the probe set folder whose text it "
                                         "may not hold (a campaign's pinned set; default: the shipped one)")


# ---- how each stage runs ------------------------------------------------------------------

def _run_train(config: Any, call: StageCall) -> Any:
    """A training stage: its optimizer's package and its data folder checked before any weights load."""
    import os

    from py4.threads import use_cpu_threads
    from py4.train.common import check_optimizer

    use_cpu_threads(processes=int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
    if getattr(config, "optimisation", None) is not None:
        check_optimizer(config.optimisation, str(call.config))
    _check_data_path(config, call)
    _check_fit(config, call)
    return get_stage(call.stage).module().run(config)


def _check_fit(config: Any, call: StageCall) -> None:
    """On a CUDA machine, a run whose planned per-GPU bytes exceed the GPU's memory is refused before
    any weights load (py4.train.fit: the run, the figure and the knob). A model whose configuration
    is not known here is not planned: its loading says what is missing."""
    import torch

    from py4.train.fit import FitError, FsdpSettings, check_fit, run_memory

    if getattr(config, "optimisation", None) is None or not torch.cuda.is_available():
        return
    try:
        plan = run_memory(config, fsdp=FsdpSettings.from_launch())
    except FitError:
        return
    check_fit(plan, torch.cuda.get_device_properties(0).total_memory, f"{call.stage} ({call.config})")


def _check_data_path(config: Any, call: StageCall) -> None:
    """A ``data.path`` that does not exist, named as given (file or override), before anything
    reads a schedule or a manifest beside where the config's default data would be."""
    path = getattr(getattr(config, "data", None), "path", None)
    if isinstance(path, str) and not Path(path).exists():
        given = "the command line" if any(o.key == "data.path" for o in call.overrides) else call.config
        raise ConfigError(str(call.config), [f"data.path {path!r} (from {given}) does not exist"])


def _run_assets(config: Any, call: StageCall) -> Path:
    from py4.train.assets import build_smoke_assets

    options = options_of(call)
    return build_smoke_assets(options.out, config, force=options.force)


def _run_corpus(config: Any, call: StageCall) -> dict:
    from py4.corpus.generate import run

    options = options_of(call)
    return run(config, options.out, progress=options.progress, probes_dir=options.probes)


def _run_subset(config: SubsetOptions, call: StageCall) -> dict:
    from py4.corpus.subset import subset

    return subset(config.corpus, config.target_tokens, config.seed, config.out)


def _run_pack(config: Any, call: StageCall) -> dict:
    from py4.data.pack import run_pack

    return run_pack(config)


def _run_mix(config: Any, call: StageCall) -> dict:
    from py4.data.mix import run_mix

    return run_mix(config)


def _load_graft(stage: Stage, call: StageCall) -> Any:
    from py4.graft.config import resolve_graft_config

    return resolve_graft_config(call.config, options_of(call).config_fields(), call.overrides)


def _run_graft(config: Any, call: StageCall) -> Any:
    from py4.graft.engine import run

    return run(config, show_progress=options_of(call).progress)


def _eval_overrides(call: StageCall) -> list[Override]:
    """The eval flags as config overrides (flags win over the file, overrides over flags)."""
    from py4.evaluate.config import flag_overrides

    o = options_of(call)
    return [*flag_overrides(o.split, o.policy, o.model, o.endpoint, o.samples, o.temperature, o.limit),
            *call.overrides]


def _load_eval(stage: Stage, call: StageCall) -> Any:
    return load_config(stage.config_class(), call.config, _eval_overrides(call))


def _run_eval(config: Any, call: StageCall) -> dict:
    from py4.evaluate.config import load_eval_config
    from py4.evaluate.harness import run

    # the command's checks: a policy named, local folders exist
    config = load_eval_config(call.config, _eval_overrides(call))
    options = options_of(call)
    inspect_log = options.inspect_log or _inspect_log(options.out)
    return run(config, options.out, progress=options.progress, inspect_log=inspect_log)


def _inspect_log(out: str) -> Path | None:
    """Where an eval stage without ``inspect_log`` writes its episodes as an Inspect log, as ``py4 eval
    --inspect-log`` does (``<out>/inspect``: the report links it, ``inspect view`` browses it), where
    inspect-ai is installed (the default install has it; a campaign environment without it writes none).
    The command writes none unless asked: a person's run, not a campaign's."""
    import importlib.util

    from py4.evaluate.harness import INSPECT_LOG

    return Path(out) / INSPECT_LOG if importlib.util.find_spec("inspect_ai") is not None else None


def _run_probes(config: ProbesOptions, call: StageCall) -> dict:
    from py4.probes.evaluate import evaluate_probes

    return evaluate_probes(config.model, config.out, adapter=config.adapter, base=config.base,
                           endpoint=config.endpoint, tokenizer=config.tokenizer, compare=config.compare,
                           limit=config.limit, batch_size=config.batch_size, progress=config.progress,
                           probes_dir=config.probes)


def _run_sanity_bank(config: SanityBankOptions, call: StageCall) -> int:
    from py4.evaluate.sanity_bank import write_sanity_bank

    return write_sanity_bank(config.dose, config.out, config.version, bank_dir=config.bank_dir)


def _run_dataset(config: DatasetOptions, call: StageCall) -> dict:
    from py4.pinned_datasets import install_pinned

    return install_pinned(config.kind, config.hub_id, config.revision, config.out, probes_dir=config.probes)


def _run_heldout_loss(config: HeldoutLossOptions, call: StageCall) -> dict:
    from py4.train.heldout_loss import heldout_loss

    return heldout_loss(config.model, config.docs, list(config.exclude), config.max_tokens, config.out)


def options_of(call: StageCall) -> Any:
    """The call's options, validated (its config file as ``config`` where the command takes one)."""
    return validate_config(get_stage(call.stage).options, _option_values(call), f"options of {call.stage}")


def _option_values(call: StageCall) -> dict[str, Any]:
    """The call's options as given, with its config file where the command takes ``--config``."""
    values = dict(call.options)
    if "config" in get_stage(call.stage).options.model_fields:
        values["config"] = call.config
    return values


# ---- one line of each stage's result (result_summary) --------------------------------------

def _training_summary(result: Any) -> str:
    """A training run's steps, loss, resumption and weights."""
    loss = "" if getattr(result, "train_loss", None) is None else f", train loss {result.train_loss:.4f}"
    resumed = f", resumed from {result.resumed_from}" if getattr(result, "resumed_from", None) else ""
    return f"{result.global_step} steps{loss}{resumed} -> {result.model_dir}"


def _path_summary(result: Any) -> str:
    return f"-> {result}"


def _corpus_summary(manifest: dict) -> str:
    return f"{manifest['docs']} docs, {manifest['tokens']} tokens"


def _packed_summary(manifest: dict) -> str:
    """A packed dataset (pack, mix): what it holds and the steps it schedules."""
    size = (f"{manifest['total_mix_tokens']} tokens" if "total_mix_tokens" in manifest
            else f"{manifest['rows']} rows, {manifest['total_tokens']} tokens")
    arm = f" ({manifest['arm']})" if manifest.get("arm") else ""
    sequences = manifest.get("counts", {}).get("sequences")
    packed = f", {sequences} sequences" if sequences is not None else ""
    schedule = manifest.get("step_schedule")
    steps = f", max_steps {schedule['max_steps']}" if schedule else ""
    return f"{manifest['kind']}{arm}: {size}{packed}{steps}"


def _graft_summary(result: Any) -> str:
    return result.summary()


def _eval_summary(results: dict) -> str:
    from py4.evaluate.metrics import split_summaries

    return "; ".join(split_summaries(results))


def _probes_summary(results: dict) -> str:
    """The model's probe accuracy (and the base's, when scored beside it)."""
    from py4.probes.stats import accuracy_text

    parts = [f"{label} {accuracy_text(summary)}"
             for label, summary in (("model", results["summary"]), ("base", (results.get("base") or {}).get("summary")))
             if summary]
    return "; ".join(parts) + f" on {results['pairs']} pairs"


def _sanity_bank_summary(count: int) -> str:
    return f"train_sanity: {count} problems"


def _dataset_summary(result: dict) -> str:
    return f"{result['kind']} {result['hub_id']}@{result['commit'][:12]} -> {result['path']}"


def _heldout_loss_summary(result: dict) -> str:
    return (f"held-out loss {result['all']['loss']:.4f} over {result['all']['scored_tokens']} tokens "
            f"({result['documents']} documents, {result['dropped_as_trained_on']} dropped as trained on)")


# ---- the registry -------------------------------------------------------------------------

def _training_stage(name: str, config_type: str, result_type: str = "py4.train.packed:StageResult",
                    summary: Callable[[Any], str] = _training_summary) -> Stage:
    """``py4 train NAME --config FILE [key=value ...]``: the config type's module has ``run(config)``;
    on several GPUs it starts as ``accelerate launch … -m py4 train NAME …``."""
    return Stage(name=name, command=("train", name), options=TrainOptions, config_type=config_type,
                 run=_run_train, result_type=result_type, summary=summary, multi_gpu=True)


STAGES: dict[str, Stage] = {s.name: s for s in [
    Stage(name="assets", command=("smoke", "assets"), options=AssetsOptions,
          config_type="py4.train.assets:SmokeAssetsConfig", run=_run_assets, result_type="pathlib:Path",
          summary=_path_summary),
    Stage(name="dataset", command=("campaign", "dataset"), options=DatasetOptions, config_type=None,
          run=_run_dataset, result_type="builtins:dict", summary=_dataset_summary),
    Stage(name="corpus", command=("corpus", "generate"), options=CorpusOptions,
          config_type="py4.corpus.config:CorpusConfig", run=_run_corpus, result_type="builtins:dict",
          summary=_corpus_summary),
    Stage(name="subset", command=("corpus", "subset"), options=SubsetOptions, config_type=None,
          run=_run_subset, result_type="builtins:dict", summary=_corpus_summary),
    Stage(name="pack", command=("data", "pack"), options=PackOptions,
          config_type="py4.data.configs:PackConfig", run=_run_pack, result_type="builtins:dict",
          summary=_packed_summary),
    Stage(name="mix", command=("data", "mix"), options=MixOptions,
          config_type="py4.data.configs:MixConfig", run=_run_mix, result_type="builtins:dict",
          summary=_packed_summary),
    _training_stage("midtrain", "py4.train.midtrain:MidtrainConfig"),
    _training_stage("sft", "py4.train.sft:SFTStageConfig"),
    Stage(name="graft", command=("graft",), options=GraftOptions, config_type="py4.graft.config:GraftConfig",
          load=_load_graft, run=_run_graft, result_type="py4.graft.engine:GraftResult", summary=_graft_summary),
    _training_stage("eft_dose", "py4.train.eft_data:EFTDoseConfig", result_type="pathlib:Path", summary=_path_summary),
    _training_stage("eft", "py4.train.eft:EFTConfig"),
    _training_stage("grpo", "py4.train.grpo:GRPOStageConfig"),
    Stage(name="eval", command=("eval",), options=EvalOptions, config_type="py4.evaluate.harness:EvalConfig",
          load=_load_eval, run=_run_eval, result_type="builtins:dict", summary=_eval_summary),
    Stage(name="sanity_bank", command=("campaign", "sanity-bank"), options=SanityBankOptions, config_type=None,
          run=_run_sanity_bank, result_type="builtins:int", summary=_sanity_bank_summary),
    Stage(name="probes", command=("eval", "probes"), options=ProbesOptions, config_type=None,
          run=_run_probes, result_type="builtins:dict", summary=_probes_summary),
    Stage(name="heldout_corpus", command=("corpus", "generate"), options=CorpusOptions,
          config_type="py4.corpus.config:CorpusConfig", run=_run_corpus, result_type="builtins:dict",
          summary=_corpus_summary),
    Stage(name="heldout_loss", command=("smoke", "heldout-loss"), options=HeldoutLossOptions, config_type=None,
          run=_run_heldout_loss, result_type="builtins:dict", summary=_heldout_loss_summary),
]}
"""name -> stage, in the order a campaign's runs go (`py4.campaign.node.Node.stage`)."""


def get_stage(name: str) -> Stage:
    """The stage called ``name``; raises KeyError listing the stages (and a close match)."""
    if name not in STAGES:
        raise KeyError(unknown_stage(name, list(STAGES)))
    return STAGES[name]


def unknown_stage(name: str, choices: list[str]) -> str:
    """``unknown stage 'sfy'; did you mean 'sft'? (stages: ...)``."""
    hint = difflib.get_close_matches(name, choices, n=1)
    did_you_mean = f"; did you mean {hint[0]!r}?" if hint else ""
    return f"unknown stage {name!r}{did_you_mean} (stages: {', '.join(choices)})"


def config_type(name: str) -> type:
    """The type a stage's config validates against (imports the stage's module)."""
    return get_stage(name).config_class()


def argv(call: StageCall) -> list[str]:
    """The ``py4`` command line of a call (without ``py4``): the command, its flags (in the options'
    field order, `py4.cli_options.command_words`), the overrides."""
    stage = get_stage(call.stage)
    return [*stage.command, *command_words(stage.options, _option_values(call)), *call.override_texts()]


def load(call: StageCall) -> Any:
    """The call's typed config (file, flags, overrides); raises ConfigError listing every problem.

    Reads only the config file: what plan checks, before any input of the run exists.
    """
    stage = get_stage(call.stage)
    options = options_of(call)
    if stage.config_type is None:
        if call.config is not None or call.overrides:
            raise ConfigError(f"stage {stage.name}", ["the stage takes no config file and no key=value overrides "
                                                      f"(its options: {', '.join(stage.options.model_fields)})"])
        return options
    if stage.load is not None:
        return stage.load(stage, call)
    return load_config(stage.config_class(), call.config, call.overrides)


def check(call: StageCall) -> list[str]:
    """Every problem of a call (unknown stage, option or config key, a value of the wrong type),
    each naming the file or option and what was expected; [] when it would load."""
    try:
        load(call)
    except KeyError as exc:
        return [str(exc.args[0])]
    except ConfigError as exc:
        return [f"{exc.source}: {p}" for p in exc.problems]
    return []


def run_call(call: StageCall) -> Any:
    """Run the call's stage in this process; returns the stage's result. A user's error (a bad
    config, a missing input) raises its Py4Error/ValueError; a bug keeps its traceback."""
    stage = get_stage(call.stage)
    return stage.run(load(call), call)


def command_names() -> dict[tuple[str, ...], list[str]]:
    """py4 command -> the stages run by it (``("train", "eft")``: eft, ``("corpus", "generate")``:
    corpus and heldout_corpus)."""
    out: dict[tuple[str, ...], list[str]] = {}
    for stage in STAGES.values():
        out.setdefault(stage.command, []).append(stage.name)
    return out


def result_summary(result: object, stage: str | None = None) -> str:
    """One line a person reads of a stage's result (``py4 train``'s last line, a campaign run's
    stage log): the stage's own summary of what it made (a training run's steps, loss, resumption
    and weights; a corpus's documents and tokens; an evaluation's rates per split ...), else what
    it returned, cut at 200 characters."""
    summarise = STAGES[stage].summary if stage in STAGES else None
    if summarise is not None:
        return summarise(result)
    if hasattr(result, "global_step") and hasattr(result, "model_dir"):
        return _training_summary(result)
    text = f"-> {result}" if isinstance(result, (str, Path)) else repr(result)
    return text if len(text) <= 200 else text[:197] + "..."
