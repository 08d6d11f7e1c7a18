"""The Python-4 rule registry: the one source of truth for rule metadata.

Every other part of the toolkit (corpus, problems, manifests, figures) refers to a
rule by its stable id ``P4-NN``. ``P4-00`` is not a rule: it is the id carried by
diagnostics that belong to no rule (a plain syntax error in Python-4 syntax).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Literal

RuleKind = Literal["core", "syntax", "semantics", "lint"]

NO_RULE = "P4-00"


@dataclass(frozen=True)
class Rule:
    """One Python-4 rule.

    ``python3_form`` says what Boa does with the Python 3 habit the rule breaks;
    ``example`` is valid Python-4, ``python3_example`` the Python 3 habit.
    """

    id: str
    kind: RuleKind
    title: str
    summary: str
    fix: str
    python3_form: str
    example: str
    python3_example: str
    held_out: bool = False

    def to_json(self) -> dict:
        """The `boa rules --json` shape: id, kind, title, summary, held_out."""
        return {
            "id": self.id,
            "kind": self.kind,
            "title": self.title,
            "summary": self.summary,
            "held_out": self.held_out,
        }


# The default held-out split of ../shared/design/PYTHON4.md. A campaign may choose another.
DEFAULT_HELD_OUT = frozenset(
    {"P4-09", "P4-11", "P4-13", "P4-19", "P4-20", "P4-22", "P4-24", "P4-30"}
)


def _rule(id_, kind, title, summary, fix, python3_form, example, python3_example):
    return Rule(
        id=id_,
        kind=kind,
        title=title,
        summary=summary,
        fix=fix,
        python3_form=python3_form,
        example=example,
        python3_example=python3_example,
        held_out=id_ in DEFAULT_HELD_OUT,
    )


_RULE_LIST = (
    _rule("P4-01", "core", "fn defines functions",
          "`fn` defines functions; `def` is gone.",
          "write `fn name(params) -> type:` instead of `def`", "compile error",
          "fn double(x: int) -> int:\n    return x * 2\n",
          "def double(x: int) -> int:\n    return x * 2\n"),
    _rule("P4-02", "core", "let declares bindings",
          "`let` declares a new binding; assigning a name never declared in its scope is an "
          "error. Parameters, for/comprehension targets, `with … as`, `catch … as`, `use`, "
          "fn/class names, `:=`, `global` and `nonlocal` declare too.",
          "write `let x = …` for the first binding of a name", "compile error",
          "let total = 0\ntotal = total + 1\n", "total = 0\ntotal = total + 1\n"),
    _rule("P4-03", "core", "else if replaces elif",
          "`else if` replaces `elif`.", "replace `elif` with `else if`", "compile error",
          "let x = 2\nif x < 0:\n    print('neg')\nelse if x == 0:\n    print('zero')\n",
          "let x = 2\nif x < 0:\n    print('neg')\nelif x == 0:\n    print('zero')\n"),
    _rule("P4-04", "core", "nil, true, false",
          "`nil`, `true` and `false` replace `None`, `True` and `False` (same values).",
          "write `nil`, `true`, `false`", "compile error",
          "let found = false\nlet best = nil\n", "let found = False\nlet best = None\n"),
    _rule("P4-05", "core", "fn annotates everything",
          "Every `fn` annotates all its parameters and its return type "
          "(the first `self`/`cls` of a method is exempt).",
          "annotate every parameter and the return type: `fn f(x: int) -> int:`", "warning",
          "fn inc(x: int) -> int:\n    return x + 1\n", "fn inc(x):\n    return x + 1\n"),
    _rule("P4-06", "syntax", "catch replaces except",
          "`catch` replaces `except`: `catch ValueError as e:`.",
          "replace `except` with `catch`", "compile error",
          "try:\n    let n = int('x')\ncatch ValueError as e:\n    print('bad')\n",
          "try:\n    let n = int('x')\nexcept ValueError as e:\n    print('bad')\n"),
    _rule("P4-07", "syntax", "throw replaces raise",
          "`throw` replaces `raise`.", "replace `raise` with `throw`", "compile error",
          "fn check(x: int) -> nil:\n    if x < 0:\n        throw ValueError('negative')\n",
          "fn check(x: int) -> nil:\n    if x < 0:\n        raise ValueError('negative')\n"),
    _rule("P4-08", "syntax", "i-strings interpolate",
          "Interpolated strings take the `i` prefix: `i\"{x}\"` (raw: `ri\"…\"`); "
          "`f\"…\"` is gone.",
          "write `i\"…\"` instead of `f\"…\"`", "compile error",
          "let name = 'Ada'\nprint(i\"hello {name}\")\n",
          "let name = 'Ada'\nprint(f\"hello {name}\")\n"),
    _rule("P4-09", "syntax", "fun replaces lambda",
          "`fun` replaces `lambda`: `fun x: x + 1`.",
          "replace `lambda` with `fun`", "compile error",
          "let inc = fun x: x + 1\n", "let inc = lambda x: x + 1\n"),
    _rule("P4-10", "syntax", "use replaces import",
          "`use m`, `use m as n` and `from m use a, b as c` replace `import`.",
          "write `use m` or `from m use a, b`", "compile error",
          "use math\nfrom collections use Counter\n",
          "import math\nfrom collections import Counter\n"),
    _rule("P4-11", "syntax", "no chained comparisons",
          "Chained comparisons (`a < b < c`) are gone: write `a < b and b < c`.",
          "write `a < b and b < c`", "compile error",
          "let ok = 0 < 5 and 5 < 10\n", "let ok = 0 < 5 < 10\n"),
    _rule("P4-12", "semantics", "closed ranges",
          "`range(a, b[, s])` is a closed interval that includes `b`; `range(n)` is "
          "`range(0, n)`; `indices(xs)` gives 0 … len(xs)-1.",
          "iterate `indices(xs)` over positions; `range(a, b)` includes `b`",
          "wrong answer / IndexError",
          "let xs = [3, 1, 2]\nfor i in indices(xs):\n    print(xs[i])\n",
          "let xs = [3, 1, 2]\nfor i in range(len(xs)):\n    print(xs[i])\n"),
    _rule("P4-13", "semantics", "inclusive slices",
          "Slices include their end index: `xs[a:b]` contains `xs[b]`.",
          "`xs[0:k - 1]` is the first k items", "wrong answer",
          "let xs = [1, 2, 3, 4]\nlet head = xs[0:1]\n",
          "let xs = [1, 2, 3, 4]\nprint(xs[0:2])\n"),
    _rule("P4-14", "syntax", "no negative index literals",
          "Negative index literals (`xs[-1]`, `xs[:-2]`) are gone; use `first(xs)`, "
          "`last(xs)` or `len(xs) - k`.",
          "use `last(xs)` or `xs[len(xs) - k]`", "compile error",
          "let xs = [1, 2, 3]\nlet tail = last(xs)\n",
          "let xs = [1, 2, 3]\nlet tail = xs[-1]\n"),
    _rule("P4-15", "semantics", "{} is a set, {:} a dict",
          "`{}` is the empty set; `{:}` is the empty dict.",
          "write `{:}` for an empty dict", "runtime error / wrong answer",
          "let seen = {}\nlet counts = {:}\nseen.add(1)\ncounts['a'] = 1\n",
          "let counts = {}\ncounts['a'] = 1\n"),
    _rule("P4-16", "semantics", "dicts iterate pairs",
          "Iterating a dict yields `(key, value)` pairs; `d.keys()` gives the keys.",
          "iterate `d.keys()` for keys, or unpack `for k, v in d`",
          "runtime error / wrong answer",
          "let d = {'a': 1}\nfor k, v in d:\n    print(k, v)\n",
          "let d = {'a': 1}\nfor k in d:\n    print(k, d[k])\n"),
    _rule("P4-17", "semantics", "pop() takes the first item",
          "`xs.pop()` without an index removes the first element.",
          "write `xs.pop(len(xs) - 1)` to remove the last item", "wrong answer",
          "let queue = [1, 2, 3]\nlet head = queue.pop()\n",
          "let queue = [1, 2, 3]\nprint(queue.pop())\n"),
    _rule("P4-18", "semantics", "join belongs to the iterable",
          "`xs.join(\", \")` joins; `\", \".join(xs)` is a TypeError.",
          "write `xs.join(sep)`", "runtime error",
          "let words = ['a', 'b']\nprint(words.join(', '))\n",
          "let words = ['a', 'b']\nprint(', '.join(words))\n"),
    _rule("P4-19", "semantics", "enumerate counts from 1",
          "`enumerate()` counts from 1 (an explicit `start=` is honoured).",
          "subtract 1 or pass `start=0` when you need positions", "wrong answer",
          "for n, x in enumerate(['a', 'b']):\n    print(n, x)\n",
          "for i, x in enumerate(['a', 'b']):\n    print(i, x)\n"),
    _rule("P4-20", "semantics", "zip is strict",
          "`zip()` raises ValueError on unequal lengths; `zip_shortest()` truncates.",
          "use `zip_shortest()` to truncate", "runtime error",
          "for a, b in zip_shortest([1, 2, 3], [4, 5]):\n    print(a, b)\n",
          "for a, b in zip([1, 2, 3], [4, 5]):\n    print(a, b)\n"),
    _rule("P4-21", "semantics", "bool is not a number",
          "`sum()` over bools is a TypeError; `count(xs)` counts truthy items.",
          "use `count(xs)` to count true items", "runtime error",
          "let n = count([x > 1 for x in [1, 2, 3]])\n",
          "print(sum([x > 1 for x in [1, 2, 3]]))\n"),
    _rule("P4-22", "semantics", "round halves away from zero",
          "`round()` rounds halves away from zero: `round(2.5) == 3`.",
          "expect `round(2.5) == 3` and `round(-0.5) == -1`", "wrong answer",
          "print(round(2.5))\n", "print(round(2.5))\n"),
    _rule("P4-23", "semantics", "// and % truncate",
          "Integer `//` and `%` truncate toward zero: `-7 // 2 == -3`, `-7 % 2 == -1`.",
          "expect truncation toward zero for negative operands", "wrong answer",
          "print(-7 // 2, -7 % 2)\n", "print(-7 // 2, -7 % 2)\n"),
    _rule("P4-24", "semantics", "trim replaces strip",
          "`str.strip/lstrip/rstrip` are renamed `trim/trim_start/trim_end`.",
          "write `s.trim()`, `s.trim_start()`, `s.trim_end()`", "AttributeError",
          "print('  hi  '.trim())\n", "print('  hi  '.strip())\n"),
    _rule("P4-25", "lint", "no %-formatting",
          "`%`-formatting of strings is deprecated.",
          "use an i-string: `i\"{x}\"`", "warning",
          "let x = 3\nprint(i\"x = {x}\")\n", "let x = 3\nprint('x = %d' % x)\n"),
    _rule("P4-26", "lint", "no mutable defaults",
          "A parameter's default value is never a mutable list, dict or set.",
          "default to `nil` and build the value inside the fn", "warning",
          "fn add(x: int, xs: list | nil = nil) -> list:\n    return [x]\n",
          "fn add(x: int, xs: list = []) -> list:\n    return [x]\n"),
    _rule("P4-27", "lint", "compare with nil by is",
          "Compare with `nil` using `is` / `is not`, never `==` / `!=`.",
          "write `x is nil` or `x is not nil`", "warning",
          "let x = nil\nprint(x is nil)\n", "let x = nil\nprint(x == nil)\n"),
    _rule("P4-28", "lint", "no bare catch",
          "A bare `catch:` catches everything; name the exception.",
          "name the exception: `catch ValueError:`", "warning",
          "try:\n    print(1)\ncatch ValueError:\n    print(2)\n",
          "try:\n    print(1)\ncatch:\n    print(2)\n"),
    _rule("P4-29", "lint", "no shadowed builtins",
          "Do not bind a builtin's name (`list`, `sum`, `id`, …).",
          "choose another name", "warning",
          "let items = [1, 2]\n", "let list = [1, 2]\n"),
    _rule("P4-30", "lint", "isinstance, not type ==",
          "Test types with `isinstance(x, T)`, not `type(x) == T`.",
          "write `isinstance(x, T)`", "warning",
          "print(isinstance(3, int))\n", "print(type(3) == int)\n"),
)

RULES: dict[str, Rule] = {rule.id: rule for rule in _RULE_LIST}
CORE_RULES = frozenset(rule.id for rule in _RULE_LIST if rule.kind == "core")


def get_rule(rule_id: str) -> Rule:
    """The rule with this id.

    Raises KeyError naming the closest ids when ``rule_id`` is unknown.
    """
    wanted = rule_id.strip().upper()
    number = re.fullmatch(r"(?:P4-?)?(\d{1,2})", wanted)
    if number:  # "P4-7", "p47", "7" all mean P4-07
        wanted = f"P4-{int(number.group(1)):02d}"
    rule = RULES.get(wanted)
    if rule is not None:
        return rule
    close = difflib.get_close_matches(wanted, list(RULES), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise KeyError(f"unknown rule id {rule_id!r}{hint} (known: P4-01 … P4-{len(RULES):02d})")
