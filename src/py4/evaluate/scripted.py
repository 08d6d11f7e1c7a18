"""Scripted policies for calibration: known answers, no model.

| policy | first turn |
|---|---|
| `gold` | submits the gold solution (certifies on every problem of a valid bank) |
| `python3` | submits the Python 3 reference as is (Python-4 rejects `def`: 0%) |
| `migrated` | submits `migrate(reference)` (certifies as often as the migrator is faithful) |
| `core-only` | submits the reference migrated with the core rules' fixers only (P4-01…P4-05) |
| `silent` | answers in text, never calls a tool (every episode `no_submission`) |

`core-only` is a model that learned the syntax and nothing else: 0%, as every problem targets a
non-core rule.

After its submit a scripted episode is over, so no second turn is asked for. Tokens are
counted with a tokenizer when one is given, else as 4 characters a token.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from py4.episodes.parsing import ParsedTurn, ToolCall
from py4.episodes.policy import Turn, TurnRequest, approximate_tokens
from py4.problems.schema import Problem

SILENT_TEXT = "I would rather not write any code."


def _migrated(problem: Problem) -> str:
    from py4.lang.migrate import migrate

    return migrate(problem.reference_py3).source


def _core_only(problem: Problem) -> str:
    from py4.lang.migrate import CORE_RULES, migrate

    return migrate(problem.reference_py3, only_rules=CORE_RULES).source


SOLUTIONS: dict[str, Callable[[Problem], str] | None] = {
    "gold": lambda p: p.gold,
    "python3": lambda p: p.reference_py3,
    "migrated": _migrated,
    "core-only": _core_only,
    "silent": None,
}


class ScriptedPolicy:
    """A scripted policy by name (one of ``SOLUTIONS``); raises ValueError for another name."""

    def __init__(self, name: str, tokenizer: Any = None):
        if name not in SOLUTIONS:
            raise ValueError(f"unknown scripted policy {name!r}; expected one of {', '.join(SOLUTIONS)}")
        self.name, self.tokenizer = name, tokenizer
        self._solution = SOLUTIONS[name]
        self._cache: dict[str, str] = {}  # problem id -> solution (K samples share one migration)

    def solution(self, problem: Problem) -> str | None:
        """The code this policy submits for ``problem`` (None for ``silent``)."""
        if self._solution is None:
            return None
        if problem.id not in self._cache:
            self._cache[problem.id] = self._solution(problem)
        return self._cache[problem.id]

    def act(self, requests: list[TurnRequest]) -> list[Turn]:
        return [self._turn(r) for r in requests]

    def _turn(self, request: TurnRequest) -> Turn:
        code = self.solution(request.problem) if request.turn == 0 else None
        if code is None:
            text = SILENT_TEXT if request.turn == 0 else "Done."
            return Turn(text, ParsedTurn(text), self.count_tokens(text))
        raw = json.dumps({"name": "submit", "arguments": {"code": code}}, ensure_ascii=False)
        text = f"<tool_call>{raw}</tool_call>"
        call = ToolCall("submit", {"code": code}, raw)
        return Turn(text, ParsedTurn("", None, [call]), self.count_tokens(text))

    def count_tokens(self, text: str) -> int:
        if self.tokenizer is None:
            return approximate_tokens(text)
        return len(self.tokenizer.encode(text, add_special_tokens=False))

    def close(self) -> None:
        self._cache.clear()
