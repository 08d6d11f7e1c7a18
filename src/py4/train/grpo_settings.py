"""The ``grpo:`` section of a GRPO stage config: the algorithm's settings and vLLM's.

A module of its own, below the GRPO stage (`py4.train.grpo`) and the vLLM pre-flight and engine
(`py4.train.vllm_preflight`, `py4.train.vllm_engine`) that read it, so that they need not import
the stage. The reference's values are the defaults (docs/training.md, the stage table).
"""

from __future__ import annotations

from typing import Literal

import pydantic

from py4.config import StrictModel


class GRPOSettings(StrictModel):
    num_generations: int = 8
    problems_per_step: int = 16
    loss_type: Literal["grpo", "dr_grpo", "dapo", "bnpo", "cispo", "sapo", "luspo", "vespo"] = "dr_grpo"
    """TRL 1.16's GRPOConfig.loss_type values (tests/train/test_closed_sets.py reads them back)."""
    scale_rewards: Literal["group", "batch", "none"] = "none"
    """TRL's reward scaling: per group (its default), per batch, or none (Dr. GRPO)."""
    beta: float = 0.0
    epsilon: float = 0.2
    epsilon_high: float = 0.28
    mask_truncated_completions: bool = False
    temperature: float = 0.7
    """The rollouts' sampling (T = 0.7 in the reference), passed whole to TRL, which sends it to vLLM's
    SamplingParams or to ``generate``; the token limit is ``episode.token_budget``."""
    top_p: float = 1.0
    top_k: int = pydantic.Field(0, ge=-1)
    """0 (or -1): no top-k filter."""
    min_p: float = pydantic.Field(0.0, ge=0.0, le=1.0)
    repetition_penalty: float = pydantic.Field(1.0, gt=0.0)
    max_prompt_length: int = 3072
    """A problem whose prompt (rendered with the tools) is longer stops the run before any weights
    load, naming it: each epoch is a whole pass over the split (``check_prompt_lengths``)."""
    use_vllm: bool = False
    """Generate with vLLM. At campaign scale: server mode (docs/training.md, "GRPO with vLLM")."""
    vllm_mode: Literal["colocate", "server"] = "colocate"
    """TRL's default, colocate: vLLM inside the trainer's processes, its tensor parallelism
    across them (it must divide the world size). server: a ``trl vllm-serve`` process on GPUs
    of its own (``vllm_server_gpus``), reached at ``vllm_server_base_url``."""
    vllm_server_base_url: str | None = None
    """``http://HOST:PORT`` of the ``trl vllm-serve`` server (server mode; required there)."""
    vllm_tensor_parallel_size: int = pydantic.Field(1, ge=1)
    """Colocate: TRL's tensor parallelism over the trainer's processes. Server: the server's
    ``--tensor-parallel-size`` (checked against the running server's world size)."""
    vllm_language_model_only: bool = False
    """Colocate: vLLM's ``language_model_only`` (every modality's encoder off; the episodes are text),
    as ``evaluation.serve.language_model_only`` serves a model. TRL's engine call has no such
    argument: ``py4.train.vllm_engine`` adds it."""
    vllm_kv_cache_memory_bytes: int | None = pydantic.Field(None, gt=0)
    """Colocate: the engine's KV cache in bytes (vLLM's ``kv_cache_memory_bytes``); None: vLLM's
    default (on its CPU build a share of the machine's memory). Added like ``vllm_language_model_only``."""
    vllm_dtype: Literal["bfloat16", "float16", "float32"] | None = None
    """Colocate: the engine's dtype (vLLM's ``dtype``); None: vLLM's ``auto``, the checkpoint's. On a CPU
    the trainer computes in float32, so a bf16 checkpoint's engine would sample from other log-probabilities.
    Added like ``vllm_language_model_only``."""
    vllm_server_gpus: list[int] | None = None
    """Server mode: the node's GPU indices the server runs on (its CUDA_VISIBLE_DEVICES); one
    per tensor-parallel rank. The trainer refuses to start unless its own CUDA_VISIBLE_DEVICES
    is set and shares none of them."""
    vllm_server_check_timeout_s: float = pydantic.Field(60.0, gt=0)
    """How long the pre-flight check waits for each of the server's answers, and for a server
    that is not listening yet to answer ``/health`` (before any weights load). 60 s: on a machine
    at load ~9 a CPU ``trl vllm-serve`` took more than 10 s to answer."""
    batch_tool_calls: bool = True
    """Run each round's Boa calls at once (``batched_tools_trainer``); false: TRL's plain loop,
    one call after another (same rewards and transcripts, slower)."""
    stop_at_step: int | None = None
    """Stop (after checkpointing) at this step: 32 for the first half of the 32 + 32 schedule."""
