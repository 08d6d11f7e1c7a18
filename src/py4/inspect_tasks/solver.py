"""The py4 episode as an Inspect solver: ``run_code`` and ``submit`` as Inspect tools backed by Boa.

The loop keeps ``py4.episodes.driver``'s rules, so that an Inspect run measures what
``py4 eval`` and GRPO measure (docs/episodes.md):

- each turn may use ``min(max_turn_tokens, tokens left)`` new tokens; the turn's tokens
  (the provider's ``usage.output_tokens``, else 4 characters a token) and then its tool
  results' tokens (4 characters a token) count against ``token_budget``; a turn cut off by
  the budget ends the episode as ``truncated`` and its calls never run;
- a turn without a tool call ends the episode (``no_submission`` unless submitted);
- calls run in order through one :class:`~py4.episodes.episode.Episode`, which counts them
  against ``max_tool_calls``, certifies the first ``submit`` and answers later calls with
  the terminal message;
- a malformed call (unknown tool, arguments other than ``{"code": str}``, arguments that
  did not parse) is counted and answered ``error: malformed tool call (…)`` in ``reply``
  mode; in ``ignore`` mode it is counted, kept in the record and dropped from the
  conversation.

Valid calls go through Inspect's ``execute_tools`` (so the log has its tool events and
approval policies apply); the Boa work runs on a thread over the process-wide executor,
so the samples Inspect runs at once share Boa's workers. The episode's record (outcome,
reward, counters, certificate, events) is left in the sample's store under
``STORE_KEY`` for the scorer. An Inspect limit (``--time-limit``, ``--token-limit``,
``--message-limit``) that stops the loop before the episode ends makes it ``truncated``
with end reason ``inspect_limit``.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from inspect_ai.model import (
    ChatMessageAssistant, ChatMessageTool, GenerateConfig, ModelOutput, execute_tools, get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolCall as InspectToolCall
from inspect_ai.tool import ToolCallError, ToolDef

from py4.episodes.config import EpisodeConfig
from py4.episodes.environment import TOOL_SCHEMAS
from py4.episodes.episode import Episode
from py4.episodes.parsing import ToolCall, check_call
from py4.episodes.policy import approximate_tokens
from py4.episodes.pool import shared_executor
from py4.inspect_tasks.dataset import bank_index, problem_id_of
from py4.problems.schema import Problem

STORE_KEY = "py4_episode"


def boa_tools(episode: Episode) -> list[ToolDef]:
    """``run_code`` and ``submit`` for one episode, described exactly as ``TOOL_SCHEMAS`` describes them."""
    async def run_code(code: str) -> str:
        return await anyio.to_thread.run_sync(episode.run_code, code)

    async def submit(code: str) -> str:
        return await anyio.to_thread.run_sync(episode.submit, code)

    functions = {"run_code": run_code, "submit": submit}
    return [ToolDef(functions[s["function"]["name"]], name=s["function"]["name"],
                    description=s["function"]["description"],
                    parameters={"code": s["function"]["parameters"]["properties"]["code"]["description"]})
            for s in TOOL_SCHEMAS]


def problem_for(state: TaskState, bank_version: str, bank_dir: str | None) -> Problem:
    """The sample's problem: by the id the dataset set (user message metadata, else the sample id)."""
    problem_id = problem_id_of(state.messages) or str(state.sample_id)
    index = bank_index(bank_version, bank_dir)
    if problem_id not in index:
        raise KeyError(f"sample {state.sample_id!r}: no problem {problem_id!r} in bank {bank_dir or bank_version}")
    return index[problem_id]


