"""Does a training stage's config fit its GPUs? The per-GPU bytes of one run, refused before any weights load.

:func:`run_memory` turns a stage config (midtraining, SFT, EFT, GRPO) into the
:class:`py4.train.memory.RunShape` it trains with: FSDP2 for a run on more than one GPU (the
campaign's ``configs/accelerate/fsdp2.yaml``: bf16 mixed precision, activation checkpointing per
decoder layer), the master dtype that implies (``optimisation.master_weights``), the LoRA tensors
PEFT would add (its own target rule over the real module names), the sequence length and the loss.
:func:`check_fit` raises :class:`FitError` naming the run, the figure and the knob when the total is
over the GPU's memory; ``py4.stages`` calls it before the stage runs on a CUDA machine, and
``py4 campaign plan`` for every training run of a campaign.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from py4.train.errors import TrainingGuardError
from py4.train.memory import GIB, MemoryEstimate, RunShape, estimate, known_optimizer
from py4.train.model_shape import ModelShape, model_config, model_shape

__all__ = ["FitError", "FsdpSettings", "RunMemory", "run_memory", "check_fit", "knob", "DEFAULT_SEQ_LEN"]

DEFAULT_SEQ_LEN = 8192
"""The packs' sequence length when no schedule says otherwise (py4.data.configs: seq_len 8192)."""


class FitError(TrainingGuardError):
    """A run's planned per-GPU bytes exceed its GPU's memory (or cannot be planned)."""


@dataclass(frozen=True)
class RunMemory:
    shape: ModelShape
    run: RunShape
    memory: MemoryEstimate
    config_source: str


def _lora_tensors(shape: ModelShape, peft_config) -> tuple[int, ...]:
    from peft.tuners.tuners_utils import check_target_module_exists

    r = int(peft_config.r)
    out: list[int] = []
    for name, (fan_in, fan_out) in shape.linear_shapes.items():
        if check_target_module_exists(peft_config, name):
            out += [r * fan_in, fan_out * r]
    return tuple(out)


def _grpo_lora(config) -> Any:
    """The warm-start adapter's LoraConfig (its adapter_config.json), or LoraSpec's defaults."""
    from py4.train.eft import LoraSpec

    path = Path(config.adapter or "") / "adapter_config.json"
    if config.adapter and path.is_file():
        from peft import LoraConfig

        return LoraConfig.from_pretrained(str(path.parent))
    return LoraSpec().peft_config()


def _seq_len(config) -> tuple[int, str]:
    grpo = getattr(config, "grpo", None)
    if grpo is not None:
        return grpo.max_prompt_length + config.episode.token_budget, "grpo"
    data = getattr(config, "data", None)
    if data is not None and hasattr(data, "max_length"):  # EFT's dose
        return int(data.max_length), "causal_lm"
    chat = getattr(config, "chat_data", None)
    if chat is not None:
        return int(chat.max_length), "causal_lm"
    schedule = getattr(data, "schedule", None)
    if schedule and Path(schedule).exists():
        path = Path(schedule) / "step_schedule.json" if Path(schedule).is_dir() else Path(schedule)
        seq = json.loads(path.read_text(encoding="utf-8")).get("seq_len")
        if isinstance(seq, int):
            return seq, "causal_lm"
    return DEFAULT_SEQ_LEN, "causal_lm"


@dataclass(frozen=True)
class FsdpSettings:
    """What an accelerate FSDP2 config (or launch) decides for memory."""

    mixed_precision: str = "bf16"
    activation_checkpointing: bool = True
    offload_params: bool = False

    @classmethod
    def from_file(cls, path: str | Path) -> "FsdpSettings":
        """From an accelerate config file (``configs/accelerate/fsdp2.yaml``)."""
        import yaml

        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        fsdp = data.get("fsdp_config") or {}
        return cls(mixed_precision=str(data.get("mixed_precision", "no")),
                   activation_checkpointing=bool(fsdp.get("fsdp_activation_checkpointing", False)),
                   offload_params=bool(fsdp.get("fsdp_offload_params", False)))

    @classmethod
    def from_launch(cls) -> "FsdpSettings":
        """From this process's ``accelerate launch`` environment."""
        import os

        from py4.train import fsdp

        return cls(mixed_precision=os.environ.get("ACCELERATE_MIXED_PRECISION", "no"),
                   activation_checkpointing=fsdp.launch().activation_checkpointing,
                   offload_params=os.environ.get("FSDP_OFFLOAD_PARAMS", "false").lower() == "true")


