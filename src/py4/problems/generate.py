"""Turn families into problems: draw distinct variants, run the Python 3 reference.

Expected outputs come from running the *reference* in this process under CPython: the
reference is trusted code written by the bank's authors, never model output. The gold
solution is checked against those outputs later, under Boa (``py4 problems validate``).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from dataclasses import dataclass
from typing import Any

from py4.lang.runtime_dict import TUPLE_KEY, to_py3
from py4.problems.family import Call, Family, FamilyError, Variant
from py4.problems.schema import CANARY, Problem, TestCase

__all__ = ["GeneratedProblem", "generate_family", "run_reference", "load_reference", "to_json_value",
           "to_test_value", "PROMPT_TEMPLATE"]

PROMPT_TEMPLATE = "{task}\n\nWrite it in Python-4. Signature:\n\n    {signature}\n"

# A family whose parameter space is small stops yielding new variants; give up after
# this many consecutive duplicates rather than looping forever.
_MAX_DUPLICATES_IN_A_ROW = 200


@dataclass(frozen=True)
class GeneratedProblem:
    """A problem without id and split (those depend on the whole bank)."""

    family: Family
    index: int  # position among the family's distinct variants
    variant: Variant
    tests: list[TestCase]

    def to_problem(self, id_: str, split: str, seed: int, bank_version: str) -> Problem:
        v = self.variant
        return Problem(
            id=id_,
            family=self.family.name,
            title=v.title,
            prompt=PROMPT_TEMPLATE.format(task=v.task.strip(), signature=v.signature()),
            entry_point=v.entry_point,
            signature=v.signature(),
            tests=self.tests,
            rules=sorted(v.rules or self.family.rules),
            split=split,
            gold=v.gold,
            reference_py3=v.reference,
            difficulty=v.difficulty or self.family.difficulty,
            provenance={
                "source": "generated",
                "family": self.family.name,
                "category": self.family.category,
                "module": self.family.module,
                "seed": seed,
                "variant": self.index,
                "params": v.params,
            },
            canary=CANARY,
            bank_version=bank_version,
        )


def to_json_value(value: Any, where: str = "value") -> Any:
    """The strict-JSON form of a return value (tuples become lists).

    Raises FamilyError for values JSON cannot carry faithfully: non-str dict keys,
    NaN/inf, sets, objects.
    """
    return _json_form(value, where, keep_tuples=False)


def to_test_value(value: Any, where: str = "value") -> Any:
    """The JSON form of a test *input*: as `to_json_value`, but a tuple stays a tuple
    (`{TUPLE_KEY: [...]}`, restored by `to_py3`/`to_py4` where the program receives it),
    so code that hashes, concatenates or type-checks its tuple argument behaves the same.

    Raises FamilyError as `to_json_value` does.
    """
    return _json_form(value, where, keep_tuples=True)


def _json_form(value: Any, where: str, keep_tuples: bool) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise FamilyError(f"{where}: non-finite float {value!r} is not JSON")
        return value
    if isinstance(value, (list, tuple)):
        items = [_json_form(x, where, keep_tuples) for x in value]
        return {TUPLE_KEY: items} if keep_tuples and isinstance(value, tuple) else items
    if isinstance(value, dict):
        bad = [k for k in value if not isinstance(k, str)]
        if bad:
            raise FamilyError(f"{where}: dict keys must be str for JSON, got {bad[:3]!r}")
        if keep_tuples and list(value) == [TUPLE_KEY]:
            raise FamilyError(f"{where}: a dict whose only key is {TUPLE_KEY!r} stands for a tuple")
        return {k: _json_form(v, where, keep_tuples) for k, v in value.items()}
    raise FamilyError(f"{where}: {type(value).__name__} is not a JSON value")


def load_reference(reference: str, entry_point: str) -> Any:
    """Exec the Python 3 reference and return its entry point (a Python function).

    Raises FamilyError when it does not compile or run, or lacks the entry point.
    """
    namespace: dict[str, Any] = {"__name__": "reference"}
    try:
        exec(compile(reference, "<reference>", "exec"), namespace)
    except Exception as exc:  # the reference is ours: any failure is a family bug
        raise FamilyError(f"reference does not run: {type(exc).__name__}: {exc}") from exc
    fn = namespace.get(entry_point)
    if not callable(fn):
        raise FamilyError(f"reference defines no function {entry_point!r}")
    return fn


def run_reference(reference: str | Any, entry_point: str, call: Call) -> Any:
    """Run the Python 3 reference (source, or a loaded entry point) on one input in-process.

    Returns the JSON form of the result. Raises FamilyError when the reference does not
    load, raises, or returns a non-JSON value.
    """
    fn = load_reference(reference, entry_point) if isinstance(reference, str) else reference
    args, kwargs = to_py3(call.args), to_py3(call.kwargs)  # fresh copies, tuples restored
    try:
        result = fn(*args, **kwargs)
    except Exception as exc:
        raise FamilyError(f"reference raised on args={call.args!r}: {type(exc).__name__}: {exc}") from exc
    return to_json_value(result, f"{entry_point}{tuple(call.args)!r}")


def _check_inputs_are_json(call: Call, where: str) -> None:
    if to_json_value(call.args, where) != call.args or to_json_value(call.kwargs, where) != call.kwargs:
        raise FamilyError(f"{where}: test inputs must be plain JSON (lists, not tuples)")


def _variant_key(v: Variant) -> str:
    # Inputs are not part of the key: a problem is distinct by its code, not by its random tests.
    blob = json.dumps([v.entry_point, v.reference, v.gold, v.task], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def _tests_for(v: Variant) -> list[TestCase]:
    tests = []
    seen = set()
    fn = load_reference(v.reference, v.entry_point)
    for call in v.calls():
        _check_inputs_are_json(call, f"{v.entry_point} inputs")
        key = json.dumps([call.args, call.kwargs], sort_keys=True)
        if key in seen:  # duplicate random inputs add nothing
            continue
        seen.add(key)
        expected = run_reference(fn, v.entry_point, call)
        tests.append(TestCase(args=call.args, kwargs=call.kwargs, expected=expected, tolerance=v.tolerance))
    return tests


def generate_family(fam: Family, seed: int, count: int) -> list[GeneratedProblem]:
    """Up to ``count`` distinct problems of ``fam`` (fewer if its space is exhausted).

    The family's rng is seeded from (seed, family name) only, so adding or removing
    other families never changes this family's problems. Raises FamilyError (naming
    the family and variant) when a variant is malformed or its reference fails.
    """
    rng = random.Random(f"py4-bank:{seed}:{fam.name}")
    out: list[GeneratedProblem] = []
    seen: set[str] = set()
    duplicates = 0
    for variant in fam.variants(rng):
        if len(out) >= count or duplicates >= _MAX_DUPLICATES_IN_A_ROW:
            break
        key = _variant_key(variant)
        if key in seen:
            duplicates += 1
            continue
        duplicates = 0
        seen.add(key)
        try:
            variant.signature()
            tests = _tests_for(variant)
        except FamilyError as exc:
            raise FamilyError(f"family {fam.name!r} variant {len(out)} ({variant.title!r}): {exc}") from exc
        if len(tests) < 3:
            raise FamilyError(f"family {fam.name!r} variant {len(out)}: only {len(tests)} distinct tests (need >= 3)")
        out.append(GeneratedProblem(fam, len(out), variant, tests))
    return out
