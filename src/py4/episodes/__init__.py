"""Episodes: the ``run_code``/``submit`` tool loop, limits, outcomes and rewards.

Shared by evaluation (``py4.evaluate``) and GRPO (TRL ``environment_factory``); the
interface is documented at the top of ``docs/episodes.md``.

    from py4.episodes import EpisodeConfig, Py4Environment, environment_factory, run_episodes
"""

from py4.episodes.config import OUTCOMES, SYSTEM_PROMPT, EpisodeConfig, RewardTable
from py4.episodes.driver import EpisodeRun, run_episodes
from py4.episodes.environment import (
    TOOL_SCHEMAS, Py4Environment, dataset_rows, environment_factory, initial_messages, note_completion_lengths,
    problem_from_row,
)
from py4.episodes.episode import TOOL_NAMES, Episode
from py4.episodes.parsing import ParsedTurn, ToolCall, parse_tool_blocks, parse_with_tokenizer
from py4.episodes.policy import Policy, Turn, TurnRequest, approximate_tokens
from py4.episodes.pool import close_shared_executors, shared_executor

__all__ = [
    "OUTCOMES", "SYSTEM_PROMPT", "EpisodeConfig", "RewardTable", "EpisodeRun", "initial_messages",
    "run_episodes", "TOOL_SCHEMAS", "Py4Environment", "dataset_rows", "environment_factory", "note_completion_lengths",
    "problem_from_row",
    "TOOL_NAMES", "Episode", "ParsedTurn", "ToolCall", "parse_tool_blocks", "parse_with_tokenizer",
    "Policy", "Turn", "TurnRequest", "approximate_tokens", "close_shared_executors", "shared_executor",
]
