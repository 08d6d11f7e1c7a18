"""Engine arguments for TRL's colocated vLLM beyond the ones TRL passes.

TRL 1.16 builds the colocated engine itself (``trl/generation/vllm_generation.py``,
``VLLMGeneration._init_vllm``: ``LLM(model=model.name_or_path, tensor_parallel_size=…,
gpu_memory_utilization=…, model_impl=…, …)``) from a fixed list of ``GRPOConfig`` fields, with no
pass-through for any other engine argument. Two are needed to build an engine the way py4's
evaluation servers build theirs (``py4.evaluate.serve``):

- ``grpo.vllm_language_model_only``: a multimodal checkpoint (Gemma-4) built with every modality's
  encoder off (the server's ``--language-model-only``), as ``evaluation.serve.language_model_only``
  serves it: the episodes are text;
- ``grpo.vllm_kv_cache_memory_bytes``: the KV cache's size (the server's ``--kv-cache-memory-bytes``;
  vLLM's CPU build otherwise takes a share of the machine's memory).

And ``grpo.vllm_dtype``: the engine's dtype (vLLM's ``dtype``; TRL's call leaves vLLM's ``auto``, the
checkpoint's), for a trainer that computes in another one (on a CPU the trainer runs in float32,
a bf16 checkpoint's engine in bf16, and every rollout's log-probabilities differ from the trainer's).

:func:`colocate_engine_arguments` adds them to that one ``LLM(...)`` call while TRL's trainer is
constructed: it replaces the name ``LLM`` in TRL's module for the duration of the ``with`` block
and puts it back after. TRL's call is otherwise unchanged (every argument TRL passes is TRL's; one
py4 also passes is refused rather than overridden), and a TRL release without that module-level
name fails loudly instead of building an engine without the arguments. With neither setting
(every campaign config) nothing is replaced.

A colocated engine in a process no launcher started rendezvouses with itself through
``MASTER_PORT``; TRL picks 29500 first when that port looks free, which is also the port every
``accelerate launch`` uses by default, so on a machine running other launches the engine's start
can lose the port to one of them (``EADDRINUSE``). :func:`own_rendezvous_port` gives such a process
a port the kernel assigned instead; a launched process keeps its launcher's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from py4.train.errors import TrainingError

if TYPE_CHECKING:
    from py4.train.grpo_settings import GRPOSettings

__all__ = ["colocated_engine", "colocate_engine_kwargs", "colocate_engine_arguments", "own_rendezvous_port"]

TRL_MODULE = "trl.generation.vllm_generation"


@contextlib.contextmanager
def colocated_engine(g: GRPOSettings, environ: Any = None) -> Iterator[list[dict[str, Any]]]:
    """Around the construction of TRL's trainer, which builds the colocated engine: this process's
    own rendezvous port (:func:`own_rendezvous_port`) and py4's engine keywords
    (:func:`colocate_engine_arguments`). Yields the keywords of each engine built; a run without a
    colocated engine (no vLLM, or a vLLM server) changes nothing and yields an empty list."""
    if not (g.use_vllm and g.vllm_mode == "colocate"):
        yield []
        return
    own_rendezvous_port(environ)
    with colocate_engine_arguments(colocate_engine_kwargs(g)) as built:
        yield built


def colocate_engine_kwargs(g: GRPOSettings) -> dict[str, Any]:
    """The keywords py4 adds to a colocated engine's ``LLM(...)`` (empty: TRL's call as it is)."""
    kwargs: dict[str, Any] = {}
    if g.vllm_language_model_only:
        kwargs["language_model_only"] = True
    if g.vllm_kv_cache_memory_bytes is not None:
        kwargs["kv_cache_memory_bytes"] = g.vllm_kv_cache_memory_bytes
    if g.vllm_dtype is not None:
        kwargs["dtype"] = g.vllm_dtype
    return kwargs


@contextlib.contextmanager
def colocate_engine_arguments(extra: dict[str, Any]) -> Iterator[list[dict[str, Any]]]:
    """While open, TRL's colocated engine is built with ``extra`` added to its ``LLM(...)`` keywords.

    Yields a list that receives the keywords of each engine built (the manifest's record). Raises
    TrainingError when TRL's module has no ``LLM`` to wrap, or when TRL already passes one of ``extra``.
    """
    built: list[dict[str, Any]] = []
    if not extra:
        yield built
        return
    import importlib

    module = importlib.import_module(TRL_MODULE)
    original = getattr(module, "LLM", None)
    if original is None:
        raise TrainingError(f"{TRL_MODULE} has no LLM (vLLM not importable, or a TRL whose colocated engine is not "
                            f"built there): cannot pass {sorted(extra)} to the colocated vLLM engine")

    def build(*args: Any, **kwargs: Any) -> Any:
        clash = sorted(set(kwargs) & set(extra))
        if clash:
            raise TrainingError(f"TRL's colocated LLM(...) already sets {clash}; py4 would override it")
        built.append(dict(extra))
        return original(*args, **kwargs, **extra)

    module.LLM = build
    try:
        yield built
    finally:
        module.LLM = original


def own_rendezvous_port(environ: Any = None) -> str | None:
    """Set ``MASTER_PORT`` to a port the kernel assigns, for a process no launcher started (no
    ``MASTER_PORT``, no ``WORLD_SIZE``); returns the port set, or None when the environment has one."""
    import os
    import socket

    environ = os.environ if environ is None else environ
    if environ.get("MASTER_PORT") or environ.get("WORLD_SIZE"):
        return None
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = str(sock.getsockname()[1])
    environ["MASTER_PORT"] = port
    environ.setdefault("MASTER_ADDR", "127.0.0.1")
    return port
