"""``Py4Environment``: the episode as a TRL environment (``GRPOTrainer(environment_factory=...)``).

TRL makes one instance per rollout, calls ``reset(**row)`` with the dataset row, exposes
every public method except ``reset``/``get_reward`` as a tool (schema from the type hints
and Google-style docstrings) and adds ``get_reward`` as a reward function. So this class
has exactly four public methods; everything else lives on ``self.episode`` (an
:class:`~py4.episodes.episode.Episode`), which our own driver uses directly.

Batched tool rounds. TRL 1.16 calls the tools of a generation round one sample at a time
(``GRPOTrainer._tool_call_loop``), so a step's Boa runs would run one after another.
:class:`ToolRounds` (opened by ``py4.train.grpo``'s trainer around TRL's loop) runs the
*Boa work* of a whole round ahead, at its first tool call: every ``run_code`` of the round
in one ``Executor.run_many``, every ``submit``'s certification alongside. Each episode
still handles its calls itself, in TRL's order, on TRL's thread: limits, outcomes, token
counts and answers are decided exactly as without batching; only the Boa results come
from the round's batch (:class:`PrefetchedRuns`). A call the batch did not foresee simply
runs on the executor then.
"""

from __future__ import annotations

import copy
import functools
import json
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable, Mapping, Sequence

from py4.boa.certify import certify
from py4.boa.executor import Executor, RunRequest, RunResult
from py4.episodes.config import EpisodeConfig
from py4.episodes.episode import Episode
from py4.episodes.pool import shared_executor
from py4.problems.schema import Problem

log = logging.getLogger(__name__)
_bank_lock = threading.Lock()
_bank_index: dict[str, Problem] | None = None


def _bank_problem(problem_id: str) -> Problem:
    """A problem of the shipped bank by id (the bank is loaded once per process)."""
    global _bank_index
    with _bank_lock:
        if _bank_index is None:
            from py4.problems.bank import load_bank

            _bank_index = {p.id: p for p in load_bank()}
        index = _bank_index
    if problem_id not in index:
        from py4.problems.bank import find_problem

        find_problem(list(index.values()), problem_id)  # raises KeyError with close ids
    return index[problem_id]


def problem_from_row(row: Mapping[str, Any], problems: Mapping[str, Problem] | None = None) -> Problem:
    """The problem a dataset row stands for.

    Accepted rows: ``{"problem": Problem | dict}``; ``{"problem_id": id}`` (looked up in
    ``problems`` when given, else in the shipped bank); or the problem's own fields
    (``id``, ``entry_point``, ``tests``, …; a chat-message ``prompt`` gives its last user text).
    Raises KeyError for an unknown id and ValueError for a row that is none of these.
    """
    if "problem" in row:
        value = row["problem"]
        return value if isinstance(value, Problem) else Problem.model_validate(value)
    if "problem_id" in row:
        pid = str(row["problem_id"])
        if problems is not None:
            if pid not in problems:
                raise KeyError(f"no problem {pid!r} among the {len(problems)} problems given to the environment")
            return problems[pid]
        return _bank_problem(pid)
    if "tests" in row and "entry_point" in row:
        fields = {k: row[k] for k in Problem.model_fields if k in row}
        if not isinstance(fields.get("prompt", ""), str):  # a chat prompt: the user's text
            users = [m.get("content") for m in fields.pop("prompt") if isinstance(m, dict) and m.get("role") == "user"]
            fields["prompt"] = str(users[-1]) if users else ""
        return Problem.model_validate(fields)
    raise ValueError(f"cannot tell the problem from a row with keys {sorted(row)}: expected 'problem', "
                     "'problem_id', or the problem's fields (id, entry_point, tests, ...)")


def initial_messages(problem: Problem, config: EpisodeConfig) -> list[dict[str, Any]]:
    """The episode's opening conversation: the system prompt and the problem's prompt."""
    return [{"role": "system", "content": config.system_prompt}, {"role": "user", "content": problem.prompt}]


def dataset_rows(problems: list[Problem], config: EpisodeConfig | None = None) -> list[dict[str, Any]]:
    """Rows for a TRL dataset: ``prompt`` (chat messages) and ``problem_id`` (read by ``reset``)."""
    config = config or EpisodeConfig()
    return [{"prompt": initial_messages(p, config), "problem_id": p.id} for p in problems]


