"""Policy registry: build a policy from the eval config's ``policy`` section, by name."""

from __future__ import annotations

from typing import Literal

import pydantic

from py4.config import StrictModel
from py4.evaluate.scripted import SOLUTIONS, ScriptedPolicy

MODEL_POLICIES = ("local", "endpoint")
POLICY_NAMES = (*SOLUTIONS, *MODEL_POLICIES)


class PolicyConfig(StrictModel):
    name: Literal["gold", "python3", "migrated", "core-only", "silent", "local", "endpoint"] = "gold"
    model: str | None = None
    """local: the model folder; endpoint: the served model name."""
    endpoint: str | None = None
    """endpoint: base URL up to /v1, e.g. http://127.0.0.1:8000/v1."""
    tokenizer: str | None = None
    """endpoint or scripted: a local tokenizer folder for counting tool-result tokens (else 4 chars/token)."""
    batch_size: int = 8
    """local: sequences per generate() call."""
    device: str = "cpu"
    concurrency: int = 8
    """endpoint: requests in flight at once."""
    retries: int = 4
    request_timeout_s: float = 300.0
    engine: Literal["vllm", "transformers"] = "vllm"
    """endpoint: the server's engine, which decides the sampling fields a request may carry
    (transformers serve refuses top_k, min_p and repetition_penalty)."""
    family: str | None = None
    """endpoint: the chat family whose tool-call text to read when calls arrive in ``content``
    (gemma4, glm45; None: ``<tool_call>{json}</tool_call>`` blocks)."""


class SamplingConfig(StrictModel):
    """The evaluation's one sampling configuration, sent whole to the endpoint or to ``generate``
    (py4.episodes.sampling); the token limit per turn is the episode's budget left."""

    samples: int = 1
    """K: episodes per problem (pass@k for k = 1, 2, 4, ..., K)."""
    temperature: float = 0.7
    top_p: float = 1.0
    top_k: int = pydantic.Field(0, ge=-1)
    """0 (or -1): no top-k filter. Sent explicitly, so the served model's generation_config.json
    (Gemma -it: top_k 64) does not fill it in."""
    min_p: float = pydantic.Field(0.0, ge=0.0, le=1.0)
    repetition_penalty: float = pydantic.Field(1.0, gt=0.0)
    seed: int = 0


def check_policy(policy: PolicyConfig) -> list[str]:
    """Problems with the policy section, all at once (empty when fine)."""
    problems = []
    if policy.name == "local" and not policy.model:
        problems.append("policy.name=local needs policy.model (the model folder; --model PATH)")
    if policy.name == "endpoint" and not (policy.endpoint and policy.model):
        problems.append("policy.name=endpoint needs policy.endpoint (--endpoint URL) and policy.model (--model NAME)")
    return problems


def build_policy(policy: PolicyConfig, sampling: SamplingConfig):
    """The policy object; raises ValueError for an incomplete section (see :func:`check_policy`)."""
    problems = check_policy(policy)
    if problems:
        raise ValueError("; ".join(problems))
    tokenizer = _load_tokenizer(policy.tokenizer) if policy.tokenizer else None
    if policy.name == "local":
        from py4.evaluate.local_model import LocalModelPolicy

        return LocalModelPolicy(policy.model, temperature=sampling.temperature, top_p=sampling.top_p,
                                top_k=sampling.top_k, min_p=sampling.min_p,
                                repetition_penalty=sampling.repetition_penalty,
                                seed=sampling.seed, batch_size=policy.batch_size, device=policy.device)
    if policy.name == "endpoint":
        from py4.episodes.endpoint import EndpointPolicy

        return EndpointPolicy(policy.endpoint, policy.model, temperature=sampling.temperature, top_p=sampling.top_p,
                              top_k=sampling.top_k, min_p=sampling.min_p,
                              repetition_penalty=sampling.repetition_penalty, seed=sampling.seed,
                              concurrency=policy.concurrency, retries=policy.retries,
                              timeout_s=policy.request_timeout_s, tokenizer=tokenizer, family=policy.family,
                              engine=policy.engine)
    return ScriptedPolicy(policy.name, tokenizer=tokenizer)


def _load_tokenizer(path: str):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path, local_files_only=True)
