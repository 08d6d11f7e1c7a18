"""What every training stage shares: optimisation settings, guards, LR trace, resume, manifest.

Each stage module reads top to bottom: load → build data → build trainer → ``train`` →
record. The pieces here keep that flow short and identical across stages:

- :class:`Optimisation` and :class:`RunSettings`, the config blocks every stage has;
- :func:`trainer_kwargs`, the ``TrainingArguments`` keywords they imply on this device
  (transformers 5: a float ``warmup_steps`` below 1 is a ratio; "cosine to 0.1×" is
  ``cosine_with_min_lr`` with ``min_lr_rate``), valid for both transformers releases the
  stages run under (5.24 here, 5.17 in the vLLM environment: activation checkpointing under
  the name the installed class knows, :func:`trainer_fields` and :func:`check_fields`);
- guards that stop a run with a clear message: a batch with no supervised token
  (:func:`guarded_collator`), a NaN/inf loss (``callbacks.GuardCallback``), max steps that
  differ from ``step_schedule.json`` (:func:`check_schedule`), a world size that differs
  from the configured GPU count (:func:`check_world_size`);
- the Trainer callbacks (the loss guard, the LR trace, stopping at a step) live in
  :mod:`py4.train.callbacks`: subclassing ``TrainerCallback`` imports transformers, and
  this module is imported by light paths (config checks, the stage registry, reports);
- :func:`resume_checkpoint`: the last ``checkpoint-N`` (optimizer, scheduler, RNG and
  data position are restored by the Trainer from it; under FSDP2 the campaign's checkpoints
  are sharded, ``pytorch_model_fsdp_0/`` + ``optimizer_0/``, each rank writing its shard);
- :func:`check_optimizer`: an optimizer whose package is not installed (``adamw_torch_8bit``
  needs torchao) is refused before any weights load, naming the file, field, package and
  install command; :data:`OPTIMIZER_PACKAGES` lists what each optimizer needs.
"""

from __future__ import annotations

import difflib
import importlib.util
import json
import os
import sys
import zipfile
from collections.abc import Collection
from pathlib import Path
from typing import Any, Literal

import pydantic

from py4.config import StrictModel
from py4.errors import FileFormatError
from py4.fileio import read_json_object
from py4.train.errors import TrainingError, TrainingGuardError, TrainingInputMissing

# TrainingArguments.optim (transformers 5.24 OptimizerNames) -> (module it imports, what to
# pip-install), or None when torch alone provides it. Checked against transformers' own list
# in tests/train/test_optimizer_check.py.
_BNB = ("bitsandbytes", "bitsandbytes")
OPTIMIZER_PACKAGES: dict[str, tuple[str, str] | None] = {
    "adamw_torch": None, "adamw_torch_fused": None, "adamw_torch_xla": ("torch_xla", "torch_xla"),
    "adamw_torch_npu_fused": ("torch_npu", "torch_npu"), "adafactor": None,
    "adamw_anyprecision": ("torchdistx", "torchdistx"),
    "adamw_torch_4bit": ("torchao", "torchao==0.18.0"), "adamw_torch_8bit": ("torchao", "torchao==0.18.0"),
    "ademamix": _BNB, "sgd": None, "adagrad": None, "adamw_bnb_8bit": _BNB, "adamw_8bit": _BNB,
    "ademamix_8bit": _BNB, "lion_8bit": _BNB, "lion_32bit": _BNB, "paged_adamw_32bit": _BNB,
    "paged_adamw_8bit": _BNB, "paged_ademamix_32bit": _BNB, "paged_ademamix_8bit": _BNB,
    "paged_lion_32bit": _BNB, "paged_lion_8bit": _BNB, "rmsprop": None, "rmsprop_bnb": _BNB,
    "rmsprop_bnb_8bit": _BNB, "rmsprop_bnb_32bit": _BNB,
    **dict.fromkeys(("galore_adamw", "galore_adamw_8bit", "galore_adafactor", "galore_adamw_layerwise",
                     "galore_adamw_8bit_layerwise", "galore_adafactor_layerwise"), ("galore_torch", "galore-torch")),
    "lomo": ("lomo_optim", "lomo-optim"), "adalomo": ("lomo_optim", "lomo-optim"),
    "grokadamw": ("grokadamw", "grokadamw"),
    **dict.fromkeys(("schedule_free_radam", "schedule_free_adamw", "schedule_free_sgd"),
                    ("schedulefree", "schedulefree")),
    "apollo_adamw": ("apollo_torch", "apollo-torch"), "apollo_adamw_layerwise": ("apollo_torch", "apollo-torch"),
    "stable_adamw": ("optimi", "torch-optimi"),
}
# Packages the `campaign` extra of pyproject.toml installs (the campaign's optimizers).
CAMPAIGN_EXTRA_PACKAGES = {"torchao"}

