"""The translation keeps meaning: `boa translate` output runs like the code object, and
where Python-4 and Python 3 agree (non-negative operands, in-range indices) translated
code computes what CPython computes."""

import contextlib
import io
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from py4.lang import compile_py4
from py4.lang.runtime import new_globals

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "benchmarks" / "data" / "program300.py4"


def _run(code) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(code, new_globals())
    return out.getvalue()


def _spec_programs():
    try:
        from py4.lang.spec_examples import parse_examples
    except ImportError:
        return []
    spec = ROOT / "docs" / "python4.md"
    return [e.source for e in parse_examples(spec) if e.kind == "py4" and e.raises is None]


@pytest.mark.parametrize("source", [PROGRAM.read_text(encoding="utf-8"), *_spec_programs()])
def test_translated_source_runs_like_the_code_object(source):
    res = compile_py4(source)
    if not res.ok:
        pytest.skip("not a compiling example")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from_text = compile(res.python_source, "<translated>", "exec", dont_inherit=True)
    assert _run(from_text) == _run(res.code)


def test_program300_output_is_stable():
    out = _run(compile_py4(PROGRAM.read_text(encoding="utf-8")).code)
    assert out.startswith("order of bob failed: only 15 of cheese left\n1. apple (110 @ 0.50)\n")
    assert "[(1, 'a'), (2, 'b')] (-3, -1) -3 1" in out


def test_nested_contexts_for_temporaries():
    src = """
fn rows() -> list:
    return [[1, 2], [3, 4]]
print([x for x in rows()[1]], [[y for y in rows()[r]] for r in [0]])
print([(fun: rows()[1][0])() for _ in [1]], list(x for x in (fun: rows()[0])()))
class K:
    let picks = {k: rows()[k][0] for k in [0, 1]}
    fn m(self, d: int = rows()[1][1]) -> int:
        return d
print(K.picks, K().m())
"""
    res = compile_py4(src)
    assert res.ok, res.diagnostics
    assert _run(res.code) == "[3, 4] [[1, 2]]\n[3] [1, 2]\n{0: 1, 1: 3} 4\n"


def test_annotations_stay_python3():
    py = compile_py4("fn f(x: list[int]) -> dict[str, int]:\n    let y: tuple[int, int] = (1, 2)\n"
                     "    return {:}\n").python_source
    assert "x: list[int]" in py and "-> dict[str, int]" in py and "y: tuple[int, int]" in py


# -- differential: where the languages agree -------------------------------------------
_small = st.integers(0, 9)


def _expr(depth):
    leaf = _small.map(str) | st.just("xs[2]") | st.just("len(xs)")
    if depth == 0:
        return leaf
    sub = _expr(depth - 1)
    binary = st.tuples(sub, st.sampled_from(["+", "*", "//", "%"]), sub).map(
        lambda t: f"({t[0]} {t[1]} ({t[2]} + 1))")  # positive divisors: both languages agree
    index = sub.map(lambda e: f"xs[({e}) % 4]")
    pair = sub.map(lambda e: f"{{'k': {e}}}['k']")
    return leaf | binary | index | pair


@settings(max_examples=120, deadline=2000)
@given(_expr(4))
def test_translation_agrees_with_cpython_where_the_rules_agree(expression):
    source = f"let xs = [5, 6, 7, 8]\nlet result = {expression}\n"
    res = compile_py4(source)
    assert res.ok, [d.render() for d in res.diagnostics]
    namespace = new_globals()
    exec(res.code, namespace)
    expected = {}
    exec(compile(source.replace("let ", ""), "<py3>", "exec"), expected)
    assert namespace["result"] == expected["result"]


# -- the transform never builds code CPython refuses -----------------------------------
_WRAPPERS = [
    "[{} for _v in [1]]", "[_v for _v in [{}]]", "[_v for _v in {}]", "(fun: {})()",
    "{{'k': {}}}", "{{_k: {} for _k in [0]}}", "{{_k: 1 for _k in {}}}", "list(_g for _g in {})",
    "(fun _a=({}): _a)()", "[[_w for _w in {}] for _u in [1]]", "{}[0:0]", "{{{}}}",
]
_CONTEXTS = [
    "let r = {}\n",
    "fn f() -> object:\n    return {}\nf()\n",
    "class C:\n    let r = {}\n",
    "class C:\n    fn m(self, d: object = {}) -> object:\n        return {}\nC().m()\n",
    "let zs = [[0]]\nzs[0][0] //= 1\nlet r = {}\n",
]


@settings(max_examples=150, deadline=2000)
@given(st.lists(st.sampled_from(_WRAPPERS), max_size=4), st.sampled_from(_CONTEXTS),
       st.sampled_from(["g()[0]", "g()[0:0]", "h()[0] // 1", "g()[0]", "h()['x'.trim()]"]))
def test_transform_output_always_compiles(wrappers, context, core):
    expression = core
    for wrapper in wrappers:
        expression = wrapper.format(expression)
    source = ("fn g() -> list:\n    return [[0]]\nfn h() -> dict:\n    return {:}\n"
              + context.replace("{}", expression))
    res = compile_py4(source)
    assert res.ok, [d.render() for d in res.diagnostics] + [source]
