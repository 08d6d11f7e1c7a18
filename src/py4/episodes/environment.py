"""``Py4Environment``: the episode as a TRL environment (``GRPOTrainer(environment_factory=...)``).

TRL makes one instance per rollout, calls ``reset(**row)`` with the dataset row, exposes
every public method except ``reset``/``get_reward`` as a tool (schema from the type hints
and Google-style docstrings) and adds ``get_reward`` as a reward function. So this class
has exactly four public methods; everything else lives on ``self.episode`` (an
:class:`~py4.episodes.episode.Episode`), which our own driver uses directly. Where TRL would
run a round's tool calls one by one, the episode's Boa work may come from a batch run ahead
(``py4.episodes.tool_batching``).
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Callable, Mapping

from py4.boa.executor import Executor
from py4.episodes.config import EpisodeConfig
from py4.episodes.episode import Episode
from py4.episodes.pool import shared_executor
from py4.episodes.tool_batching import PrefetchedRuns, ToolRounds
from py4.problems.schema import Problem

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


def _token_counter(tokenizer: Any) -> Callable[[str], int]:
    def count(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False))
    return count


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
