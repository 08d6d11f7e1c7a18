"""The campaign's memory and time plan: per training run, the bytes per GPU, rank 0's host RAM, disk
and GPU-hours, before anything is booked (``py4 campaign plan``; docs/campaign.md, "Memory and time").

Per run, from its stage config as the campaign resolves it (:func:`py4.train.fit.run_memory`):
parameters (transformers builds the model's config on ``meta``; the safetensors headers in the HF
cache, when ``py4 campaign preflight`` put them there, give the checkpoint's own count), the bytes
per parameter of weights, gradients and optimizer state under the run's precision (FSDP2 with
accelerate's fp32 upcast unless ``optimisation.master_weights: bf16``), the gathered layers,
activations and logits at its micro-batch and sequence length, the total against the GPU type's
memory (:data:`py4.train.memory.GPU_TYPES`), rank 0's host RAM, disk for checkpoints and the final
weights, and GPU-hours from the tokens it trains and a throughput: measured when
``benchmarks/gpu/measured.json`` exists, else the assumption :data:`ASSUMED_MFU` states.

``benchmarks/gpu/measured.json`` (written by the GPU check; every field but ``source`` and ``date``
optional; model keys are the campaign spec's: ``gemma4_12b``, ``gemma4_31b``, ``glm45_air``)::

    {
      "source": "scripts/gpu_check.sh on one H200 (what ran, which commit)",
      "date": "2026-12-04",
      "gpu_total_bytes": 150011707392,                 # torch.cuda.get_device_properties(0).total_memory
      "tokens_per_s_per_gpu": {"gemma4_31b": 2100.0, "glm45_air": 1500.0},
      "logits_bytes_per_token": {"gemma4_31b": 3670016.0},      # loss peak / (micro x seq)
      "block_activation_bytes_per_token": {"gemma4_31b": 180000.0},  # one decoder layer's peak / tokens
      "peak_bytes": {"gemma4_31b": 12345678901}        # informational: a probe's torch.cuda.max_memory_allocated
    }

A measured figure replaces the assumption it names for every run of that model; the plan says
which figures were measured.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from py4.campaign.node_meta import DoseMeta, EFTMeta, GRPOSegmentMeta
from py4.fileio import read_json_object
from py4.train.fit import FitError, FsdpSettings, RunMemory, check_fit, knob, run_memory
from py4.train.memory import GIB, GPU_TYPES, optimizer_state_bytes

__all__ = ["MEASURED_FILE", "ASSUMED_MFU", "GRPO_MINUTES_PER_STEP", "RunPlan", "plan_runs", "read_measured"]

MEASURED_FILE = Path("benchmarks/gpu/measured.json")
ASSUMED_MFU = {"dense": 0.35, "moe": 0.15}
"""Model FLOP utilisation assumed without a measurement: 35 % for the dense Gemma-4 models (a
common FSDP2 bf16 figure at 8k tokens), 15 % for GLM's 128-expert MoE layers in transformers
(per-expert matmuls, routing and all-to-all-free FSDP gathers of every expert)."""
GRPO_MINUTES_PER_STEP = 80.0
"""GRPO's step time: the as-run Run B-v2 (the spec's recorded.grpo_wall_clock, 77-82 min/step), on a
node reserved for the trainer and its vLLM server."""
GPU_TYPE = "H200"
PROCESS_HOST_BYTES = 6 * GIB
"""Host RAM each training process needs besides rank 0's model copy (Python, torch and CUDA libraries,
pinned transfer buffers, the data loader): an allowance, added per process for the node's figure."""


def read_measured(path: Path = MEASURED_FILE) -> dict[str, Any] | None:
    """The GPU check's measurements (schema in this module's docstring), or None when there are none."""
    return read_json_object(path) if path.is_file() else None


