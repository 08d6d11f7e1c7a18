"""The problem contract: what a Python-4 problem is, as JSON.

Tests are structured inputs with expected outputs. The solution's process only ever
sees ``args``/``kwargs``; the trusted side compares the returned value with
``expected``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pydantic

from py4.errors import FileFormatError, where
from py4.fileio import iter_jsonl, read_json_object

__all__ = ["TestCase", "Problem", "SPLITS", "CANARY", "load_problem", "load_problems"]

SPLITS = ("eft_pool", "grpo", "test_heldin", "test_heldout", "eft_large", "train_sanity", "imported")

# A canary string lets anyone detect the bank in a training corpus.
CANARY = "PY4-BANK-CANARY 7f3c2a9e-1d4b-4e8a-9c61-python4-problem-bank"

_RULE_ID = re.compile(r"^P4-\d\d$")


_MIGRATION_HELPER = re.compile(r"\bpy3_\w+")


def migration_helper_in(gold: str) -> str | None:
    """The first `py3_*` migration helper `gold` calls, or None."""
    found = _MIGRATION_HELPER.search(gold)
    return found.group() if found else None


def gold_is_idiomatic(gold: str) -> bool:
    """Whether a gold solution is Python-4 to learn from: no `py3_*` migration helper."""
    return migration_helper_in(gold) is None


class TestCase(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)
    __test__ = False  # not a pytest class

    args: list[Any] = pydantic.Field(default_factory=list)
    kwargs: dict[str, Any] = pydantic.Field(default_factory=dict)
    expected: Any = None
    tolerance: float | None = pydantic.Field(default=None, ge=0)


class Problem(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    id: str = pydantic.Field(pattern=r"^[a-z0-9_\-]+/[A-Za-z0-9_\-]+$")
    family: str
    title: str
    prompt: str
    entry_point: str = pydantic.Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    signature: str = ""
    tests: list[TestCase] = pydantic.Field(min_length=1)
    rules: list[str] = pydantic.Field(default_factory=list)
    split: str = "eft_pool"
    gold: str = ""
    reference_py3: str = ""
    difficulty: int = pydantic.Field(default=1, ge=1, le=5)
    provenance: dict[str, Any] = pydantic.Field(default_factory=dict)
    canary: str = CANARY
    bank_version: str = ""

    @pydantic.field_validator("rules")
    @classmethod
    def _rule_ids(cls, rules: list[str]) -> list[str]:
        bad = [r for r in rules if not _RULE_ID.match(r)]
        if bad:
            raise ValueError(f"rule ids must look like P4-NN, got {bad}")
        return rules

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def _validation_summary(exc: pydantic.ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())


def load_problem(path: str | Path) -> Problem:
    """Load one problem JSON file; raises FileFormatError (a ValueError) naming the file and the fields."""
    data = read_json_object(path, missing="no such problem file")
    try:
        return Problem.model_validate(data)
    except pydantic.ValidationError as exc:
        raise FileFormatError(f"{path}: invalid problem: {_validation_summary(exc)}") from None


def load_problems(path: str | Path) -> list[Problem]:
    """Load a JSONL file of problems; errors name the file and line."""
    out = []
    for lineno, row in iter_jsonl(path):
        try:
            out.append(Problem.model_validate(row))
        except pydantic.ValidationError as exc:
            raise FileFormatError(f"{where(path, lineno)}: invalid problem: {_validation_summary(exc)}") from None
    return out
