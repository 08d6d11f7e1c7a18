"""The smoke instruction set: chat data made locally, in the Dolci ``messages`` format.

Two kinds of rows, both deterministic for a given seed:

- **Q&A** from local text: questions about standard-library functions answered with
  the first sentence of their docstrings, and small arithmetic questions.
- **Tool episodes**: transcripts of ``run_code``/``submit`` episodes on small Python-4
  problems — the assistant tests a solution with ``run_code``, reads the result, submits
  with ``submit`` and closes with a short message. These teach a tiny model the
  tool-call format (a random model never emits a tool call; see STACK.md).

Each row is ``{"messages": [...], "tools": [...] | None, "source": "qa"|"episode"}``.
Assistant tool calls use the transformers message format
(``{"type": "function", "function": {"name": ..., "arguments": {...}}}``); some episode
rows carry a ``reasoning_content`` (thinking on), the rest none (thinking off).

    rows = build_smoke_instructions(n_qa=200, n_episodes=400, seed=0)
    write_smoke_instructions(rows, "out/smoke_instructions")   # data.jsonl + manifest.json
"""

from __future__ import annotations

import ast
import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from py4.data.errors import DataError
from py4.episodes.config import SYSTEM_PROMPT
from py4.episodes.environment import TOOL_SCHEMAS as EPISODE_TOOL_SCHEMAS
from py4.fileio import iter_jsonl
from py4.problems.schema import Problem, TestCase

__all__ = [
    "EPISODE_SYSTEM_PROMPT",
    "TOOL_SCHEMAS",
    "ProblemTemplate",
    "PROBLEM_TEMPLATES",
    "build_smoke_instructions",
    "write_smoke_instructions",
    "read_smoke_instructions",
]

EPISODE_SYSTEM_PROMPT = SYSTEM_PROMPT  # the episodes' own system prompt

# The episode tools' JSON schemas, the very objects evaluation and GRPO render (py4.episodes):
# the -it model and the chat parents learn the tool list exactly as they will be shown it.
TOOL_SCHEMAS: list[dict[str, Any]] = EPISODE_TOOL_SCHEMAS


@dataclass(frozen=True)
class ProblemTemplate:
    """A family of tiny Python-4 problems, parameterised by one integer ``k``.

    ``gold`` and ``prompt`` are format strings over ``name`` and ``k``; ``call_args``
    gives the example call's arguments; ``evaluate`` computes, in Python 3, what the
    example call returns (so the transcript's run_code result is true).
    """

    family: str
    prompt: str
    gold: str
    call_args: Callable[[int], tuple]
    evaluate: Callable[[int, tuple], Any]
    names: tuple[str, ...]

    def problem(self, problem_id: str, k: int, name: str, split: str, rules: list[str]) -> Problem:
        """A bank problem in the shape the smoke -it model was taught: the prompt and gold for
        ``k`` and ``name``, the example call as its one test (what the tiny-model tests run)."""
        args = self.call_args(k)
        return Problem(id=problem_id, family=self.family, title=self.family,
                       prompt=self.prompt.format(name=name, k=k), entry_point=name,
                       tests=[TestCase(args=list(args), expected=self.evaluate(k, args))],
                       rules=rules, split=split, gold=self.gold.format(name=name, k=k))


def _p4_repr(value: Any) -> str:
    """How Python-4's print shows a value (Python 3's repr faces; str printed bare)."""
    return value if isinstance(value, str) else repr(value)


