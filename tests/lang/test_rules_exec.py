"""Every rule, run: its valid form compiles cleanly and runs; its Python 3 habit gives
the documented diagnostic (syntax, core and lint rules) or a different behaviour
(semantic rules: an exception, or output that differs from CPython's)."""

import contextlib
import io

import pytest

from py4.lang import RULES, compile_py4
from py4.lang.runtime import new_globals


def run_py4(source):
    res = compile_py4(source)
    assert res.ok, [d.render() for d in res.diagnostics]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            exec(res.code, new_globals())
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            return out.getvalue(), exc
    return out.getvalue(), None


def run_cpython(source):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source.replace("let ", ""), "<py3>", "exec"), {})
    return out.getvalue()


@pytest.mark.parametrize("rule_id", list(RULES))
def test_valid_form_compiles_cleanly_and_runs(rule_id):
    rule = RULES[rule_id]
    assert compile_py4(rule.example).diagnostics == []
    _, error = run_py4(rule.example)
    assert error is None, repr(error)


STATIC_RULES = [r.id for r in RULES.values() if r.kind != "semantics"]
SEMANTIC_RULES = [r.id for r in RULES.values() if r.kind == "semantics"]


@pytest.mark.parametrize("rule_id", STATIC_RULES)
def test_python3_form_gets_the_rules_diagnostic_and_only_that(rule_id):
    rule = RULES[rule_id]
    diagnostics = compile_py4(rule.python3_example).diagnostics
    assert diagnostics and {d.rule for d in diagnostics} == {rule_id}
    expected = "warning" if rule.kind == "lint" or rule_id == "P4-05" else "error"
    assert {d.severity for d in diagnostics} == {expected}
    assert all(d.fix for d in diagnostics)


# What the Python 3 habit of each semantic rule runs into under Python-4.
SEMANTIC_OUTCOMES = {
    "P4-12": IndexError, "P4-13": "[1, 2, 3]\n", "P4-15": TypeError, "P4-16": KeyError,
    "P4-17": "1\n", "P4-18": TypeError, "P4-19": "1 a\n2 b\n", "P4-20": ValueError,
    "P4-21": TypeError, "P4-22": "3\n", "P4-23": "-3 -1\n", "P4-24": AttributeError,
}


@pytest.mark.parametrize("rule_id", SEMANTIC_RULES)
def test_python3_habit_behaves_differently(rule_id):
    rule = RULES[rule_id]
    assert compile_py4(rule.python3_example).diagnostics == []
    output, error = run_py4(rule.python3_example)
    expected = SEMANTIC_OUTCOMES[rule_id]
    if isinstance(expected, str):
        assert error is None and output == expected
        assert run_cpython(rule.python3_example) != expected
    else:
        assert isinstance(error, expected), repr(error)


def test_join_on_a_separator_says_join_belongs_to_the_iterable():
    _, error = run_py4(RULES["P4-18"].python3_example)
    assert "join belongs to the iterable" in str(error)


def test_strip_names_the_new_method():
    _, error = run_py4(RULES["P4-24"].python3_example)
    assert "trim" in str(error)