__all__ = [
    "Optimisation",
    "RunSettings",
    "TrainingError",
    "TrainingGuardError",
    "TrainingInputMissing",
    "TrainingSplit",
    "trainer_kwargs",
    "TRAINER_FIELDS",
    "CHECKPOINTING_FIELDS",
    "installed_fields",
    "checkpointing_fields",
    "trainer_fields",
    "check_fields",
    "guarded_collator",
    "check_schedule",
    "read_schedule",
    "check_world_size",
    "check_checkpointing",
    "check_optimizer",
    "OPTIMIZER_PACKAGES",
    "resume_checkpoint",
    "checkpoint_problem",
    "trainable_summary",
]


TrainingSplit = Literal["eft_pool", "grpo", "eft_large"]
"""The splits a training stage draws problems from: those the shipped bank stores for its training
families (py4.problems.splits.assign_splits). A stage never trains on a test split, nor on
``train_sanity`` (an evaluation split that only the smoke study's sanity bank holds, written after
EFT: no bank a stage loads has it); a misspelt split is a config error naming the allowed ones, not
an empty problem list at run time."""


class Optimisation(StrictModel):
    """Optimizer, schedule and batch shape. Defaults are the midtraining row of the table."""

    learning_rate: float = 1e-5
    lr_scheduler: Literal["cosine_with_min_lr", "cosine", "constant", "constant_with_warmup",
                          "linear"] = "cosine_with_min_lr"
    min_lr_rate: float | None = 0.1
    """Only for cosine_with_min_lr: the LR ends at this fraction of the peak."""
    warmup: float = 0.03
    """Below 1: a fraction of the steps; 1 or more: a number of steps."""
    weight_decay: float = 0.01
    max_grad_norm: float = 1.0
    optim: str = "adamw_torch_fused"
    """TrainingArguments.optim: adamw_torch_fused, adamw_torch, adamw_torch_8bit (torchao) …
    (one of :data:`OPTIMIZER_PACKAGES`; its package must be installed to train)."""
    seed: int = 42
    micro_batch: int = 1
    grad_accum: int = 1
    gpus: int = 1
    """GPUs the run is launched on (accelerate's world size); micro × accum × gpus = global batch."""
    max_steps: int | None = None
    """Optimizer steps; None: from the schedule file, or from ``epochs``."""
    epochs: float = 1.0
    gradient_checkpointing: bool | Literal["auto"] = "auto"
    """auto: on GPU unless FSDP checkpoints activations (fsdp_activation_checkpointing), off on CPU."""
    master_weights: Literal["fp32", "bf16"] = "fp32"
    """Under an FSDP2 launch with bf16 mixed precision: fp32 is accelerate's upcast of every trainable
    parameter (and so its gradient and optimizer state) to fp32; bf16 keeps them in the checkpoint's
    bf16, as axolotl's FSDP2 path does (py4.train.fsdp.keep_param_dtype; docs/training.md). No effect
    outside FSDP."""

    @pydantic.field_validator("optim")
    @classmethod
    def _known_optimizer(cls, value: str) -> str:
        if value not in OPTIMIZER_PACKAGES:
            close = difflib.get_close_matches(value, OPTIMIZER_PACKAGES, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"unknown optimizer {value!r}{hint} "
                             f"(transformers 5.24 knows: {', '.join(OPTIMIZER_PACKAGES)})")
        return value

    @pydantic.model_validator(mode="after")
    def _min_lr_with_its_scheduler(self) -> "Optimisation":
        # Checked when the config loads (py4 campaign plan), not when the Trainer is built.
        if self.lr_scheduler == "cosine_with_min_lr" and self.min_lr_rate is None:
            raise ValueError("min_lr_rate is required with lr_scheduler cosine_with_min_lr "
                             "(the LR ends at this fraction of the peak, e.g. 0.1)")
        return self

    @property
    def global_batch(self) -> int:
        """Sequences (or rows) per optimizer step: micro × accum × gpus."""
        return self.micro_batch * self.grad_accum * self.gpus


