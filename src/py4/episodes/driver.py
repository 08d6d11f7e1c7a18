"""The episode driver: policy turns, tool calls and Boa, batched across episodes.

Each step asks the policy for one turn of every running episode (one batch), then runs
the tool calls of all those episodes at once on a thread pool over the shared Boa
executor: Boa calls of different episodes run in parallel; the calls of one episode run
in order. An episode stops when it is submitted, truncated (call limit or token budget),
or when a turn has no tool call (``no_submission``).

Tokens: every assistant turn's tokens and every tool result's tokens count against the
budget (the prompt does not), as TRL counts ``max_completion_length`` over the whole
tool loop. A turn cut off by the budget ends the episode as truncated; its calls do not run.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from py4.boa.executor import Executor
from py4.episodes.config import EpisodeConfig
from py4.episodes.environment import TOOL_SCHEMAS, initial_messages
from py4.episodes.episode import Episode
from py4.episodes.parsing import ParsedTurn, ToolCall
from py4.episodes.policy import Policy, Turn, TurnRequest
from py4.episodes.pool import shared_executor
from py4.problems.schema import Problem


@dataclass
class EpisodeRun:
    """A running episode in the driver: its conversation and its state."""

    problem: Problem
    sample: int
    episode: Episode
    messages: list[dict[str, Any]]
    turns: list[dict[str, Any]] = field(default_factory=list)
    wall_s: float = 0.0
    pending: list[ToolCall] = field(default_factory=list)  # the last turn's calls, to execute

    @property
    def key(self) -> str:
        return f"{self.problem.id}#{self.sample}"

    def record(self) -> dict[str, Any]:
        """The transcript line: outcome, counters, conversation, raw turns, tool events."""
        return {**self.episode.summary(), "sample": self.sample, "split": self.problem.split,
                "rules": list(self.problem.rules), "messages": self.messages, "turns": self.turns,
                "events": self.episode.events, "wall_s": round(self.wall_s, 6)}


def run_episodes(problems: Iterable[Problem], policy: Policy, config: EpisodeConfig | None = None, *,
                 samples: int = 1, executor: Executor | None = None,
                 on_episode_end: Callable[[EpisodeRun], None] | None = None) -> list[EpisodeRun]:
    """Run ``samples`` episodes of every problem with ``policy``; results in input order.

    ``executor`` defaults to the process-wide shared one. ``on_episode_end`` is called
    once per finished episode (progress bars). Raises whatever the policy raises.
    """
    config = config or EpisodeConfig()
    executor = executor or shared_executor(config.output_cap)
    runs = [EpisodeRun(p, s, Episode(p, config, executor), initial_messages(p, config))
            for p in problems for s in range(samples)]
    active = list(runs)
    with ThreadPoolExecutor(max_workers=max(2, 2 * executor.workers)) as pool:
        turn_index = 0
        while active:
            started = time.perf_counter()
            requests = [_request(run, config, turn_index) for run in active]
            turns = policy.act(requests)
            if len(turns) != len(requests):
                raise RuntimeError(f"policy {policy.name!r} answered {len(turns)} turns for {len(requests)} requests")
            to_execute = [run for run, turn in zip(active, turns, strict=True) if _take_turn(run, turn, config)]
            list(pool.map(lambda run: _execute_calls(run, policy), to_execute))
            step_s = time.perf_counter() - started
            still = []
            for run in active:
                run.wall_s += step_s
                if not run.episode.ended:
                    still.append(run)
                elif on_episode_end is not None:
                    on_episode_end(run)
            active = still
            turn_index += 1
    return runs


def _request(run: EpisodeRun, config: EpisodeConfig, turn: int) -> TurnRequest:
    budget = min(config.max_turn_tokens, run.episode.tokens_left)
    return TurnRequest(run.key, run.problem, run.sample, turn, run.messages, TOOL_SCHEMAS,
                       max(1, budget), config.enable_thinking)


def _take_turn(run: EpisodeRun, turn: Turn, config: EpisodeConfig) -> bool:
    """Record a turn; True when it has calls to execute (else the episode is ended here)."""
    episode = run.episode
    run.messages.append(_assistant_message(turn.parsed, len(run.turns) + 1))
    run.turns.append({"text": turn.text, "tokens": turn.tokens, "finished": turn.finished,
                      "calls": [c.to_json() for c in turn.parsed.calls], **turn.extra})
    episode.note_tokens(turn.tokens)
    if not turn.finished and episode.tokens_left == 0:
        episode.truncate("token_budget")  # cut off mid-turn by the budget: its calls never ran
    if episode.ended:
        return False
    calls = turn.parsed.calls
    if not calls or (config.malformed_calls == "ignore" and not turn.parsed.valid_calls):
        for call in calls:  # counted and kept, as TRL would not see them
            episode.record_malformed(call.raw, call.error or "")
        episode.finish()
        return False
    run.pending = list(calls)
    return True


def _assistant_message(parsed: ParsedTurn, turn_number: int) -> dict[str, Any]:
    """The assistant message for the history: valid calls as tool_calls, malformed ones kept as text."""
    content = parsed.content
    for call in parsed.calls:
        if call.malformed:
            content = f"{content}\n<tool_call>{call.raw}</tool_call>".strip()
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if parsed.reasoning:
        message["reasoning_content"] = parsed.reasoning
    tool_calls = []
    for i, call in enumerate(parsed.calls):
        call.id = call.id or f"call_{turn_number}_{i}"
        if not call.malformed:
            tool_calls.append({"id": call.id, "type": "function",
                               "function": {"name": call.name, "arguments": call.arguments}})
    if tool_calls:
        message["tool_calls"] = tool_calls
    return message


def _execute_calls(run: EpisodeRun, policy: Policy) -> None:
    """Run one turn's calls in order; append the tool messages and count their tokens."""
    episode = run.episode
    calls, run.pending = run.pending, []
    replies: list[tuple[ToolCall, str]] = []
    for call in calls:
        if call.malformed:
            answer = episode.record_malformed(call.raw, call.error or "")
            if answer is not None:
                replies.append((call, answer))
        else:
            replies.append((call, episode.call(call.name, call.arguments)))
    for call, answer in replies:
        run.messages.append({"role": "tool", "name": call.name or "invalid_call",
                             "tool_call_id": call.id, "content": answer})
    episode.note_tokens(sum(policy.count_tokens(answer) for _, answer in replies))
