"""Episode settings: limits, Boa options, diagnostics mode and the reward table.

The defaults are the reference campaign's (GRPO Run B-v2), stated once, on the fields below;
evaluation and GRPO share them, so an evaluated episode is the episode a policy trained on. The
token budget covers the whole tool loop, as TRL's ``max_completion_length`` does: the episode
counts the tool calls' and results' tokens itself, given a tokenizer (TRL reports none to an
environment).
"""

from __future__ import annotations

from typing import Literal

import pydantic

from py4.config import StrictModel

OUTCOMES = ("certified", "uncertified", "no_submission", "truncated")
Outcome = Literal["certified", "uncertified", "no_submission", "truncated"]

SYSTEM_PROMPT = (
    "You write Python-4. Test your code with run_code, then submit the final solution with submit."
)


class RewardTable(StrictModel):
    """Reward of each episode outcome."""

    certified: float = 1.0
    uncertified: float = 0.0
    no_submission: float = -0.10
    truncated: float = -0.25

    def of(self, outcome: str) -> float:
        """The reward of ``outcome``; raises ValueError for an unknown outcome."""
        if outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {outcome!r}; expected one of {', '.join(OUTCOMES)}")
        return float(getattr(self, outcome))


class EpisodeConfig(StrictModel):
    """How one episode runs (shared by evaluation and GRPO)."""

    max_tool_calls: int = pydantic.Field(16, ge=1)
    """Tool calls allowed; the call over the limit ends the episode (truncated unless submitted)."""
    token_budget: int = pydantic.Field(10240, ge=1)
    """Tokens for the whole tool loop: assistant turns plus tool results (the prompt is not counted)."""
    max_turn_tokens: int = pydantic.Field(4096, ge=1)
    """At most this many new tokens per assistant turn (also bounded by what is left of the budget)."""
    run_timeout_s: float = pydantic.Field(5.0, gt=0)
    output_cap: int = pydantic.Field(2048, ge=0)
    """Characters kept of a run's stdout and of its stderr."""
    diagnostics: Literal["generic", "verbatim"] = "generic"
    enable_thinking: bool = True
    system_prompt: str = SYSTEM_PROMPT
    malformed_calls: Literal["reply", "ignore"] = "reply"
    """reply: a malformed call counts as a call and gets an error message back; ignore: it
    is counted and kept in the transcript but gets no reply (TRL's behaviour)."""
    rewards: RewardTable = RewardTable()
