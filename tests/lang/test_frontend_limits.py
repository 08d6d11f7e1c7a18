"""i-string interiors, the diagnostics cap, positions of "too deep", and the rules
exercised by counting from the end (P4-14 slice bounds, P4-17's own fix)."""

import pytest

from py4.lang import compile_py4
from py4.lang.compile import MAX_DIAGNOSTICS
from py4.lang.istrings import field_regions

from lang_helpers import run_py4 as run


# -- i-strings -------------------------------------------------------------------------
@pytest.mark.parametrize("body, fields", [
    ("{x}", ["x"]), ("{{x}}", []), ("{{{x}}}", ["x"]), ("{x!r:>{w}}", ["x", "w"]),
    ("{d['}']}", ["d['}']"]), ("{a != b}", ["a != b"]), ("{ {:} }", [" {:} "]),
    ("{(fun y: y)(1):5}", ["(fun y: y)(1)"]), ("a {x", ["x"]),
])
def test_field_regions(body, fields):
    assert [body[a:b] for a, b in field_regions(body, 0, len(body))] == fields


def test_python4_code_inside_i_string_braces():
    source = ('let xs = [1, 2]\nprint(i"{nil} {true} {len({:})} {(fun y: y + 1)(1)}", '
              'i"""\n{ {:} == {:} }""", i"{ {1: 2}[1] }")\n')
    assert run(source) == "None True 0 2 \nTrue 2\n"


@pytest.mark.parametrize("source, kind, col", [
    ('print(i"{None}")\n', "P4-04", 9), ('print(i"{x} {(lambda: 1)()}")\n', "P4-09", 14),
    ('print(i"{True:>5}")\n', "P4-04", 9),
])
def test_python3_spellings_inside_i_string_braces_are_reported(source, kind, col):
    diags = compile_py4(source).diagnostics
    assert [(d.rule, d.line, d.col) for d in diags] == [(kind, 1, col)]


def test_words_in_the_literal_part_of_an_i_string_are_text():
    assert run('print(i"nil {{nil}} None {1}")\n') == "nil {nil} None 1\n"


# -- diagnostics cap -----------------------------------------------------------------
def test_diagnostics_are_capped_with_a_final_note():
    res = compile_py4("print(None)\n" * 150)
    assert len(res.diagnostics) == MAX_DIAGNOSTICS + 1
    note = res.diagnostics[-1]
    assert (note.rule, note.severity, note.line) == ("P4-00", "error", MAX_DIAGNOSTICS + 1)
    assert note.message == "too many diagnostics: 50 more not shown"


def test_cap_keeps_ok_false_when_only_dropped_findings_are_errors():
    source = "fn f(x) -> int:\n    return x\n" * 120 + "print(None)\n"
    res = compile_py4(source)
    assert not res.ok and res.diagnostics[-1].severity == "error"
    warnings_only = compile_py4("fn f(x) -> int:\n    return x\n" * 120)
    assert warnings_only.ok and warnings_only.diagnostics[-1].severity == "warning"


# -- too deep: the best position known ----------------------------------------------------
@pytest.mark.parametrize("source, line", [
    ("print(1)\nlet x = " + "1 + " * 20_000 + "1\n", 2),       # parser: recursion
    ("print(1)\nlet x = " + "not " * 10_000 + "y\n", 2),       # parser: stack overflow
    ("print(1)\n\nlet x = y" + "[0]" * 20_000 + "\n", 3),
])
def test_too_deep_points_at_the_offending_line(source, line):
    diags = [d for d in compile_py4(source).diagnostics if "nested too deeply" in d.message]
    assert diags and diags[0].line == line


def test_too_deep_in_the_analysis_points_at_the_deepest_node():
    source = "print(1)\nlet x = " + "[" * 190 + "]" * 190 + "\n"
    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(150)  # the tree parses; the analysis walk runs out of stack
    try:
        diags = compile_py4(source).diagnostics
    finally:
        sys.setrecursionlimit(limit)
    assert [(d.line, "nested too deeply" in d.message) for d in diags] == [(2, True)]
    assert diags[0].col > 8


# -- rules exercised: counting from the end -------------------------------------------------
@pytest.mark.parametrize("source, rule, exercised", [
    ("let xs = [1]\nprint(xs[len(xs) - 1:])\n", "P4-14", True),
    ("let xs = [1]\nprint(xs[0:len(xs) - 1])\n", "P4-14", True),
    ("let xs = [1]\nprint(xs[0:1])\n", "P4-14", False),
    ("let xs = [1]\nprint(xs.pop(len(xs) - 1))\n", "P4-17", True),
    ("let xs = [1]\nprint(xs.pop())\n", "P4-17", True),
    ("let xs = [1]\nprint(xs.pop(0))\n", "P4-17", False),
    ("let d = {1: 2}\nprint(d.pop(1))\n", "P4-17", False),
])
def test_counting_from_the_end_exercises_the_rule(source, rule, exercised):
    assert (rule in compile_py4(source).rules_exercised) is exercised