class RunSettings(StrictModel):
    """Where a run writes, how it logs, checkpoints and resumes."""

    output_dir: str
    logging_steps: int = 1
    save_steps: int = 50
    save_total_limit: int | None = 2
    report_to: list[str] = ["tensorboard"]
    """Trackers, by transformers' names (tensorboard, wandb, trackio, mlflow, …; [] for none)."""
    wandb_project: str | None = None
    resume: Literal["auto", "never"] | str = "auto"
    """auto: from the last checkpoint-N in output_dir if any; never; or a checkpoint path."""
    progress_bar: bool = True

    @pydantic.field_validator("report_to")
    @classmethod
    def _trackers_that_can_start(cls, value: list[str]) -> list[str]:
        from py4.tracking import check_trackers

        return check_trackers(value)


# TrainingArguments fields :func:`trainer_kwargs` sets besides activation checkpointing (checked against
# each transformers the stages run under: tests/train/test_trainer_fields.py).
TRAINER_FIELDS: tuple[str, ...] = (
    "output_dir", "learning_rate", "lr_scheduler_type", "lr_scheduler_kwargs", "warmup_steps", "weight_decay",
    "max_grad_norm", "optim", "seed", "data_seed", "per_device_train_batch_size", "gradient_accumulation_steps",
    "max_steps", "num_train_epochs", "use_cpu", "bf16", "logging_steps", "save_strategy", "save_steps",
    "save_total_limit", "report_to", "disable_tqdm", "dataloader_num_workers", "remove_unused_columns", "run_name",
)

# The fields that turn activation checkpointing on, newest name first. transformers 5.24 calls them
# activation_checkpointing(_kwargs) and keeps gradient_checkpointing(_kwargs) as deprecated aliases that
# warn; 5.17 (pinned by vLLM in the trainer environment, docs/training.md) has only the old names.
CHECKPOINTING_FIELDS: tuple[tuple[str, str], ...] = (
    ("activation_checkpointing", "activation_checkpointing_kwargs"),
    ("gradient_checkpointing", "gradient_checkpointing_kwargs"),
)


def installed_fields(args_class=None) -> frozenset[str]:
    """The dataclass fields of ``args_class`` (default: the installed ``TrainingArguments``)."""
    import dataclasses

    if args_class is None:
        from transformers import TrainingArguments as args_class
    return frozenset(f.name for f in dataclasses.fields(args_class))


def checkpointing_fields(available: Collection[str]) -> tuple[str, str]:
    """The (flag, kwargs) fields for activation checkpointing among ``available`` field names."""
    for flag, kwargs in CHECKPOINTING_FIELDS:
        if flag in available and kwargs in available:
            return flag, kwargs
    raise TrainingError("TrainingArguments has no activation-checkpointing field (expected one of "
                        f"{', '.join(f for f, _ in CHECKPOINTING_FIELDS)}): transformers too old or too new")


def trainer_fields(available: Collection[str]) -> frozenset[str]:
    """Every TrainingArguments field :func:`trainer_kwargs` may set when the class has ``available``."""
    return frozenset((*TRAINER_FIELDS, *checkpointing_fields(available)))


