"""The evaluation's policies by name: a registry of builders, each with its own config type.

A policy registers with :func:`register_policy` on its builder, naming its config type (a
StrictModel whose ``name`` field is a ``Literal`` of the names it answers to). The eval config's
``policy`` section is :data:`PolicyConfig`, the union of the registered types told apart by
``name``; a name not registered is a config error on ``policy.name`` that lists the registered
ones, and a setting another policy takes is an unknown key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Callable, Literal, Union, get_args

import pydantic

from py4.config import StrictModel
from py4.evaluate.scripted import SOLUTIONS, ScriptedPolicy

DEFAULT_POLICY = "gold"
"""The policy of a section that names none (``py4 eval`` itself insists on a name)."""


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


class PolicySettings(StrictModel):
    """Base of a policy's config type: its ``name`` (a Literal of the names it answers to in the
    subclass) and its settings."""

    name: str

    def problems(self) -> list[str]:
        """What the section lacks for a run (a check at load, before any episode); empty when fine."""
        return []


@dataclass(frozen=True)
class RegisteredPolicy:
    config: type[PolicySettings]
    build: Callable[[Any, SamplingConfig], Any]
    """``build(policy_config, sampling) -> policy`` (``act(requests) -> turns``, ``close()``)."""


REGISTRY: dict[str, RegisteredPolicy] = {}
"""policy name -> its config type and builder, in the order they registered."""


def register_policy(config: type[PolicySettings]) -> Callable[[Callable], Callable]:
    """Register the decorated builder under every name of ``config``'s ``name`` Literal."""
    names = get_args(config.model_fields["name"].annotation)
    if not names or not all(isinstance(n, str) for n in names):
        raise TypeError(f"{config.__name__}.name must be a Literal of policy names")

    def register(build: Callable) -> Callable:
        taken = [n for n in names if n in REGISTRY]
        if taken:
            raise ValueError(f"policy {', '.join(taken)} registered twice")
        REGISTRY.update({n: RegisteredPolicy(config, build) for n in names})
        return build
    return register


def _tokenizer(path: str | None):
    """A local tokenizer folder for counting tokens, or None."""
    if path is None:
        return None
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path, local_files_only=True)


class ScriptedPolicyConfig(PolicySettings):
    """Known answers, no model (``py4.evaluate.scripted``)."""

    name: Literal[tuple(SOLUTIONS)] = DEFAULT_POLICY  # type: ignore[valid-type]
    tokenizer: str | None = None
    """A local tokenizer folder for counting tool-result tokens (else 4 chars/token)."""


@register_policy(ScriptedPolicyConfig)
def _scripted(policy: ScriptedPolicyConfig, sampling: SamplingConfig) -> ScriptedPolicy:
    return ScriptedPolicy(policy.name, tokenizer=_tokenizer(policy.tokenizer))


class LocalPolicyConfig(PolicySettings):
    """A local transformers model folder (``py4.evaluate.local_model``)."""

    name: Literal["local"]
    model: str | None = None
    """The model folder."""
    batch_size: int = 8
    """Sequences per generate() call."""
    device: str = "cpu"

    def problems(self) -> list[str]:
        return [] if self.model else ["policy.name=local needs policy.model (the model folder; --model PATH)"]


@register_policy(LocalPolicyConfig)
def _local(policy: LocalPolicyConfig, sampling: SamplingConfig):
    from py4.evaluate.local_model import LocalModelPolicy

    return LocalModelPolicy(policy.model, temperature=sampling.temperature, top_p=sampling.top_p,
                            top_k=sampling.top_k, min_p=sampling.min_p,
                            repetition_penalty=sampling.repetition_penalty,
                            seed=sampling.seed, batch_size=policy.batch_size, device=policy.device)


class EndpointPolicyConfig(PolicySettings):
    """An OpenAI-compatible chat-completions server (``py4.episodes.endpoint``)."""

    name: Literal["endpoint"]
    model: str | None = None
    """The served model name."""
    endpoint: str | None = None
    """Base URL up to /v1, e.g. http://127.0.0.1:8000/v1."""
    tokenizer: str | None = None
    """A local tokenizer folder for counting tool-result tokens (else 4 chars/token)."""
    concurrency: int = 8
    """Requests in flight at once."""
    retries: int = 4
    request_timeout_s: float = 300.0
    engine: Literal["vllm", "transformers"] = "vllm"
    """The server's engine, which decides the sampling fields a request may carry
    (transformers serve refuses top_k, min_p and repetition_penalty)."""
    family: str | None = None
    """The chat family whose tool-call text to read when calls arrive in ``content``
    (gemma4, glm45; None: ``<tool_call>{json}</tool_call>`` blocks)."""
    weights: str | None = None
    """The local folder the server serves (a model, or a LoRA adapter), when the evaluation knows
    it (a campaign's runner starts the server for it): recorded as the run's model input, and the
    results are logged to the trackers of the run that trained it. The served name alone names
    no training run."""

    def problems(self) -> list[str]:
        if self.endpoint and self.model:
            return []
        return ["policy.name=endpoint needs policy.endpoint (--endpoint URL) and policy.model (--model NAME)"]


@register_policy(EndpointPolicyConfig)
def _endpoint(policy: EndpointPolicyConfig, sampling: SamplingConfig):
    from py4.episodes.endpoint import EndpointPolicy

    return EndpointPolicy(policy.endpoint, policy.model, temperature=sampling.temperature, top_p=sampling.top_p,
                          top_k=sampling.top_k, min_p=sampling.min_p,
                          repetition_penalty=sampling.repetition_penalty, seed=sampling.seed,
                          concurrency=policy.concurrency, retries=policy.retries,
                          timeout_s=policy.request_timeout_s, tokenizer=_tokenizer(policy.tokenizer),
                          family=policy.family, engine=policy.engine)


def _named(value: Any) -> Any:
    """A policy section without a name is the default policy's."""
    return {"name": DEFAULT_POLICY, **value} if isinstance(value, dict) and "name" not in value else value


POLICY_NAMES: tuple[str, ...] = tuple(REGISTRY)
PolicyConfig = Annotated[Union[tuple(dict.fromkeys(p.config for p in REGISTRY.values()))],  # type: ignore[valid-type]
                         pydantic.BeforeValidator(_named), pydantic.Field(discriminator="name")]
"""The eval config's ``policy`` section: one registered config type, chosen by ``name``."""


def check_policy(policy: PolicySettings) -> list[str]:
    """Problems with the policy section, all at once (empty when fine)."""
    return policy.problems()


def build_policy(policy: PolicySettings, sampling: SamplingConfig):
    """The policy object; raises ValueError for an incomplete section (see :func:`check_policy`)."""
    problems = check_policy(policy)
    if problems:
        raise ValueError("; ".join(problems))
    return REGISTRY[policy.name].build(policy, sampling)