@dataclass
class RunPlan:
    node_id: str
    stage: str
    model: str
    gpus: int
    plan: RunMemory
    gpu_bytes: int
    fits: bool
    tokens: int
    tokens_per_s_per_gpu: float
    throughput_source: str
    gpu_hours: float
    disk_bytes: int
    parameters_source: str
    checkpoint_parameters: int | None

    def to_json(self) -> dict[str, Any]:
        run = self.plan.run
        return {
            "run": self.node_id, "stage": self.stage, "model": self.model, "gpus": self.gpus,
            "parameters": self.plan.shape.parameters, "parameters_source": self.parameters_source,
            "checkpoint_parameters": self.checkpoint_parameters,
            "trainable_parameters": sum(run.trainable), "optimizer": run.optim, "master_weights": run.master_weights,
            "fsdp": run.fsdp, "lora": run.lora, "micro_batch": run.micro_batch, "seq_len": run.seq_len,
            "checkpointing": run.checkpointing,
            "bytes_per_parameter": self.bytes_per_parameter(),
            "bytes_per_gpu": self.plan.memory.to_json(), "gpu_type": GPU_TYPE, "gpu_bytes": self.gpu_bytes,
            "fits": self.fits, **({} if self.fits else {"knob": knob(self.plan)}),
            "host_ram_rank0_bytes": self.plan.memory.host_ram_rank0, "host_ram_node_bytes": self.host_ram_node,
            "disk_bytes": self.disk_bytes,
            "tokens": self.tokens, "tokens_per_s_per_gpu": round(self.tokens_per_s_per_gpu, 1),
            "throughput_source": self.throughput_source, "gpu_hours": round(self.gpu_hours, 1),
        }

    @property
    def host_ram_node(self) -> int:
        """Rank 0's copy of the model plus :data:`PROCESS_HOST_BYTES` for each of the run's processes."""
        return self.plan.memory.host_ram_rank0 + max(self.gpus, 1) * PROCESS_HOST_BYTES

    def bytes_per_parameter(self) -> dict[str, float]:
        """Bytes per trainable parameter of its weights, gradients and optimizer state (whole model, unsharded)."""
        run = self.plan.run
        master = 4 if run.master_weights == "fp32" else 2
        trainable = sum(run.trainable) or 1
        return {"weights": master, "gradients": master,
                "optimizer": round(optimizer_state_bytes(run.optim, run.trainable, master) / trainable, 4),
                "frozen_weights": 2 if run.frozen_parameters else 0}

    def lines(self) -> list[str]:
        m = self.plan.memory
        verdict = "fits" if self.fits else f"DOES NOT FIT: change {knob(self.plan)}"
        return [
            f"memory: {m.total / GIB:.1f} of {self.gpu_bytes / GIB:.1f} GiB per {GPU_TYPE} ({verdict}); state "
            f"{m.state / GIB:.1f} (weights {m.weights / GIB:.1f} + grads {m.gradients / GIB:.1f} + "
            f"{self.plan.run.optim} {m.optimizer / GIB:.1f}, master {self.plan.run.master_weights}), gathered "
            f"{m.gathered / GIB:.1f}, activations {m.activations / GIB:.1f}, logits {m.logits / GIB:.1f}",
            f"host RAM: rank 0 {m.host_ram_rank0 / GIB:.0f} GiB, node {self.host_ram_node / GIB:.0f} GiB; "
            f"disk: {self.disk_bytes / 1e9:.0f} GB; "
            f"{self.gpu_hours:,.0f} GPU-h ({self.tokens / 1e6:,.1f}M tokens at {self.tokens_per_s_per_gpu:,.0f} "
            f"tok/s/GPU, {self.throughput_source})",
        ]


def _steps(spec, node, config) -> int:
    opt = config.optimisation
    if getattr(config, "grpo", None) is not None:  # a segment trains from the previous segment's end
        segment_end = node.meta.segment_end if isinstance(node.meta, GRPOSegmentMeta) else None
        end = int(segment_end or opt.max_steps or 0)
        return end - max([s for s in spec.grpo.segments if s < end], default=0)
    if opt.max_steps:
        return int(opt.max_steps)
    meta = node.meta
    rows = meta.dose if isinstance(meta, EFTMeta) else meta.rows if isinstance(meta, DoseMeta) else 0
    return math.ceil(int(rows) * opt.epochs / opt.global_batch) if rows else 0


def _flops_per_token(plan: RunMemory) -> float:
    active = plan.shape.active_parameters
    per = 4 if plan.run.lora else 6  # LoRA: no weight gradients for the frozen base
    return (per + (2 if plan.run.checkpointing else 0)) * active