def check_fields(args_class, names: Collection[str], what: str) -> None:
    """Raises TrainingError (before any weights load) when ``args_class`` lacks one of ``names``.

    ``what`` names the stage's configuration (e.g. "GRPO"). Without this check the missing field
    is a TypeError from the config's constructor, after the model has loaded.
    """
    missing = sorted(set(names) - installed_fields(args_class))
    if missing:
        import transformers

        raise TrainingError(
            f"{what}: {args_class.__module__}.{args_class.__name__} of the installed transformers "
            f"{transformers.__version__} ({sys.executable}) has no field {', '.join(missing)}: py4 sets them "
            "for transformers 5.24 and 5.17 (the trainer environment's); install one of those")


def tracker_run_name(output_dir: str) -> str:
    """The trackers' name of a training run (`py4.tracking` logs its evaluations under it)."""
    from py4.tracking import run_name

    return run_name(output_dir)


def trainer_kwargs(opt: Optimisation, run: RunSettings, device, max_steps: int,
                   available: Collection[str] | None = None) -> dict[str, Any]:
    """TrainingArguments keywords shared by every stage (TRL configs accept them too).

    ``available``: the field names of the arguments class they are for (default: the installed
    ``TrainingArguments``'s); the checkpointing fields take the name that class knows.
    """
    flag, flag_kwargs = checkpointing_fields(installed_fields() if available is None else available)
    kwargs: dict[str, Any] = dict(
        output_dir=run.output_dir,
        learning_rate=opt.learning_rate,
        lr_scheduler_type=opt.lr_scheduler,
        warmup_steps=opt.warmup if opt.warmup < 1 else int(opt.warmup),
        weight_decay=opt.weight_decay,
        max_grad_norm=opt.max_grad_norm,
        optim=opt.optim,
        seed=opt.seed,
        data_seed=opt.seed,
        per_device_train_batch_size=opt.micro_batch,
        gradient_accumulation_steps=opt.grad_accum,
        max_steps=max_steps,
        num_train_epochs=opt.epochs,
        use_cpu=device.use_cpu,
        bf16=device.bf16,
        logging_steps=run.logging_steps,
        save_strategy="steps",
        save_steps=run.save_steps,
        save_total_limit=run.save_total_limit,
        report_to=list(run.report_to) or "none",
        run_name=tracker_run_name(run.output_dir),  # the name an evaluation finds the run's tracker by
        disable_tqdm=not run.progress_bar,
        dataloader_num_workers=0,
        remove_unused_columns=False,
    )
    kwargs[flag] = device.gradient_checkpointing
    if opt.lr_scheduler == "cosine_with_min_lr":
        # Optimisation's validator makes min_lr_rate present here; a None is a bug, not a config.
        assert opt.min_lr_rate is not None, "Optimisation accepted cosine_with_min_lr without min_lr_rate"
        kwargs["lr_scheduler_kwargs"] = {"min_lr_rate": opt.min_lr_rate}
    if device.gradient_checkpointing:
        kwargs[flag_kwargs] = {"use_reentrant": False}
    if "wandb" in run.report_to and run.wandb_project:
        os.environ.setdefault("WANDB_PROJECT", run.wandb_project)
    return kwargs


def guarded_collator(collator, label_key: str = "labels"):
    """Wrap a data collator: a batch with no supervised token raises TrainingGuardError."""

    def collate(features):
        batch = collator(features)
        labels = batch.get(label_key)
        if labels is not None and int((labels[..., 1:] != -100).sum()) == 0:
            raise TrainingGuardError(
                f"a batch of {len(features)} rows has no supervised token (every label is -100): "
                "check the loss mask of the data (assistant markers, truncation)"
            )
        return batch

    return collate


def read_schedule(path: str | Path) -> dict[str, Any]:
    """Read ``step_schedule.json`` (a file, or the one in a folder); raises FileFormatError naming
    the file (and line, or the field) when it is missing or malformed."""
    path = Path(path)
    if path.is_dir():
        path = path / "step_schedule.json"
    data = read_json_object(path, missing="no step schedule (py4 data mix / py4 data schedule writes it)")
    if isinstance(data.get("max_steps"), bool) or not isinstance(data.get("max_steps"), int):
        raise FileFormatError(f"{path}: field 'max_steps': expected an integer, got {data.get('max_steps')!r}")
    return data