def run_memory(config, fallback: tuple[str, str | None] | None = None, seq_len: int | None = None,
               measured: dict[str, float] | None = None, fsdp: FsdpSettings | None = None) -> RunMemory:
    """The per-GPU plan of a training stage config.

    ``fallback`` (hub id, revision) names the model whose architecture the run trains when its
    ``model.path`` is a folder that does not exist yet (a later stage of a campaign that has not
    run). ``measured`` may give ``logits_bytes_per_token`` and ``block_activation_bytes_per_token``.
    Raises FitError when neither gives a configuration, or the optimizer has no state rule.
    """
    opt = config.optimisation
    source = model_config(config.model.path, config.model.revision)
    if source is None and fallback is not None:
        source = model_config(*fallback)
    if source is None:
        raise FitError(f"model.path {config.model.path!r}: no config.json here, in the HF cache or among the "
                       "pinned models (run `py4 campaign preflight` on a node with Hub access)")
    if not known_optimizer(opt.optim):
        raise FitError(f"optimisation.optim {opt.optim!r}: the memory plan has no state rule for it "
                       "(py4.train.memory.STATE_RULES)")
    shape = model_shape(source[0])
    length, loss = _seq_len(config)
    settings = fsdp or FsdpSettings()
    sharded = opt.gpus > 1
    peft_config = (config.lora.peft_config() if getattr(config, "lora", None) is not None
                   else _grpo_lora(config) if getattr(config, "grpo", None) is not None else None)
    if peft_config is not None:
        trainable = _lora_tensors(shape, peft_config)
        frozen, master = shape.parameters, "fp32"  # PEFT keeps adapters in fp32 (autocast_adapter_dtype)
    else:
        trainable = tuple(n for _, n in shape.tensors)
        frozen = 0
        upcast = sharded and settings.mixed_precision != "no" and opt.master_weights == "fp32"
        master = "fp32" if upcast else "bf16"
    checkpointing = (settings.activation_checkpointing or opt.gradient_checkpointing is True if sharded
                     else opt.gradient_checkpointing is not False)
    run = RunShape(gpus=opt.gpus, micro_batch=opt.micro_batch, seq_len=seq_len or length, optim=opt.optim,
                   trainable=trainable, frozen_parameters=frozen, master_weights=master, fsdp=sharded,
                   checkpointing=checkpointing, loss=loss, lora=peft_config is not None,  # type: ignore[arg-type]
                   offload=sharded and settings.offload_params)
    measured = measured or {}
    memory = estimate(shape, run, measured.get("logits_bytes_per_token"),
                      measured.get("block_activation_bytes_per_token"))
    return RunMemory(shape=shape, run=run, memory=memory, config_source=source[1])


def knob(plan: RunMemory) -> str:
    """What to change when a run does not fit, from its largest part."""
    m, run = plan.memory, plan.run
    if run.fsdp and run.master_weights == "fp32" and not run.lora and m.state > m.total / 2:
        return ("optimisation.master_weights: bf16 (keep parameters, gradients and optimizer state in bf16 "
                "as axolotl's FSDP2 does), or more optimisation.gpus")
    if m.logits + m.activations > m.state:
        return "optimisation.micro_batch (lower it and raise grad_accum to keep the global batch)"
    return "optimisation.optim (adamw_torch_8bit) or more optimisation.gpus"


def check_fit(plan: RunMemory, gpu_bytes: int, run_name: str) -> None:
    """Raises FitError naming the run, the figure and the knob when its per-GPU total is over ``gpu_bytes``."""
    m = plan.memory
    if m.total <= gpu_bytes:
        return
    raise FitError(
        f"{run_name}: planned {m.total / GIB:.1f} GiB per GPU (state {m.state / GIB:.1f}: weights "
        f"{m.weights / GIB:.1f} + gradients {m.gradients / GIB:.1f} + optimizer {m.optimizer / GIB:.1f}; gathered "
        f"{m.gathered / GIB:.1f}, activations {m.activations / GIB:.1f}, logits {m.logits / GIB:.1f}, reserve "
        f"{m.reserve / GIB:.1f}) is over the GPU's {gpu_bytes / GIB:.1f} GiB: change {knob(plan)}")
