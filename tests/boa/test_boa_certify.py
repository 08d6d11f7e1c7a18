"""Certification: strict JSON results, trusted comparison, certificates."""

from __future__ import annotations

import json
import math

import pytest

from problems_for_tests import Case, Task
from py4.boa.certify import (CertifiableProblem, CertifiableTest, Certificate, certify, certify_many,
                             values_equal)
from py4.boa.child import Unserialisable, strict_json
from py4.boa.executor import Executor
from py4.problems.schema import Problem

GOLD = "fn add(a: int, b: int) -> int:\n    return a + b\n"


def _problem(tests, entry_point="add", pid="t/add") -> Problem:
    return Problem(id=pid, family="t", title="t", prompt="t", entry_point=entry_point, tests=tests)


ADD = _problem([{"args": [1, 2], "expected": 3}, {"args": [-4, 1], "expected": -3},
                {"args": [], "kwargs": {"a": 5, "b": 6}, "expected": 11}])


@pytest.fixture(scope="module")
def ex():
    with Executor(workers=2, timeout_s=1.0) as executor:
        yield executor


# ----------------------------------------------------------------------------- comparing

@pytest.mark.parametrize("expected, actual, tolerance, equal", [
    (3, 3, None, True),
    (3, 3.0, None, True),
    (1, True, None, False),
    (True, 1, None, False),
    (False, False, None, True),
    (0.1 + 0.2, 0.3, None, False),
    (0.1 + 0.2, 0.3, 1e-9, True),
    (1.5, float("nan"), 1e9, False),
    (float("nan"), float("nan"), None, False),
    ("a", "a", None, True),
    ("1", 1, None, False),
    (None, None, None, True),
    (None, 0, None, False),
    ([1, [2, 3]], [1, [2, 3]], None, True),
    ((1, 2), [1, 2], None, True),
    ([1, 2], (1, 2), None, True),
    ([1, 2], [1, 2, 3], None, False),
    ({"a": [1.0]}, {"a": [1.0000001]}, 1e-3, True),
    ({"a": 1}, {"a": 1, "b": 2}, None, False),
    (10 ** 400, 10 ** 400, 1e-9, True),
    (10 ** 400, 10 ** 400 + 1, 1e-9, False),
])
def test_values_equal(expected, actual, tolerance, equal):
    assert values_equal(expected, actual, tolerance) is equal


# ----------------------------------------------------------------------------- serialising

def test_strict_json_normalises_subclasses():
    class Liar(int):
        def __eq__(self, other):
            return True

        def __repr__(self):
            return "999"

    class Text(str):
        def __str__(self):
            return "lie"

    assert strict_json([Liar(5), Text("truth"), (1, 2.5), {"k": None, 3: True}]) == \
        '[5,"truth",[1,2.5],{"k":null,"3":true}]'
    assert json.loads(strict_json({"x": [1, "é", False]})) == {"x": [1, "é", False]}


@pytest.mark.parametrize("value", [float("nan"), math.inf, {1, 2}, b"x", object(), iter([]),
                                   {(1, 2): 3}, pytest.param(10 ** 5000, id="huge_int")])
def test_strict_json_rejects_non_json(value):
    with pytest.raises(Unserialisable):
        strict_json(value)


def test_strict_json_limits_depth_and_size():
    deep = []
    for _ in range(500):
        deep = [deep]
    with pytest.raises(Unserialisable):
        strict_json(deep)
    with pytest.raises(Unserialisable):
        strict_json("x" * 2_000_000)


# ----------------------------------------------------------------------------- certify

def test_gold_certifies(ex):
    cert = certify(ADD, GOLD, executor=ex)
    assert cert.certified and cert.compiled and (cert.tests_passed, cert.tests_total) == (3, 3)
    assert cert.status == "ok" and cert.failures == [] and cert.duration_s > 0
    assert "P4-01" in cert.rules_exercised
    assert set(cert.to_json()) >= {"certified", "compiled", "tests_passed", "tests_total", "warnings",
                                   "diagnostics", "rules_exercised", "duration_s", "status", "failures"}