def check_schedule(opt: Optimisation, schedule: dict[str, Any] | None,
                   source: str = "step_schedule.json") -> int | None:
    """The max steps to run: the schedule's, the config's, and they must agree when both are set.

    The schedule counted its steps for a global batch (``sequences_per_step``: the pack's
    micro × accum × gpus); a run that steps with another one would stop after the schedule's
    steps having seen more or less data than the schedule says, so that is refused too.
    Raises TrainingGuardError (before any weights load) when they differ.
    """
    configured = opt.max_steps
    if schedule is None:
        return configured
    per_step = schedule.get("sequences_per_step")
    if per_step is not None and int(per_step) != opt.global_batch:
        raise TrainingGuardError(
            f"{source} counts its steps for {per_step} sequences per step (micro {schedule.get('micro_batch')} "
            f"× accum {schedule.get('grad_accum')} × gpus {schedule.get('gpus')}), but optimisation trains "
            f"{opt.global_batch} (micro {opt.micro_batch} × accum {opt.grad_accum} × gpus {opt.gpus}): "
            "give the pack's schedule the same micro_batch, grad_accum and gpus, or set them here to match"
        )
    scheduled = int(schedule["max_steps"])
    if configured is not None and configured != scheduled:
        raise TrainingGuardError(
            f"max_steps {configured} in the config differs from max_steps {scheduled} in {source}: "
            "remove max_steps from the config or regenerate the schedule"
        )
    return scheduled


