"""Inspect tasks, one per bank split: ``inspect eval py4/python4_heldout --model …``.

| task | split |
|---|---|
| ``py4/python4_heldin`` | ``test_heldin`` |
| ``py4/python4_heldout`` | ``test_heldout`` |
| ``py4/python4_grpo`` | ``grpo`` |
| ``py4/python4_eft_pool`` | ``eft_pool`` |
| ``py4/python4_eft_large`` | ``eft_large`` |
| ``py4/python4`` | any (``-T split=imported -T bank_dir=…``) |

Parameters (``-T name=value``): ``limit`` (the seeded sample of N problems that
``py4 eval --limit N`` takes; Inspect's own ``--limit`` takes the first N of the split,
sorted by id), ``limit_seed``, ``samples`` (episodes per problem: Inspect epochs, reduced
by mean and pass@k), ``diagnostics`` (``generic`` or ``verbatim``), ``max_tool_calls``,
``token_budget``, ``max_turn_tokens``, ``enable_thinking`` (sent as
``chat_template_kwargs`` to OpenAI-compatible servers when set), ``bank_version``,
``bank_dir``, ``workers`` (Boa workers). Defaults are ``py4 eval``'s (``EpisodeConfig``).
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.scorer import pass_at

from py4.episodes.config import EpisodeConfig
from py4.evaluate.metrics import ks_for
from py4.inspect_tasks.dataset import split_dataset
from py4.inspect_tasks.scorer import boa_certification
from py4.inspect_tasks.solver import boa_episode

TASK_SPLITS = {"python4_heldin": "test_heldin", "python4_heldout": "test_heldout", "python4_grpo": "grpo",
               "python4_eft_pool": "eft_pool", "python4_eft_large": "eft_large"}


def python4_task(split: str, *, limit: int | None = None, limit_seed: int = 0, samples: int = 1,
                 diagnostics: str = "generic", max_tool_calls: int | None = None, token_budget: int | None = None,
                 max_turn_tokens: int | None = None, enable_thinking: bool | None = None,
                 bank_version: str = "v1", bank_dir: str | None = None, workers: int | None = None,
                 name: str | None = None) -> Task:
    """The Inspect task of ``split``; raises ValueError (pydantic's) for a bad setting."""
    fields: dict[str, Any] = {"diagnostics": diagnostics, "max_tool_calls": max_tool_calls,
                              "token_budget": token_budget, "max_turn_tokens": max_turn_tokens,
                              "enable_thinking": enable_thinking}
    episode = EpisodeConfig.model_validate({k: v for k, v in fields.items() if v is not None})
    if samples < 1:
        raise ValueError(f"samples must be >= 1 (got {samples})")
    reducers: list[Any] = ["mean", *[pass_at(k) for k in ks_for(samples) if k > 1]]
    return Task(
        dataset=split_dataset(split, limit=limit, limit_seed=limit_seed, bank_version=bank_version,
                              bank_dir=bank_dir, config=episode),
        solver=boa_episode(episode=episode.model_dump(mode="json"), bank_version=bank_version, bank_dir=bank_dir,
                           workers=workers, send_enable_thinking=enable_thinking is not None),
        scorer=boa_certification(rewards=episode.rewards.model_dump(), bank_version=bank_version,
                                 bank_dir=bank_dir, diagnostics=episode.diagnostics),
        epochs=Epochs(samples, reducers),
        name=name,
        metadata={"split": split, "bank_version": bank_version, "bank_dir": bank_dir},
    )


@task
def python4(split: str = "test_heldout", limit: int | None = None, limit_seed: int = 0, samples: int = 1,
            diagnostics: str = "generic", max_tool_calls: int | None = None, token_budget: int | None = None,
            max_turn_tokens: int | None = None, enable_thinking: bool | None = None, bank_version: str = "v1",
            bank_dir: str | None = None, workers: int | None = None) -> Task:
    """Python-4 problems of any bank split, solved with Boa's run_code/submit tools."""
    return python4_task(split, limit=limit, limit_seed=limit_seed, samples=samples, diagnostics=diagnostics,
                        max_tool_calls=max_tool_calls, token_budget=token_budget, max_turn_tokens=max_turn_tokens,
                        enable_thinking=enable_thinking, bank_version=bank_version, bank_dir=bank_dir,
                        workers=workers)


@task
def python4_heldin(limit: int | None = None, limit_seed: int = 0, samples: int = 1, diagnostics: str = "generic",
                   max_tool_calls: int | None = None, token_budget: int | None = None,
                   max_turn_tokens: int | None = None, enable_thinking: bool | None = None,
                   bank_version: str = "v1", bank_dir: str | None = None, workers: int | None = None) -> Task:
    """Held-in test problems (rules the training documents teach)."""
    return python4_task("test_heldin", **locals())


@task
def python4_heldout(limit: int | None = None, limit_seed: int = 0, samples: int = 1, diagnostics: str = "generic",
                    max_tool_calls: int | None = None, token_budget: int | None = None,
                    max_turn_tokens: int | None = None, enable_thinking: bool | None = None,
                    bank_version: str = "v1", bank_dir: str | None = None, workers: int | None = None) -> Task:
    """Held-out test problems (rules kept out of the training documents)."""
    return python4_task("test_heldout", **locals())


@task
def python4_grpo(limit: int | None = None, limit_seed: int = 0, samples: int = 1, diagnostics: str = "generic",
                 max_tool_calls: int | None = None, token_budget: int | None = None,
                 max_turn_tokens: int | None = None, enable_thinking: bool | None = None,
                 bank_version: str = "v1", bank_dir: str | None = None, workers: int | None = None) -> Task:
    """The GRPO split's problems."""
    return python4_task("grpo", **locals())


@task
def python4_eft_pool(limit: int | None = None, limit_seed: int = 0, samples: int = 1, diagnostics: str = "generic",
                     max_tool_calls: int | None = None, token_budget: int | None = None,
                     max_turn_tokens: int | None = None, enable_thinking: bool | None = None,
                     bank_version: str = "v1", bank_dir: str | None = None, workers: int | None = None) -> Task:
    """The EFT pool's problems."""
    return python4_task("eft_pool", **locals())


@task
def python4_eft_large(limit: int | None = None, limit_seed: int = 0, samples: int = 1, diagnostics: str = "generic",
                      max_tool_calls: int | None = None, token_budget: int | None = None,
                      max_turn_tokens: int | None = None, enable_thinking: bool | None = None,
                      bank_version: str = "v1", bank_dir: str | None = None, workers: int | None = None) -> Task:
    """The large EFT split's problems."""
    return python4_task("eft_large", **locals())
