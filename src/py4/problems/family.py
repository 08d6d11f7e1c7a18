"""Problem families: seeded generators of distinct Python-4 problems.

A family is a declarative object (name, category, targeted rules, difficulty) plus a
generator ``variants(rng)`` that yields :class:`Variant` objects forever (or until its
parameter space is exhausted). Each variant carries the English task, the entry point,
the Python-4 gold source, the Python 3 reference source and the test *inputs*; the
builder computes expected outputs by running the reference under CPython.

Families register themselves with :func:`family` (a decorator) in modules listed in
``py4.problems.families.MODULES``; see docs/dev/families.md.
"""

from __future__ import annotations

import difflib
import random
import string
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from py4.errors import Py4Error

__all__ = [
    "Call",
    "Variant",
    "Family",
    "family",
    "get_family",
    "all_families",
    "code",
    "FamilyError",
]

_NON_CORE = {f"P4-{n:02d}" for n in range(6, 31)}


class FamilyError(Py4Error, ValueError):
    """A family or one of its variants is malformed (names the family)."""


@dataclass(frozen=True)
class Call:
    """One test input: positional and keyword arguments for the entry point."""

    args: list[Any]
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Variant:
    """One concrete problem of a family, before expected outputs are known.

    ``tests`` holds argument lists (``[1, [2, 3]]``) or :class:`Call` objects.
    ``rules`` overrides the family's targeted rules when a variant targets a different
    subset (it must still be non-empty and non-core). ``params`` is recorded in the
    problem's provenance so that a problem can be traced to its parameter set.
    """

    title: str
    task: str
    entry_point: str
    gold: str
    reference: str
    tests: list[Any]
    rules: tuple[str, ...] = ()
    tolerance: float | None = None
    difficulty: int | None = None
    params: dict[str, Any] = field(default_factory=dict)

    def calls(self) -> list[Call]:
        return [t if isinstance(t, Call) else Call(list(t)) for t in self.tests]

    def signature(self) -> str:
        """The ``fn`` line of the entry point in the gold source, without the colon.

        Raises FamilyError when the gold defines no such fn.
        """
        prefix = f"fn {self.entry_point}("
        for line in self.gold.splitlines():
            if line.startswith(prefix):
                return line.rstrip().removesuffix(":")
        raise FamilyError(f"gold defines no top-level `{prefix}...`")


@dataclass(frozen=True)
class Family:
    """A named, seeded generator of problems that target ``rules``."""

    name: str
    category: str
    rules: tuple[str, ...]
    difficulty: int
    variants: Callable[[random.Random], Iterator[Variant]]
    doc: str = ""
    module: str = ""


_REGISTRY: dict[str, Family] = {}


def family(
    name: str, category: str, rules: tuple[str, ...] | list[str], difficulty: int = 1
) -> Callable[[Callable[[random.Random], Iterator[Variant]]], Family]:
    """Register the decorated generator function as a family.

    Raises FamilyError on a duplicate name, an empty rule list, a core or unknown
    rule id, or a difficulty outside 1..5.
    """
    rules = tuple(rules)

    def register(gen: Callable[[random.Random], Iterator[Variant]]) -> Family:
        if name in _REGISTRY:
            raise FamilyError(f"family {name!r} is defined twice ({_REGISTRY[name].module}, {gen.__module__})")
        bad = [r for r in rules if r not in _NON_CORE]
        if not rules or bad:
            raise FamilyError(f"family {name!r}: rules must be non-core ids P4-06..P4-30, got {list(rules)}")
        if not 1 <= difficulty <= 5:
            raise FamilyError(f"family {name!r}: difficulty must be 1..5, got {difficulty}")
        fam = Family(name, category, rules, difficulty, gen, (gen.__doc__ or "").strip(), gen.__module__)
        _REGISTRY[name] = fam
        return fam

    return register


def _load_all() -> None:
    from py4.problems import families  # importing registers every family

    families.load_all()


def all_families() -> list[Family]:
    """Every registered family, in registration order (module list order, then source order)."""
    _load_all()
    return list(_REGISTRY.values())


def get_family(name: str) -> Family:
    """The family called ``name``; raises KeyError with did-you-mean suggestions."""
    _load_all()
    if name in _REGISTRY:
        return _REGISTRY[name]
    close = difflib.get_close_matches(name, list(_REGISTRY), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise KeyError(f"unknown family {name!r}{hint} ({len(_REGISTRY)} families; `py4 problems stats` lists them)")


def code(template: str, **params: Any) -> str:
    """Dedent a source template and fill its ``$name`` placeholders.

    ``string.Template`` is used because ``{`` and ``}`` are everywhere in code.
    Raises KeyError when a placeholder has no value.
    """
    text = textwrap.dedent(template).strip("\n") + "\n"
    return string.Template(text).substitute(params)
