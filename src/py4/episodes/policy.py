"""What the episode driver asks of a policy: one assistant turn per episode, in batches.

A policy gets the conversation so far (chat messages in the transformers/OpenAI format,
tool calls with ``arguments`` as dicts) and the tool schemas, and answers with the raw
text it produced, the parsed turn, and how many tokens it spent. Backends: scripted and a
local transformers model in ``py4.evaluate``; the OpenAI-compatible endpoint in
:mod:`py4.episodes.endpoint` (training's EFT replay and the probes use it too).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol

from py4.episodes.parsing import ParsedTurn
from py4.problems.schema import Problem


@dataclass
class TurnRequest:
    """One episode's request for its next assistant turn."""

    key: str  # "problem_id#sample"
    problem: Problem
    sample: int
    turn: int
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    max_new_tokens: int
    enable_thinking: bool = True


@dataclass
class Turn:
    """A policy's answer: the text as generated, its parse, and its token count."""

    text: str
    parsed: ParsedTurn
    tokens: int
    finished: bool = True
    """False when generation stopped at ``max_new_tokens`` rather than at the end of the turn."""
    extra: dict[str, Any] = field(default_factory=dict)


class Policy(Protocol):
    """The driver's view of a policy (see ``py4.evaluate.policies``)."""

    name: str

    def act(self, requests: list[TurnRequest]) -> list[Turn]:
        """One turn per request, in order."""

    def count_tokens(self, text: str) -> int:
        """Tokens of a tool result, as this policy's tokenizer would count them."""

    def close(self) -> None:
        """Release models, clients, threads."""


def approximate_tokens(text: str) -> int:
    """A tokenizer-free estimate (4 characters a token) for policies that have no tokenizer."""
    return math.ceil(len(text) / 4)
