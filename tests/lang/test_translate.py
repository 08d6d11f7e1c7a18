"""Token rewrite, column map and the AST transform (checked by running the code)."""

import pytest

from py4.lang import compile_py4
from py4.lang.runtime import new_globals
from py4.lang.tokens import rewrite_tokens

from lang_helpers import run_py4 as run


# -- token pass ----------------------------------------------------------------------
def test_keywords_are_rewritten_and_lines_kept():
    src = "use math\nfn f(x: int) -> nil:\n    let y = {:}\n    throw ValueError(i'{x}')\n"
    tp = rewrite_tokens(src)
    assert tp.text == ("import math\ndef f(x: int) -> None:\n    y = {}\n"
                       "    raise ValueError(f'{x}')\n")
    assert len(tp.py3_lines) == len(tp.py4_lines)


def test_column_map_points_into_python4_text():
    tp = rewrite_tokens("let xyz = nil; let b = fun q: q\n")
    py3 = tp.py3_lines[0]
    assert py3 == "xyz = None; b = lambda q: q\n"
    assert tp.py4_position(1, py3.index("xyz")) == (1, 4)
    assert tp.py4_position(1, py3.index("b =")) == (1, 19)
    assert tp.py4_position(1, py3.index("q:")) == (1, 27)
    assert tp.py4_position(1, py3.index("None") + 2) == (1, 10)  # inside a replacement


@pytest.mark.parametrize("source, col", [
    ("fn area(nil: int) -> int:\n    return 1\n", 8), ("fn use() -> nil:\n    pass\n", 3),
    ("let true = 1\n", 4), ("for fun in [1]:\n    pass\n", 4), ("print(x, use=1)\n", 9),
])
def test_reserved_words_as_names_are_named(source, col):
    (diag,) = compile_py4(source).diagnostics
    assert (diag.rule, diag.col) == ("P4-00", col)
    assert diag.message.endswith("is a reserved word in Python-4")


def test_relative_use_and_reserved_helper_prefixes():
    assert compile_py4("from . use sibling\nfrom .. use x\nfrom .pkg use y\n").ok
    (diag,) = compile_py4("let py3_total = 1\n").diagnostics
    assert diag.message == "`py3_total` is reserved for the Python-4 runtime"


def test_a_comment_ending_in_a_dot_does_not_hide_the_next_keyword():
    assert compile_py4("# the end.\nuse math\nlet x = obj.\\\n    use\n").python_source.startswith(
        "import math\nx = obj.use")


def test_names_after_a_dot_and_inside_strings_are_left_alone():
    tp = rewrite_tokens("print(obj.use, 'fn nil', x.true)  # let fn\n")
    assert tp.text == "print(obj.use, 'fn nil', x.true)  # let fn\n"


@pytest.mark.parametrize("py4, py3", [
    ("ri'{x}'", "rf'{x}'"), ("Ir'{x}'", "fr'{x}'"), ("I'{x}'", "f'{x}'"),
    ("{ : }", "{}"),
])
def test_prefix_and_brace_forms(py4, py3):
    assert rewrite_tokens(f"print({py4})\n").text == f"print({py3})\n"


def test_columns_after_non_ascii_text_are_characters():
    res = compile_py4("let s = 'héllo'; x = 1\n")
    (diag,) = res.diagnostics
    assert (diag.rule, diag.col) == ("P4-02", 17)


def test_all_python3_spellings_are_reported_not_just_the_first():
    src = ("import os\ndef f(x):\n    if x:\n        return None\n    elif True:\n"
           "        raise ValueError(f'{x}')\n    return lambda: False\n"
           "try:\n    pass\nexcept ValueError:\n    pass\n")
    res = compile_py4(src)
    found = [(d.rule, d.line, d.col) for d in res.errors]
    assert found == [("P4-10", 1, 0), ("P4-01", 2, 0), ("P4-04", 4, 15), ("P4-03", 5, 4),
                     ("P4-04", 5, 9), ("P4-07", 6, 8), ("P4-08", 6, 25), ("P4-09", 7, 11),
                     ("P4-04", 7, 19), ("P4-06", 10, 0)]