def check_world_size(opt: Optimisation) -> int:
    """Raises TrainingGuardError when the launch's world size is not the configured GPU count."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    import torch

    if not torch.cuda.is_available() and opt.gpus == 1:
        return world
    if world != opt.gpus:
        raise TrainingGuardError(
            f"the config expects {opt.gpus} GPU(s) (micro {opt.micro_batch} × accum {opt.grad_accum} × gpus) "
            f"but the launch has WORLD_SIZE={world}: launch with accelerate and the matching configs/accelerate file"
        )
    return world


def _module_available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def check_optimizer(opt: Optimisation, source: str = "the stage config") -> None:
    """Raises TrainingError (a ValueError) when ``opt.optim`` needs a package that is not installed.

    Called before any weights load (``py4.stages.run_call``, :func:`run_packed`): the
    Trainer would only find out when it builds the optimizer, after loading the model.
    """
    needed = OPTIMIZER_PACKAGES.get(opt.optim)
    if needed is None:
        return
    module, requirement = needed
    if _module_available(module):
        return
    if module in CAMPAIGN_EXTRA_PACKAGES:
        how = ("pip install -e '.[campaign]' torch==2.13.0 (the campaign extra; torch pinned so pip "
               f"keeps the installed build), or pip install '{requirement}'")
    else:
        how = f"pip install '{requirement}'"
    raise TrainingError(
        f"{source}: optimisation.optim is {opt.optim!r}, which needs the package {requirement!r} "
        f"(module {module!r}), which is not installed for {sys.executable}: "
        f"install it with: {how}; or choose another optimizer (adamw_torch_fused needs nothing more)"
    )


def check_checkpointing(opt: Optimisation, device) -> None:
    """Raises TrainingGuardError when gradient checkpointing and FSDP's own are both on.

    The FSDP configs checkpoint activations (``fsdp_activation_checkpointing: true``, non-
    reentrant ``checkpoint_wrapper`` per decoder layer); the Trainer refuses a second layer of
    it, but only after the weights are loaded.
    """
    from py4.train import fsdp

    launch = fsdp.launch()
    if launch.enabled and launch.activation_checkpointing and device.gradient_checkpointing:
        raise TrainingGuardError(
            "optimisation.gradient_checkpointing is true but the accelerate config already checkpoints "
            "activations (fsdp_activation_checkpointing: true): set optimisation.gradient_checkpointing "
            "to false or auto"
        )


# What transformers 5.24's Trainer reads when it resumes (Trainer.train, _load_from_checkpoint):
# trainer_state.json always, and weights as one of these files, an FSDP state dict (a
# pytorch_model_fsdp* folder or file) or adapter weights in a subfolder.
_CHECKPOINT_STATE = "trainer_state.json"
_ADAPTER_WEIGHTS = ("adapter_model.safetensors", "adapter_model.bin")
_CHECKPOINT_WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                       "pytorch_model.bin.index.json", *_ADAPTER_WEIGHTS)
_CHECKPOINT_EXPECTED = (f"expected a checkpoint-N folder written by the Trainer: {_CHECKPOINT_STATE} and the "
                        "weights (model.safetensors, adapter_model.safetensors, a pytorch_model_fsdp_0 folder, …)")


def checkpoint_problem(folder: Path) -> str | None:
    """Why ``folder`` cannot be resumed from by the Trainer (a short reason), or None when it can."""
    if not folder.is_dir():
        return "no such folder"
    if not (folder / _CHECKPOINT_STATE).is_file():
        return f"no {_CHECKPOINT_STATE}"
    try:  # the Trainer writes it in place, not atomically: a save cut short can leave part of it
        json.loads((folder / _CHECKPOINT_STATE).read_text(encoding="utf-8"))
    except (ValueError, OSError):
        return f"{_CHECKPOINT_STATE} is not whole JSON (a save cut short?)"
    entries = list(folder.iterdir())
    # Each process writes its own RNG state (a torch.save zip) with no barrier before process 0
    # writes trainer_state.json: a launch killed then can leave another process's file cut short.
    cut = sorted(e.name for e in entries if e.name.startswith("rng_state") and not zipfile.is_zipfile(e))
    if cut:
        return f"{cut[0]} is not a whole file (a save cut short?)"
    weights = (any((folder / name).is_file() for name in _CHECKPOINT_WEIGHTS)
               or any("pytorch_model_fsdp" in e.name for e in entries)
               or any(e.is_dir() and any((e / name).is_file() for name in _ADAPTER_WEIGHTS) for e in entries))
    return None if weights else "no model or adapter weights"


def resume_checkpoint(run: RunSettings) -> str | None:
    """The checkpoint to resume from, per ``run.resume``, checked before any weights load.

    ``auto``: the newest ``checkpoint-N`` in ``run.output_dir`` that the Trainer can resume
    from; one without trainer_state.json or weights (a save cut short: the Trainer writes the
    state last) is passed over, and the step is trained again. A path: raises
    TrainingInputMissing (a FileNotFoundError) naming ``run.resume`` when it is missing or not
    a checkpoint (the Trainer would say so only after the weights are loaded).
    """
    if run.resume == "never":
        return None
    if run.resume == "auto":
        from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

        out = Path(run.output_dir)
        steps = {}
        for folder in out.glob(f"{PREFIX_CHECKPOINT_DIR}-*") if out.is_dir() else ():
            suffix = folder.name[len(PREFIX_CHECKPOINT_DIR) + 1:]
            if suffix.isdigit() and checkpoint_problem(folder) is None:
                steps[int(suffix)] = folder
        return str(steps[max(steps)]) if steps else None
    if not Path(run.resume).is_dir():
        raise TrainingInputMissing(f"run.resume: checkpoint folder not found: {run.resume} "
                                   "(expected a checkpoint-N folder, auto or never)")
    problem = checkpoint_problem(Path(run.resume))
    if problem is not None:
        raise TrainingInputMissing(f"run.resume: {run.resume} is not a checkpoint folder ({problem}; "
                                   f"{_CHECKPOINT_EXPECTED}; or auto or never)")
    return run.resume


def trainable_summary(model) -> dict[str, int]:
    """Counts of trainable and total parameters, and LoRA-adapted modules if any."""
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    adapted = sum(1 for name, module in model.named_modules() if hasattr(module, "lora_A") and len(module.lora_A))
    return {"trainable_parameters": trainable, "total_parameters": total, "adapted_modules": adapted}
