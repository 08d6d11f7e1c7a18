"""Tool batching for GRPO: a generation round's Boa work run at once, ahead of TRL's calls.

TRL 1.16 calls the tools of a generation round one sample at a time
(``GRPOTrainer._tool_call_loop``), so a step's Boa runs would run one after another.
:class:`ToolRounds` (opened by ``py4.train.grpo``'s trainer around TRL's loop) runs the
*Boa work* of a whole round ahead, at its first tool call: every ``run_code`` of the round
in one ``Executor.run_many``, every ``submit``'s certification alongside. Each episode
still handles its calls itself, in TRL's order, on TRL's thread: limits, outcomes, token
counts and answers are decided exactly as without batching; only the Boa results come
from the round's batch (:class:`PrefetchedRuns`, each episode's executor). A call the batch
did not foresee simply runs on the executor then. TRL itself has no batching: this module is
where the rollouts' tool calls differ from TRL's loop in how they reach Boa, not in what they do.
"""

from __future__ import annotations

import copy
import json
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterable, Sequence

from py4.boa.certify import certify
from py4.boa.executor import Executor, RunRequest, RunResult
from py4.episodes.config import EpisodeConfig
from py4.episodes.episode import Episode

log = logging.getLogger(__name__)


class PrefetchedRuns:
    """An episode's executor: Boa results that a round's batch ran ahead are served from
    here, each once and in order; anything else runs on the wrapped ``executor``.

    A run is matched by its source and options, a certification by the job ``certify``
    sends (its header: source, tests, timeouts, ...). ``served`` and ``missed`` count the
    calls answered from the batch and those that ran on the executor.
    """

    def __init__(self, executor: Executor):
        self.executor = executor
        self._runs: dict[tuple, list[RunResult]] = {}
        self._jobs: dict[str, list[dict | None]] = {}
        self.served = 0
        self.missed = 0

    def __getattr__(self, name: str) -> Any:  # dialect, timeout_s, output_cap, workers, ...
        if name == "executor":
            raise AttributeError(name)
        return getattr(self.executor, name)

    def run(self, source: str | bytes, *, timeout_s: float | None = None,
            diagnostics: str = "verbatim", filename: str = "<py4>") -> RunResult:
        """``Executor.run``, answered from the batch when it ran this program ahead."""
        queue = self._runs.get(_run_key(source, timeout_s, diagnostics, filename))
        if queue:
            self.served += 1
            return queue.pop(0)
        self.missed += 1
        return self.executor.run(source, timeout_s=timeout_s, diagnostics=diagnostics,
                                 filename=filename)

    def dispatch(self, header: dict, code: bytes, timeout_s: float) -> dict | None:
        """``Executor.dispatch`` (what ``certify`` calls), answered from the batch when it ran this job."""
        queue = self._jobs.get(_job_key(header))
        if queue:
            self.served += 1
            return queue.pop(0)
        self.missed += 1
        return self.executor.dispatch(header, code, timeout_s)

    def offer_run(self, request: RunRequest, result: RunResult) -> None:
        key = _run_key(request.source, request.timeout_s, request.diagnostics, request.filename)
        self._runs.setdefault(key, []).append(result)

    def offer_job(self, header: dict, reply: dict | None) -> None:
        self._jobs.setdefault(_job_key(header), []).append(copy.deepcopy(reply))

    def clear(self) -> None:
        """Drop what was not used (a call the batch foresaw that never came)."""
        self._runs.clear()
        self._jobs.clear()


def _run_key(source: str | bytes, timeout_s: float | None, diagnostics: str, filename: str) -> tuple:
    return (source, None if timeout_s is None else float(timeout_s), diagnostics, filename)


def _job_key(header: dict) -> str:
    return json.dumps(header, sort_keys=True, default=repr)


class _RecordingExecutor:
    """Passes ``certify``'s job to the executor and offers the reply to the episode's ``PrefetchedRuns``."""

    def __init__(self, prefetched: PrefetchedRuns):
        self._prefetched = prefetched

    def __getattr__(self, name: str) -> Any:
        return getattr(self._prefetched.executor, name)

    def dispatch(self, header: dict, code: bytes, timeout_s: float) -> dict | None:
        reply = self._prefetched.executor.dispatch(header, code, timeout_s)
        self._prefetched.offer_job(header, reply)
        return reply