@solver
def boa_episode(episode: dict[str, Any] | None = None, bank_version: str = "v1",
                bank_dir: str | None = None, workers: int | None = None,
                send_enable_thinking: bool = False) -> Solver:
    """Run one ``run_code``/``submit`` episode per sample.

    ``episode``: ``EpisodeConfig`` fields (limits, diagnostics, rewards); ``workers``: Boa
    workers of the shared executor (default one per core); ``send_enable_thinking``: send
    ``chat_template_kwargs.enable_thinking`` in the request body (OpenAI-compatible servers
    of open models: vLLM, ``transformers serve``; other providers may refuse the field).
    """
    config = EpisodeConfig.model_validate(episode or {})

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        del generate  # the loop calls the model itself: each turn's token allowance differs
        problem = problem_for(state, bank_version, bank_dir)
        executor = shared_executor(config.output_cap, workers)
        run = Episode(problem, config, executor)
        tools = boa_tools(run)
        model = get_model()  # the task's (or the eval's) model
        turns: list[dict[str, Any]] = []
        try:
            while not run.ended:
                turns.append(await _turn(state, model, tools, run, config, send_enable_thinking))
        finally:  # an Inspect limit (time, tokens, messages) raised out of the loop: truncated
            run.truncate("inspect_limit")  # (a no-op for an episode that ended)
            state.store.set(STORE_KEY, {**run.summary(), "rules": list(problem.rules), "split": problem.split,
                                        "events": run.events, "turns": turns})
        return state

    return solve


async def _turn(state: TaskState, model: Any, tools: list[ToolDef], run: Episode, config: EpisodeConfig,
                send_enable_thinking: bool) -> dict[str, Any]:
    """One assistant turn and its calls, as ``py4.episodes.driver`` takes one; returns the turn's record."""
    output = await model.generate(state.messages, tools=tools, config=_turn_config(config, run, send_enable_thinking))
    state.output = output
    message = output.message
    calls = [_py4_call(c) for c in message.tool_calls or []]
    if config.malformed_calls == "ignore":  # counted and recorded, never in the conversation
        message = message.model_copy(update={"tool_calls": [
            c for c, p in zip(message.tool_calls or [], calls, strict=True) if not p.malformed] or None})
    state.messages.append(message)
    tokens = _output_tokens(output, calls)
    record = {"text": output.completion, "tokens": tokens, "stop_reason": output.stop_reason,
              "calls": [c.to_json() for c in calls]}
    run.note_tokens(tokens)
    if output.stop_reason in ("max_tokens", "model_length") and run.tokens_left == 0:
        run.truncate("token_budget")  # cut off mid-turn by the budget: its calls never run
    if run.ended:
        return record
    if not calls or (config.malformed_calls == "ignore" and all(c.malformed for c in calls)):
        for call in calls:
            run.record_malformed(call.raw, call.error or "")
        run.finish()
        return record
    answers = []
    for inspect_call, call in zip(output.message.tool_calls or [], calls, strict=True):
        answer = await _execute(state, tools, run, inspect_call, call)
        if answer is not None:
            answers.append(answer)
    run.note_tokens(sum(approximate_tokens(a) for a in answers))
    return record


def _turn_config(config: EpisodeConfig, run: Episode, send_enable_thinking: bool) -> GenerateConfig:
    extra = {"chat_template_kwargs": {"enable_thinking": config.enable_thinking}} if send_enable_thinking else None
    return GenerateConfig(max_tokens=max(1, min(config.max_turn_tokens, run.tokens_left)), extra_body=extra)


def _py4_call(call: InspectToolCall) -> ToolCall:
    """An Inspect tool call checked as py4's parser checks one (``malformed`` with the reason)."""
    raw = json.dumps({"name": call.function, "arguments": call.arguments}, ensure_ascii=False, default=str)
    if call.parse_error:
        return ToolCall(call.function, None, raw, f"arguments are not JSON ({call.parse_error})", call.id)
    return check_call(call.function, call.arguments, raw, call.id)


def _output_tokens(output: ModelOutput, calls: list[ToolCall]) -> int:
    if output.usage is not None and output.usage.output_tokens:
        return int(output.usage.output_tokens)
    return approximate_tokens(output.completion + "".join(c.raw for c in calls))


async def _execute(state: TaskState, tools: list[ToolDef], run: Episode, inspect_call: InspectToolCall,
                   call: ToolCall) -> str | None:
    """One call, in order: a valid one through Inspect's tools, a malformed one through the episode."""
    if call.malformed:
        answer = run.record_malformed(call.raw, call.error or "")
        if answer is not None:
            state.messages.append(ChatMessageTool(content=answer, tool_call_id=inspect_call.id,
                                                  function=inspect_call.function,
                                                  error=ToolCallError("parsing", answer)))
        return answer
    result = await execute_tools([ChatMessageAssistant(content="", tool_calls=[inspect_call])], tools)
    state.messages.extend(result.messages)
    return "".join(m.text for m in result.messages if isinstance(m, ChatMessageTool))
