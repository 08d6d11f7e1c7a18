"""One sampling configuration, sent whole to every engine and recorded as it was used.

A stage that samples (evaluation episodes, GRPO rollouts, EFT replay answers) states temperature,
top_p, top_k, min_p and repetition penalty in its config (with its token limit and seed), and every
engine gets all of them explicitly:

- a vLLM (or ``transformers serve``) OpenAI server: ``top_k``, ``min_p`` and
  ``repetition_penalty`` go in the request body beside ``temperature``/``top_p``/``seed``
  (vLLM's extra sampling fields); a field left out is filled from the served model's
  ``generation_config.json`` (Gemma -it ships ``top_k: 64``, ``top_p: 0.95``);
- ``transformers`` ``generate``: a GenerationConfig with every sampling field set
  (:func:`generation_config`): transformers 5 fills only the fields left ``None`` from the model's
  ``generation_config.json``, so none is left ``None``;
- TRL's GRPO rollouts: GRPOConfig's ``temperature``, ``top_p``, ``top_k``, ``min_p``,
  ``repetition_penalty`` (TRL passes them to vLLM's SamplingParams and to ``generate``).

``top_k: 0`` and ``min_p: 0.0`` turn those filters off in vLLM (``top_k`` 0 or -1: all tokens)
and in transformers (no top-k warper for 0; min-p 0 keeps every token).
"""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["SAMPLING_FIELDS", "SamplingFields", "openai_sampling", "generation_config", "effective_sampling"]

SAMPLING_FIELDS = ("temperature", "top_p", "top_k", "min_p", "repetition_penalty")


class SamplingFields(Protocol):
    temperature: float
    top_p: float
    top_k: int
    min_p: float
    repetition_penalty: float


def openai_sampling(sampling: SamplingFields) -> dict[str, Any]:
    """The sampling fields of a chat-completions request body (``seed`` and ``max_tokens`` are per request)."""
    return {name: getattr(sampling, name) for name in SAMPLING_FIELDS}


def generation_config(sampling: SamplingFields, max_new_tokens: int, **extra: Any):
    """A ``transformers.GenerationConfig`` with every field that shapes sampling set, so that
    ``generate`` takes none from the model's ``generation_config.json``; ``temperature`` 0 is greedy."""
    from transformers import GenerationConfig

    sample = sampling.temperature > 0
    fields: dict[str, Any] = {
        "do_sample": sample, "max_new_tokens": max_new_tokens, "num_beams": 1,
        "temperature": sampling.temperature if sample else 1.0, "top_p": sampling.top_p,
        "top_k": sampling.top_k, "min_p": sampling.min_p, "repetition_penalty": sampling.repetition_penalty,
        "typical_p": 1.0, "epsilon_cutoff": 0.0, "eta_cutoff": 0.0, "no_repeat_ngram_size": 0,
        "length_penalty": 1.0,
    }
    return GenerationConfig(**fields, **extra)


def effective_sampling(sampling: SamplingFields, *, max_tokens: int | None, seed: Any, engine: str) -> dict[str, Any]:
    """What a manifest records: the parameters every request was sent with, and the engine."""
    return {**openai_sampling(sampling), "max_tokens": max_tokens, "seed": seed, "engine": engine}