class ToolRounds:
    """Runs the Boa work of each round of TRL's tool loop at once; a context manager.

    ``environments[i]`` is rollout i's environment and ``completions[i]`` TRL's message
    list of that rollout (the very lists TRL appends to). At any tool call, the rollouts
    whose last message is an assistant turn with tool calls not seen before make up the
    round: their calls' Boa work (:func:`boa_work`) runs in one
    ``run_many`` (``run_code``) with the certifications (``submit``) alongside, and the
    results wait in each episode's :class:`PrefetchedRuns`. (A rollout whose last round
    was rolled back by TRL for length ends on a turn already seen: it is not run again.)
    """

    def __init__(self, environments: Iterable[Any], completions: Sequence[list]):
        # A trainer without environments passes none: nothing to pair (otherwise one per completion).
        # An environment takes part through its ``tool_rounds`` attribute (Py4Environment's).
        self.pairs = [(env, messages) for env, messages in zip(environments, completions, strict=False)
                      if hasattr(env, "tool_rounds")]
        self._seen: dict[int, Any] = {}  # id -> turn, kept alive so that ids stay unique
        self.rounds = 0
        self.batched = 0  # Boa calls run ahead

    def __enter__(self) -> "ToolRounds":
        for env, _ in self.pairs:
            env.tool_rounds = self
        return self

    def __exit__(self, *exc: Any) -> None:
        for env, _ in self.pairs:
            env.tool_rounds = None
            if env.episode is not None and isinstance(env.episode.executor, PrefetchedRuns):
                env.episode.executor.clear()

    def prefetch(self) -> None:
        """Run the Boa work of every new assistant turn (cheap when there is none)."""
        turns = []
        for env, messages in self.pairs:
            last = messages[-1] if messages else None
            if (isinstance(last, dict) and last.get("role") == "assistant" and last.get("tool_calls")
                    and id(last) not in self._seen and env.episode is not None):
                self._seen[id(last)] = last
                turns.append((env, last["tool_calls"]))
        if turns:
            self.rounds += 1
            self.batched += run_round(turns)


def run_round(turns: Sequence[tuple[Any, Sequence[Any]]]) -> int:
    """Run the Boa work of these (environment, tool calls) turns at once; returns how many calls.

    An environment here is a :class:`~py4.episodes.environment.Py4Environment` (its ``episode``
    and that episode's :class:`PrefetchedRuns` executor).

    A failure here (e.g. a lost executor) only means the results are not offered: each
    call then runs on the executor when TRL makes it, and fails there as it would have.
    """
    groups: dict[int, tuple[Executor, list, list]] = {}
    for env, tool_calls in turns:
        prefetched = env.episode.executor
        if not isinstance(prefetched, PrefetchedRuns):
            continue
        prefetched.clear()
        _, runs, submits = groups.setdefault(id(prefetched.executor), (prefetched.executor, [], []))
        for name, code in boa_work(env.episode, tool_calls):
            if name == "run_code":
                runs.append((prefetched, _run_request(env.episode.config, code)))
            else:
                submits.append((env.episode, prefetched, code))
    count = 0
    for executor, runs, submits in groups.values():
        with ThreadPoolExecutor(max_workers=max(1, executor.workers)) as pool:
            certifications = [pool.submit(_certify_ahead, episode, prefetched, code)
                              for episode, prefetched, code in submits]
            try:
                results = executor.run_many([request for _, request in runs]) if runs else []
            except Exception:  # see the docstring (logged with its traceback)
                log.warning("Boa: a round's batched runs failed; its calls run one by one", exc_info=True)
                results = []
            for future in certifications:
                future.exception()  # a failure is the call's own, when TRL makes it
        # results is [] when the batched run failed: those calls then run one by one, when TRL makes them.
        for (prefetched, request), result in zip(runs, results, strict=False):
            prefetched.offer_run(request, result)
        count += len(runs) + len(submits)
    return count


def _run_request(config: EpisodeConfig, code: str) -> RunRequest:
    # The options Episode.run_code passes to Executor.run (a test checks every batched call is served).
    return RunRequest(code, timeout_s=config.run_timeout_s, diagnostics=config.diagnostics, filename="main.p4")


def _certify_ahead(episode: Episode, prefetched: PrefetchedRuns, code: str) -> None:
    # The arguments Episode.submit passes to certify; the reply is offered by _RecordingExecutor.
    certify(episode.problem, code, executor=_RecordingExecutor(prefetched),
            per_test_timeout_s=episode.config.run_timeout_s, filename="solution.p4")


def boa_work(episode: Episode | None, tool_calls: Sequence[Any]) -> list[tuple[str, str]]:
    """The (tool, code) pairs of one assistant turn's calls that will reach Boa.

    Mirrors how TRL invokes the environment's tools (``method(**arguments)``: an unknown name or other
    arguments fail before the tool runs) and how the episode admits calls (nothing after
    the end or the call limit; ``submit`` ends the episode). A call cut by the token
    budget mid-turn cannot be foreseen: its prefetched result is merely not used.
    """
    if episode is None:
        return []
    ended, calls, work = episode.ended, episode.calls, []
    for call in tool_calls:
        function = call.get("function") if isinstance(call, dict) and call.get("type") == "function" else None
        if not isinstance(function, dict) or function.get("name") not in ("run_code", "submit"):
            continue
        arguments = function.get("arguments")
        if not (isinstance(arguments, dict) and set(arguments) == {"code"} and isinstance(arguments["code"], str)):
            continue
        calls += 1
        if ended or calls > episode.config.max_tool_calls:
            break
        work.append((function["name"], arguments["code"]))
        ended = function["name"] == "submit"
    return work