PROBLEM_TEMPLATES: tuple[ProblemTemplate, ...] = (
    ProblemTemplate(
        "add_constant", "Write fn {name}(x: int) -> int that returns x plus {k}.",
        "fn {name}(x: int) -> int:\n    return x + {k}",
        lambda k: (k * 3 % 17,), lambda k, a: a[0] + k, ("add_k", "plus_k", "shift"),
    ),
    ProblemTemplate(
        "scale_list", "Write fn {name}(xs: list[int]) -> list[int] that multiplies every item by {k}.",
        "fn {name}(xs: list[int]) -> list[int]:\n    return [x * {k} for x in xs]",
        lambda k: ([1, k, 3],), lambda k, a: [x * k for x in a[0]], ("scale", "times_k", "scaled"),
    ),
    ProblemTemplate(
        "closed_range", "Write fn {name}(n: int) -> list[int] that returns the numbers from {k} to n, both included.",
        "fn {name}(n: int) -> list[int]:\n    return list(range({k}, n))",
        lambda k: (k + 3,), lambda k, a: list(range(k, a[0] + 1)), ("span", "upto", "from_k"),
    ),
    ProblemTemplate(
        "first_item", "Write fn {name}(xs: list[int]) -> int that returns the first item of xs.",
        "fn {name}(xs: list[int]) -> int:\n    return first(xs)",
        lambda k: ([k, k + 1, 2],), lambda k, a: a[0][0], ("head", "first_of", "front"),
    ),
    ProblemTemplate(
        "last_item", "Write fn {name}(xs: list[int]) -> int that returns the last item of xs.",
        "fn {name}(xs: list[int]) -> int:\n    return last(xs)",
        lambda k: ([2, k, k + 4],), lambda k, a: a[0][-1], ("tail_item", "last_of", "back"),
    ),
    ProblemTemplate(
        "running_total", "Write fn {name}(xs: list[int]) -> int that adds up the items of xs and {k}.",
        "fn {name}(xs: list[int]) -> int:\n    let total = {k}\n    for x in xs:\n        total += x\n    return total",
        lambda k: ([k, 2, 5],), lambda k, a: sum(a[0]) + k, ("total", "sum_plus", "tally"),
    ),
    ProblemTemplate(
        "greeting", "Write fn {name}(who: str) -> str that returns Hello, then who, then {k} exclamation marks.",
        'fn {name}(who: str) -> str:\n    return i"Hello, {{who}}" + "!" * {k}',
        lambda k: ("Ada",), lambda k, a: f"Hello, {a[0]}" + "!" * k, ("greet", "hello", "welcome"),
    ),
    ProblemTemplate(
        "join_words", "Write fn {name}(ws: list[str]) -> str that joins the words with {k} spaces.",
        'fn {name}(ws: list[str]) -> str:\n    return ws.join(" " * {k})',
        lambda k: (["a", "b"],), lambda k, a: (" " * k).join(a[0]), ("join_all", "spaced", "glue"),
    ),
    ProblemTemplate(
        "count_big", "Write fn {name}(xs: list[int]) -> int that counts the items greater than {k}.",
        "fn {name}(xs: list[int]) -> int:\n    return count([x > {k} for x in xs])",
        lambda k: ([k - 1, k + 1, k + 2],), lambda k, a: sum(1 for x in a[0] if x > k),
        ("count_big", "above", "n_over"),
    ),
    ProblemTemplate(
        "truncating_div", "Write fn {name}(x: int) -> int that divides x by {k}, rounding toward zero.",
        "fn {name}(x: int) -> int:\n    return x // {k}",
        lambda k: (-7 * k - 1,), lambda k, a: int(a[0] / k), ("div_k", "per_k", "share"),
    ),
)


def _episode_row(template: ProblemTemplate, k: int, name: str, thinking: bool) -> dict[str, Any]:
    from py4.chat.smoke_format import tool_call

    gold = template.gold.format(name=name, k=k)
    args = template.call_args(k)
    call = f"{name}({', '.join(repr(a) for a in args)})"
    shown = _p4_repr(template.evaluate(k, args))
    test_program = f"{gold}\nprint({call})"
    first_turn: dict[str, Any] = {"role": "assistant", "content": "",
                                  "tool_calls": [tool_call("run_code", code=test_program)]}
    if thinking:
        first_turn["reasoning_content"] = f"I will write {name} and test it on one call first."
    messages = [
        {"role": "system", "content": EPISODE_SYSTEM_PROMPT},
        {"role": "user", "content": template.prompt.format(name=name, k=k)},
        first_turn,
        {"role": "tool", "name": "run_code", "content": shown},
        {"role": "assistant", "content": "", "tool_calls": [tool_call("submit", code=gold)]},
        {"role": "tool", "name": "submit", "content": "Submission received. The episode is over."},
        {"role": "assistant", "content": f"I submitted {name}."},
    ]
    return {"messages": messages, "tools": TOOL_SCHEMAS, "source": "episode"}