def test_syntax_errors_speak_python4_at_python4_positions():
    (diag,) = compile_py4("let x = nil\nlet y = (1 +\n").diagnostics
    assert diag.rule == "P4-00" and diag.line == 2
    assert "__p4__" not in diag.message
    (diag,) = compile_py4("let   nil_x = 1\nnil = 3\n").diagnostics
    assert (diag.rule, diag.line, diag.col, diag.message) == (
        "P4-00", 2, 0, "`nil` is a reserved word in Python-4")
    (diag,) = compile_py4("let x = 1\nprint(x nil)\n").diagnostics
    assert diag.message.startswith("syntax error: ") and "None" not in diag.message
    (diag,) = compile_py4("try:\n    pass\nlet x = 1\n").diagnostics
    assert "catch" in diag.message and "except" not in diag.message


# -- the transform, by behaviour ------------------------------------------------------------
def test_translation_uses_the_contract_helpers():
    src = ("let d = {'a': 1}\nlet e = {:}\nlet s = {}\nlet xs = [1, 2, 3]\n"
           "print(xs[0], xs[0:1], 7 // 2, 7 % 2, xs.pop(), [''].join(','), ' a'.trim())\n")
    py = compile_py4(src).python_source
    for fragment in ("__p4__.Dict({'a': 1})", "e = __p4__.Dict()", "s = set()",
                     "xs[__p4__.index(xs, 0)]", "__p4__.getslice(xs, 0, 1, None)",
                     "__p4__.floordiv(7, 2)", "__p4__.mod(7, 2)", "__p4__.pop(xs)",
                     "__p4__.join([''], ',')", "__p4__.attr(' a', 'trim')()"):
        assert fragment in py


def test_receivers_and_indices_are_evaluated_once():
    src = """
let log = []
fn get(tag: str, value: object) -> object:
    log.append(tag)
    return value
let xs = [10, 20, 30]
print(get('r', xs)[get('i', 1)])
get('r', xs)[get('i', 0)] = 5
get('r', xs)[get('i', 1)] += 1
get('r', xs)[get('i', 2)] //= 4
get('r', xs)[get('i', 0):get('j', 0)] = [7]
del get('r', xs)[get('i', 2)]
print(xs, log.join(''))
"""
    assert run(src) == "20\n[7, 21] riririririjri\n"


def test_attribute_augmented_floordiv_evaluates_object_once():
    src = """
class Box:
    let v = -7
let calls = [0]
fn box() -> Box:
    calls[0] += 1
    return b
let b = Box()
box().v //= 2
box().v %= 2
print(b.v, calls)
"""
    assert run(src) == "-1 [2]\n"


def test_subscripts_inside_comprehensions_and_lambdas():
    src = """
fn rows() -> list:
    return [[1, 2], [3, 4]]
print([rows()[i][0] for i in indices(rows())], [x for x in rows()[1]])
let pick = fun k: rows()[k][1]
print(pick(1), {k: rows()[k] for k in [0]})
class C:
    let data = [[5, 6]]
    let firsts = [r[0] for r in [[9]]]
    let got = data[0][1]
print(C.firsts, C.got, [n for n in vars(C) if 'p4' in n])
"""
    assert run(src) == "[1, 3] [3, 4]\n4 {0: [1, 2]}\n[9] 6 []\n"


def test_semantics_of_translated_operators():
    src = """
let xs = [1, 2, 3, 4]
let x = -7
x //= 2
let y = -7
y %= 2
print(xs[1:2], xs[::-1], -7 // 2, -7 % 2, x, y, '%d!' % 3)
let d = {'a': 1, 'b': 2}
print([p for p in d], type({}).__name__, type({:}).__name__, {:})
print(i"{nil} {true} {false} {xs[0]}")
"""
    assert run(src) == ("[2, 3] [4, 3, 2, 1] -3 -1 -3 -1 3!\n"
                        "[('a', 1), ('b', 2)] set dict {}\nNone True False 1\n")


def test_code_object_lines_are_python4_lines():
    src = "let a = 1\n\nfn boom() -> nil:\n    let xs = [1]\n    print(xs[a])\nboom()\n"
    res = compile_py4(src, "prog.py4")
    try:
        exec(res.code, new_globals())
    except IndexError as exc:
        tb = exc.__traceback__
        while tb.tb_next is not None:
            tb = tb.tb_next
            if tb.tb_frame.f_code.co_filename == "prog.py4":
                last = tb.tb_lineno
        assert last == 5
    else:
        pytest.fail("expected an IndexError")


def test_python_source_is_lazy_and_none_when_not_compiled():
    assert compile_py4("x = 1\n").python_source is None
    res = compile_py4("let x = 1\n")
    assert "python_source" not in vars(res)
    assert res.python_source == "x = 1"
