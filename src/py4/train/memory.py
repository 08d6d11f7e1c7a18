"""Bytes a training run holds per GPU, and on rank 0's host, from its shapes and settings.

Two parts of different standing:

- **State bytes** (weights, gradients, optimizer state) are exact for the optimizers this module
  knows (:data:`STATE_RULES`): they follow what torch and torchao allocate per parameter tensor
  (``tests/train/test_memory_state_bytes.py`` compares them with the bytes a real optimizer holds
  after a step on CPU). Under FSDP2 each rank holds ``ceil(numel / gpus)`` elements of a tensor.
- **Peaks** (gathered blocks, activations, logits and the loss) are estimates with their rule
  written next to them; :class:`MemoryEstimate` keeps each figure apart so a measurement (the GPU
  check's, ``benchmarks/gpu/measured.json``) can replace one without touching the rest.

Precision under FSDP2 (accelerate 1.16, ``fsdp_utils.fsdp2_prepare_model`` lines 800-806): with
``mixed_precision`` other than ``no`` every trainable parameter is upcast to fp32 before sharding,
and the sharded gradients and optimizer state follow that dtype. A stage config's
``optimisation.master_weights: bf16`` keeps them in the checkpoint's bf16, as axolotl's FSDP2
path does (:mod:`py4.train.fsdp`; docs/training.md, "GLM-4.5-Air full fine-tuning on 8 H200s").
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Iterable, Literal

__all__ = ["GIB", "GPU_TYPES", "GpuType", "STATE_RULES", "optimizer_state_bytes", "RunShape", "MemoryEstimate",
           "estimate", "known_optimizer"]

GIB = 1024 ** 3


@dataclass(frozen=True)
class GpuType:
    name: str
    usable_bytes: int
    peak_bf16_flops: float
    source: str


GPU_TYPES = {
    "H200": GpuType(
        "H200", 139 * GIB, 989.4e12,
        "139 GiB usable of the 141 GB (143,771 MiB) an H200 reports: the project's GPU machine description "
        "('one NVIDIA H200 GPU (about 139 GiB of GPU memory)', .library/device/README.md); 989.4 TFLOP/s dense "
        "BF16 tensor-core peak (NVIDIA H200 datasheet, the H100 SXM's compute). benchmarks/gpu/measured.json's "
        "gpu_total_bytes replaces the memory figure when present"),
}
"""GPU types the plan knows: memory a run may use and the dense bf16 peak its throughput assumes."""

# Bytes per element of each dtype the plan names.
DTYPE_BYTES = {"fp32": 4, "bf16": 2}

STATE_RULES = {
    "adamw_torch": "step: one fp32 scalar per tensor; exp_avg, exp_avg_sq: zeros_like(param)",
    "adamw_torch_fused": "as adamw_torch (torch.optim.AdamW fused=True)",
    "adamw_torch_8bit": ("torchao AdamW8bit: step: fp32 scalar per tensor; exp_avg, exp_avg_sq: uint8 codes "
                         "+ one fp32 scale per 256 values + a 256-entry fp32 qmap, for a local shard of >= 4096 "
                         "values divisible by 256; zeros_like(param) otherwise"),
    "adamw_torch_4bit": ("torchao AdamW4bit: step fp32 scalar; each moment packs 2 values per byte + one "
                         "fp32 scale per 128 values + a 16-entry fp32 qmap (>= 4096 values, divisible by 128)"),
    "sgd": "no state (momentum 0, the Trainer's default)",
    "adagrad": "step: fp32 scalar per tensor; sum: full_like(param)",
    "rmsprop": "step: fp32 scalar per tensor; square_avg: zeros_like(param) (momentum 0, not centered)",
}
"""Optimizer state per parameter tensor, as torch 2.13 and torchao 0.18 allocate it."""


def known_optimizer(optim: str) -> bool:
    return optim in STATE_RULES


def _tensor_state_bytes(optim: str, numel: int, param_bytes: int) -> int:
    if optim in ("adamw_torch", "adamw_torch_fused"):
        return 4 + 2 * numel * param_bytes
    if optim in ("adamw_torch_8bit", "adamw_torch_4bit"):
        block, per_value, qmap = (256, 1.0, 256) if optim == "adamw_torch_8bit" else (128, 0.5, 16)
        if numel >= 4096 and numel % block == 0:
            moment = int(numel * per_value) + (numel // block) * 4 + qmap * 4
        else:
            moment = numel * param_bytes
        return 4 + 2 * moment
    if optim == "sgd":
        return 0
    if optim in ("adagrad", "rmsprop"):
        return 4 + numel * param_bytes
    raise ValueError(f"no state rule for optimizer {optim!r} (known: {', '.join(STATE_RULES)})")


def optimizer_state_bytes(optim: str, numels: Iterable[int], param_bytes: int) -> int:
    """Bytes of optimizer state for trainable tensors of these sizes (each rank's shard under FSDP2)."""
    return sum(_tensor_state_bytes(optim, n, param_bytes) for n in numels)


@dataclass(frozen=True)
class RunShape:
    """What a training run does to a model: the settings its memory depends on."""

    gpus: int
    micro_batch: int
    seq_len: int
    optim: str
    trainable: tuple[int, ...]
    """numel of each trainable tensor (the whole model's for full fine-tuning, the adapter's for LoRA)."""
    frozen_parameters: int
    master_weights: Literal["fp32", "bf16"]
    """dtype of the trainable parameters (and so of their gradients and optimizer state)."""
    fsdp: bool
    checkpointing: bool
    loss: Literal["causal_lm", "grpo"] = "causal_lm"
    lora: bool = False
    offload: bool = False
    """FSDP2 CPU offload (``fsdp_offload_params``): sharded parameters, gradients and optimizer state
    live in host RAM (every rank's shard, all on the node), not on the GPU."""


@dataclass(frozen=True)
class MemoryEstimate:
    """Per-GPU bytes of one run, by part; ``total`` is their sum."""

    weights: int
    gradients: int
    optimizer: int
    gathered: int
    activations: int
    logits: int
    reserve: int
    host_ram_rank0: int

    @property
    def state(self) -> int:
        return self.weights + self.gradients + self.optimizer

    @property
    def total(self) -> int:
        return self.state + self.gathered + self.activations + self.logits + self.reserve

    def to_json(self) -> dict[str, int]:
        return {**asdict(self), "state": self.state, "total": self.total}


RESERVE_BYTES = 4 * GIB
"""CUDA context, NCCL buffers and allocator slack per GPU: an allowance, not a measurement."""
LOGIT_BYTES = {"causal_lm": 12, "grpo": 6}
"""Bytes per logit element at the loss's peak. causal_lm (transformers' ForCausalLMLoss): the bf16
logits (2) + their fp32 copy (4) + cross-entropy's saved fp32 log-softmax (4) + the fp32 gradient
arriving while the copy is alive (2 of 4 overlap) ~ 12. grpo (TRL's per-token log-probs): the bf16
logits (2) + the temperature-scaled copy (2) + its bf16 gradient (2). A final logit softcap
(Gemma-4) keeps one more bf16 tensor (tanh's output): +2."""


def estimate(shape, run: RunShape, logits_bytes_per_token: float | None = None,
             block_activation_bytes_per_token: float | None = None) -> MemoryEstimate:
    """Per-GPU bytes of ``run`` on a model of ``shape`` (a :class:`py4.train.model_shape.ModelShape`).

    ``logits_bytes_per_token`` and ``block_activation_bytes_per_token``, when measured, replace
    the rules for the logits peak and for one decoder layer's activations.
    """
    n = run.gpus if run.fsdp else 1
    master = DTYPE_BYTES[run.master_weights]
    local = [math.ceil(numel / n) for numel in run.trainable]
    weights = sum(local) * master + math.ceil(run.frozen_parameters / n) * 2
    gradients = sum(local) * master
    optimizer = optimizer_state_bytes(run.optim, local, master)
    tokens = run.micro_batch * run.seq_len
    if run.fsdp:
        # FSDP2: the layer running and the one prefetched, gathered in bf16; the root module
        # (embeddings, head, encoders) stays gathered; full fine-tuning also holds one layer's
        # unsharded bf16 gradients before their reduce-scatter.
        gathered = 2 * shape.largest_block * 2 + shape.root * 2 + (0 if run.lora else shape.largest_block * 2)
    else:
        gathered = 0
    per_layer = (block_activation_bytes_per_token if block_activation_bytes_per_token is not None
                 else 2 * (8 * shape.hidden + 3 * shape.ffn_active))
    if run.checkpointing:  # each layer's input kept, one layer recomputed at a time
        activations = shape.layers * tokens * shape.hidden * 2 + int(tokens * per_layer)
    else:
        activations = int(shape.layers * tokens * per_layer)
    per_logit = LOGIT_BYTES[run.loss] + (2 if shape.logit_softcap else 0)
    logits = int(tokens * (logits_bytes_per_token if logits_bytes_per_token is not None
                           else shape.vocab * per_logit))
    # Rank 0's host: with rank-0-only loading it reads the checkpoint (bf16) and accelerate's
    # upcast turns each trainable tensor into its master dtype there before sharding; the final
    # save gathers the model back to bf16 on rank 0 (py4.train.fsdp.gathered_state_dict).
    loaded = sum(run.trainable) * max(master, 2) + run.frozen_parameters * 2
    host = max(loaded, shape.parameters * 2)
    if run.offload:  # every rank's shard of the state sits in the node's host RAM instead
        host += (weights + gradients + optimizer) * n
        weights = gradients = optimizer = 0
    return MemoryEstimate(weights=weights, gradients=gradients, optimizer=optimizer, gathered=gathered,
                          activations=activations, logits=logits, reserve=RESERVE_BYTES, host_ram_rank0=host)