class Py4Environment:
    """A ``run_code``/``submit`` episode on one problem; plugs into TRL's ``environment_factory``.

    ``config`` sets limits, diagnostics and rewards; ``problems`` (id -> Problem) is where
    ``reset(problem_id=...)`` looks first (default: the shipped bank); ``tokenizer``, when
    given, lets the episode count tool-call and tool-result tokens against the budget
    itself (TRL reports no token counts to environments); ``executor`` defaults to the
    process-wide shared Boa executor.
    """

    def __init__(self, config: EpisodeConfig | None = None, *, problems: Mapping[str, Problem] | None = None,
                 tokenizer: Any = None, executor: Executor | None = None):
        self.config = config or EpisodeConfig()
        self.problems = problems
        self.tokenizer = tokenizer
        self._executor = executor
        self.episode: Episode | None = None
        # Set by ToolRounds while TRL's tool loop runs (an attribute, not a method: TRL
        # turns public methods into tools).
        self.tool_rounds: ToolRounds | None = None

    def reset(self, **row: Any) -> None:
        """Start a new episode on the row's problem (see :func:`problem_from_row`)."""
        problem = problem_from_row(row, self.problems)
        executor = PrefetchedRuns(self._executor or shared_executor(self.config.output_cap))
        counter = _token_counter(self.tokenizer) if self.tokenizer is not None else None
        self.episode = Episode(problem, self.config, executor, counter)

    def run_code(self, code: str) -> str:
        """Run Python-4 code and return what it prints.

        Args:
            code: A Python-4 program.
        """
        episode = self._current()
        self._prefetch_round()
        return episode.run_code(code)

    def submit(self, code: str) -> str:
        """Submit the final Python-4 solution; this ends the episode.

        Args:
            code: The solution.
        """
        episode = self._current()
        self._prefetch_round()
        return episode.submit(code)

    def get_reward(self) -> float:
        """The episode's reward; an episode without a submission ends here as no_submission."""
        episode = self._current()
        episode.finish()
        return episode.reward

    def _current(self) -> Episode:
        if self.episode is None:
            raise RuntimeError("Py4Environment: call reset(...) before using the tools")
        return self.episode

    def _prefetch_round(self) -> None:
        if self.tool_rounds is not None:
            self.tool_rounds.prefetch()

    def _boa_work(self, tool_calls: Sequence[Any]) -> list[tuple[str, str]]:
        """The (tool, code) pairs of one assistant turn's calls that will reach Boa.

        Mirrors how TRL invokes tools (``method(**arguments)``: an unknown name or other
        arguments fail before the tool runs) and how the episode admits calls (nothing after
        the end or the call limit; ``submit`` ends the episode). A call cut by the token
        budget mid-turn cannot be foreseen: its prefetched result is merely not used.
        """
        episode = self.episode
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


def _token_counter(tokenizer: Any) -> Callable[[str], int]:
    def count(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False))
    return count


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
    round: their calls' Boa work (:meth:`Py4Environment._boa_work`) runs in one
    ``run_many`` (``run_code``) with the certifications (``submit``) alongside, and the
    results wait in each episode's :class:`PrefetchedRuns`. (A rollout whose last round
    was rolled back by TRL for length ends on a turn already seen: it is not run again.)
    """

    def __init__(self, environments: Iterable[Any], completions: Sequence[list]):
        # A trainer without environments passes none: nothing to pair (otherwise one per completion).
        self.pairs = [(env, messages) for env, messages in zip(environments, completions, strict=False)
                      if isinstance(env, Py4Environment)]
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


def run_round(turns: Sequence[tuple[Py4Environment, Sequence[Any]]]) -> int:
    """Run the Boa work of these (environment, tool calls) turns at once; returns how many calls.

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
        for name, code in env._boa_work(tool_calls):  # the environment's own helper
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


def environment_factory(config: EpisodeConfig | None = None, *, problems: Mapping[str, Problem] | None = None,
                        tokenizer: Any = None) -> Callable[[], Py4Environment]:
    """A zero-argument factory for ``GRPOTrainer(environment_factory=...)``."""
    return functools.partial(Py4Environment, config, problems=problems, tokenizer=tokenizer)


def _schema(name: str, description: str, code_help: str) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": {"code": {"type": "string", "description": code_help}},
                       "required": ["code"]},
        "return": {"type": "string"}}}


# What transformers' get_json_schema makes of the two tool methods (a test checks they
# agree), written out so that rendering a prompt does not import transformers. The
# driver renders with these, TRL with the methods: the prompts are the same.
TOOL_SCHEMAS: list[dict[str, Any]] = [
    _schema("run_code", "Run Python-4 code and return what it prints.", "A Python-4 program."),
    _schema("submit", "Submit the final Python-4 solution; this ends the episode.", "The solution."),
]


def note_completion_lengths(completion_ids: list[list[int]], environments: list[Any] | None = None,
                            **_: Any) -> list[float]:
    """A TRL reward function (value 0) that tells each environment its trajectory's length.

    TRL hands environments no token counts, and a generation cut at
    ``max_completion_length`` is not a tool call the environment could see. Pass this
    *before* the environment's own reward (``reward_funcs=[note_completion_lengths]``; TRL
    appends ``get_reward`` after the given functions): a trajectory that used the whole
    budget without a submission then ends as ``truncated`` in ``get_reward``.
    """
    if environments is None:  # a trainer without environments: nothing to tell
        return [0.0] * len(completion_ids)
    for ids, env in zip(completion_ids, environments, strict=True):
        episode = getattr(env, "episode", None)
        if isinstance(episode, Episode) and len(ids) >= episode.config.token_budget:
            episode.truncate("token_budget")
    return [0.0] * len(completion_ids)