def test_wrong_answer_and_failures_hide_expected_values(ex):
    cert = certify(ADD, "fn add(a: int, b: int) -> int:\n    return a - b\n", executor=ex)
    assert not cert.certified and cert.tests_passed == 0
    assert cert.failures[0] == {"test": 0, "reason": "wrong_answer"}
    assert "3" not in json.dumps(cert.failures).replace('"test": 0', "")


def test_warning_blocks_certification(ex):
    cert = certify(ADD, "fn add(a, b):\n    return a + b\n", executor=ex)
    assert cert.tests_passed == 3 and not cert.certified
    assert [w["rule"] for w in cert.warnings] == ["P4-05"]


def test_compile_error_certificate(ex):
    cert = certify(ADD, "def add(a, b):\n    return a + b\n", executor=ex)
    assert not cert.compiled and not cert.certified and cert.status == "compile_error"
    assert cert.tests_total == 3 and cert.tests_passed == 0


def test_runtime_error_in_one_test(ex):
    source = "fn add(a: int, b: int) -> int:\n    if a < 0:\n        throw ValueError('neg')\n    return a + b\n"
    cert = certify(ADD, source, executor=ex)
    assert cert.tests_passed == 2
    assert cert.failures == [{"test": 1, "reason": "error", "type": "ValueError", "line": 3}]


def test_dict_inputs_are_python4_dicts(ex):
    problem = _problem([{"args": [{"a": 1, "b": 2}], "expected": ["a1", "b2"]}], entry_point="pairs")
    source = ("fn pairs(d: dict) -> list:\n    let out = []\n    for k, v in d:\n"
              "        out.append(i\"{k}{v}\")\n    return out\n")
    assert certify(problem, source, executor=ex).certified


def test_tuples_and_float_tolerance(ex):
    problem = _problem([{"args": [1.0, 3.0], "expected": [0.3333333, 3], "tolerance": 1e-6}],
                       entry_point="div")
    source = "fn div(a: float, b: float) -> tuple:\n    return (a / b, 3)\n"
    assert certify(problem, source, executor=ex).certified


def test_per_test_timeout(ex):
    source = "fn add(a: int, b: int) -> int:\n    while a == -4:\n        pass\n    return a + b\n"
    cert = certify(ADD, source, executor=ex, per_test_timeout_s=0.3)
    assert cert.tests_passed == 1 and cert.status == "timeout"
    assert cert.failures == [{"test": 1, "reason": "timeout"}, {"test": 2, "reason": "not_run"}]


def test_missing_entry_point(ex):
    cert = certify(ADD, "fn plus(a: int, b: int) -> int:\n    return a + b\n", executor=ex)
    assert not cert.certified and cert.failures[0]["type"] == "NameError"


def test_certify_many_in_order(ex):
    pairs = [(ADD, GOLD), (ADD, "fn add(a: int, b: int) -> int:\n    return 0\n")] * 4
    certs = certify_many(pairs, executor=ex)
    assert [c.certified for c in certs] == [True, False] * 4
    assert all(isinstance(c, Certificate) for c in certs)


def test_certify_without_executor():
    assert certify(ADD, GOLD).certified


def test_main_guard_does_not_run_during_certification(ex):
    source = GOLD + 'if __name__ == "__main__":\n    print(add(int(input()), 1))\n'
    assert certify(ADD, source, executor=ex).certified
    assert ex.run(source).status == "runtime_error"  # as a program, it reads the empty stdin


# ----------------------------------------------------------------------------- what a problem is

def test_anything_shaped_like_a_problem_is_certified(ex):
    """Boa needs no problem bank: an id, an entry point and tests of inputs and expected values will do."""
    task = Task("plain/add", "add", [Case([1, 2], {}, 3), Case([], {"a": 2, "b": 2}, 4),
                                     Case([0.1, 0.2], {}, 0.3, tolerance=1e-9)])
    assert certify(task, GOLD, executor=ex).certified
    product = certify(task, GOLD.replace("a + b", "a * b"), executor=ex)
    assert (product.certified, product.tests_passed) == (False, 1)
    assert product.failures == [{"test": 0, "reason": "wrong_answer"}, {"test": 2, "reason": "wrong_answer"}]


def test_bank_problems_are_certifiable():
    assert isinstance(ADD, CertifiableProblem)
    assert all(isinstance(test, CertifiableTest) for test in ADD.tests)