def _throughput(model: str, plan: RunMemory, measured: dict[str, Any] | None) -> tuple[float, str]:
    value = (measured or {}).get("tokens_per_s_per_gpu", {}).get(model)
    if value:
        return float(value), f"measured: {measured.get('source')} ({measured.get('date')})"
    kind = "moe" if plan.shape.active_parameters < plan.shape.parameters else "dense"
    flops = GPU_TYPES[GPU_TYPE].peak_bf16_flops * ASSUMED_MFU[kind]
    return flops / _flops_per_token(plan), f"assumed {ASSUMED_MFU[kind]:.0%} MFU of {GPU_TYPE} bf16 peak"


def _disk(plan: RunMemory, steps: int, config) -> int:
    run, settings = plan.run, config.run
    master = 4 if run.master_weights == "fp32" else 2
    final = sum(run.trainable) * (4 if run.lora else 2)
    checkpoint = sum(run.trainable) * master + optimizer_state_bytes(run.optim, run.trainable, master)
    saved = steps // settings.save_steps if settings.save_steps else 0
    kept = min(saved, settings.save_total_limit) if settings.save_total_limit else saved
    return final + kept * checkpoint


def plan_runs(spec, nodes, measured: dict[str, Any] | None = None) -> list[RunPlan]:
    """The memory and time plan of every training run among ``nodes`` (campaign scale)."""
    from py4.stages import get_stage, load
    from py4.train.model_shape import safetensors_parameters

    from py4.campaign.node import ACCELERATE_CONFIG

    fsdp = FsdpSettings.from_file(ACCELERATE_CONFIG)  # what every multi-GPU run launches with
    plans = []
    gpu_bytes = int((measured or {}).get("gpu_total_bytes") or GPU_TYPES[GPU_TYPE].usable_bytes)
    for node in nodes:
        if not get_stage(node.stage).multi_gpu or node.gpus == 0:
            continue
        model = node.meta.model
        config = load(node.call)
        pin = spec.models[model].base
        per_model = {key: (measured or {}).get(key, {}).get(model)
                     for key in ("logits_bytes_per_token", "block_activation_bytes_per_token")}
        plan = run_memory(config, (pin.hub_id, pin.revision),
                          measured={k: float(v) for k, v in per_model.items() if v}, fsdp=fsdp)
        steps = _steps(spec, node, config)
        tokens = steps * config.optimisation.global_batch * plan.run.seq_len
        rate, source = _throughput(model, plan, measured)
        if getattr(config, "grpo", None) is not None:
            reserved = node.meta.held_gpus or node.gpus
            hours = steps * GRPO_MINUTES_PER_STEP / 60 * reserved
            source = f"as-run {GRPO_MINUTES_PER_STEP:.0f} min/step x {reserved} GPUs (trainer + vLLM server)"
        else:
            hours = tokens / (rate * node.gpus) / 3600 * node.gpus if rate else 0.0
        fits = True
        try:
            check_fit(plan, gpu_bytes, node.id)
        except FitError:
            fits = False
        plans.append(RunPlan(
            node_id=node.id, stage=node.stage, model=model, gpus=node.gpus, plan=plan, gpu_bytes=gpu_bytes,
            fits=fits, tokens=tokens, tokens_per_s_per_gpu=rate, throughput_source=source, gpu_hours=hours,
            disk_bytes=_disk(plan, steps, config), parameters_source=plan.config_source,
            checkpoint_parameters=safetensors_parameters(pin.hub_id, pin.revision)))
    return plans


def summary(plans: list[RunPlan]) -> dict[str, Any]:
    """GPU-hours per stage and the largest per-GPU total per model and stage."""
    hours: dict[str, float] = {}
    peaks: dict[str, float] = {}
    for p in plans:
        hours[p.stage] = hours.get(p.stage, 0.0) + p.gpu_hours
        key = f"{p.model} {p.stage}"
        peaks[key] = max(peaks.get(key, 0.0), p.plan.memory.total / GIB)
    return {"gpu_hours_per_stage": {k: round(v, 1) for k, v in hours.items()},
            "gpu_hours_total": round(sum(hours.values()), 1),
            "peak_gib_per_gpu": {k: round(v, 1) for k, v in peaks.items()}}


def dumps(plans: list[RunPlan]) -> str:
    return json.dumps({"runs": [p.to_json() for p in plans], "summary": summary(plans)}, indent=2)
