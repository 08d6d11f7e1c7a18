"""Bank problems as Inspect samples: the same problems, in the same order, as ``py4 eval``.

A sample's input is the episode's opening conversation (the system prompt, then the
problem's prompt, as ``py4.episodes.initial_messages`` makes it); its id is the problem
id. The user message carries the problem id in its Inspect ``metadata`` (never sent to a
model) so that the scripted provider (``py4/gold``, …) knows which problem it answers
even when two problems share a prompt.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser

from py4.episodes.config import EpisodeConfig
from py4.episodes.environment import initial_messages
from py4.problems.schema import Problem

PROBLEM_ID_KEY = "py4_problem_id"
_bank_lock = threading.Lock()


def bank_index(bank_version: str = "v1", bank_dir: str | None = None) -> dict[str, Problem]:
    """The bank's problems by id, loaded (and its hash checked) once per process and bank."""
    with _bank_lock:
        return _bank_index(bank_version, bank_dir)


@functools.lru_cache(maxsize=4)
def _bank_index(bank_version: str, bank_dir: str | None) -> dict[str, Problem]:
    from py4.problems.bank import load_bank

    return {p.id: p for p in load_bank(bank_version, bank_dir)}


def problem_sample(problem: Problem, config: EpisodeConfig) -> Sample:
    """One problem as a sample (metadata: ``problem_id``, ``split``, ``rules``, ``family``, ``difficulty``)."""
    system, user = initial_messages(problem, config)
    return Sample(
        id=problem.id,
        input=[ChatMessageSystem(content=system["content"]),
               ChatMessageUser(content=user["content"], metadata={PROBLEM_ID_KEY: problem.id})],
        target="",  # the tests never leave Boa's trusted side; the scorer looks the problem up
        metadata={"problem_id": problem.id, "split": problem.split, "rules": list(problem.rules),
                  "family": problem.family, "difficulty": problem.difficulty},
    )


def split_dataset(split: str, *, limit: int | None = None, limit_seed: int = 0, bank_version: str = "v1",
                  bank_dir: str | None = None, config: EpisodeConfig | None = None
                  ) -> MemoryDataset:
    """The split's problems: all, or the seeded sample of ``limit`` that ``py4 eval --limit`` takes.

    Raises ValueError for an unknown or empty split, BankError for a missing or corrupt bank.
    """
    from py4.evaluate.harness import select_problems
    from py4.problems.schema import SPLITS

    if split not in SPLITS:
        raise ValueError(f"split: unknown split {split!r}; expected one of {', '.join(SPLITS)}")
    problems = select_problems(list(bank_index(bank_version, bank_dir).values()), split, limit, limit_seed)
    if not problems:
        where = bank_dir or f"the shipped bank {bank_version}"
        raise ValueError(f"split {split!r} has no problems in {where}")
    config = config or EpisodeConfig()
    dataset = MemoryDataset([problem_sample(p, config) for p in problems], name=f"py4-{bank_version}-{split}")
    return dataset


def problem_id_of(messages: list[Any]) -> str | None:
    """The problem id the dataset put on the user message (None for a conversation it did not make)."""
    for message in messages:
        if getattr(message, "role", None) == "user" and message.metadata and PROBLEM_ID_KEY in message.metadata:
            return str(message.metadata[PROBLEM_ID_KEY])
    return None