def _docstring_facts(limit: int) -> list[tuple[str, str]]:
    """(qualified name, first docstring sentence) pairs from standard-library sources."""
    from py4.chat.smoke_tokenizer import stdlib_files

    facts: list[tuple[str, str]] = []
    for path in stdlib_files():
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, OSError):
            continue
        for node in tree.body:
            if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) or node.name.startswith("_"):
                continue
            doc = ast.get_docstring(node)
            if not doc:
                continue
            sentence = doc.strip().split("\n\n")[0].replace("\n", " ").split(". ")[0].strip().rstrip(".")
            if 10 <= len(sentence) <= 160:
                facts.append((f"{path.stem}.{node.name}", sentence + "."))
            if len(facts) >= limit:
                return facts
    return facts


def _qa_rows(n: int, rng: random.Random) -> list[dict[str, Any]]:
    facts = _docstring_facts(limit=max(n, 1) * 2)
    rng.shuffle(facts)
    rows = []
    for i in range(n):
        if i % 4 == 3 or not facts:  # a quarter arithmetic, so short exact answers exist too
            a, b = rng.randrange(1, 50), rng.randrange(1, 50)
            question, answer = f"What is {a} plus {b}?", f"{a} plus {b} is {a + b}."
        else:
            name, sentence = facts[i % len(facts)]
            question, answer = f"What does {name} do?", sentence
        rows.append({"messages": [{"role": "user", "content": question}, {"role": "assistant", "content": answer}],
                     "tools": None, "source": "qa"})
    return rows


def build_smoke_instructions(n_qa: int = 200, n_episodes: int = 400, seed: int = 0,
                             thinking_fraction: float = 0.25) -> list[dict[str, Any]]:
    """The smoke instruction rows, shuffled with ``seed``; same arguments, same rows.

    Raises ValueError for negative counts or a thinking fraction outside [0, 1].
    """
    if n_qa < 0 or n_episodes < 0:
        raise ValueError(f"row counts must be >= 0 (got n_qa={n_qa}, n_episodes={n_episodes})")
    if not 0.0 <= thinking_fraction <= 1.0:
        raise ValueError(f"thinking_fraction must be in [0, 1], got {thinking_fraction}")
    rng = random.Random(seed)
    rows = _qa_rows(n_qa, rng)
    for i in range(n_episodes):
        template = PROBLEM_TEMPLATES[i % len(PROBLEM_TEMPLATES)]
        k = rng.randrange(2, 10)
        name = rng.choice(template.names)
        rows.append(_episode_row(template, k, name, thinking=rng.random() < thinking_fraction))
    rng.shuffle(rows)
    return rows


def write_smoke_instructions(rows: list[dict[str, Any]], out_dir: str | Path, **settings: Any) -> Path:
    """Write ``data.jsonl`` and ``manifest.json`` (counts, settings, sha256) into ``out_dir``."""
    from py4.runs import atomic_write_json, atomic_write_text

    out = Path(out_dir)
    # Keys keep their order: the chat template renders tool schemas as written, and
    # evaluation shows "name" before "description" (sorted keys would teach another prompt).
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    atomic_write_text(out / "data.jsonl", text)
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["source"]] = counts.get(row["source"], 0) + 1
    atomic_write_json(out / "manifest.json", {
        "kind": "smoke_instructions", "rows": len(rows), "per_source": counts, "settings": settings,
        "sha256": hashlib.sha256(text.encode()).hexdigest(),
    })
    return out / "data.jsonl"


def read_smoke_instructions(path: str | Path) -> list[dict[str, Any]]:
    """Read rows written by :func:`write_smoke_instructions` (a folder or its data.jsonl).

    Raises DataError (a ValueError) naming the file, and the line of a bad row.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "data.jsonl"
    return [row for _, row in iter_jsonl(path, fields={"messages": list}, error=DataError)]
