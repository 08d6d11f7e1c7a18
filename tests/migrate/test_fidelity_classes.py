"""Shapes of real-world Python 3 that a complete migration got wrong: each either
migrates to a program that compiles and behaves the same, or is reported as not
convertible with its line. Several shapes per class, not one example."""

import pytest

from py4.lang.migrate import migrate

from behaviour_util import diagnostics, run_python3, run_python4


def _same_behaviour(source: str) -> str:
    result = migrate(source, assume_python3=True)
    assert result.ok, result.cannot_convert
    assert diagnostics(result.source) == [], result.source
    assert run_python4(result.source) == run_python3(source), result.source
    return result.source


# -- comparisons with None written without spaces --------------------------------------
NONE_WITHOUT_SPACES = {
    "name": "def f(x):\n    return 1 if x==None else 2\nprint(f(None), f(0))\n",
    "call": "def g(a):\n    return a or None\ndef f(a):\n    return g(a)==None\nprint(f(0), f(3))\n",
    "not-equal": "def f(x):\n    return x!=None\nprint(f(None), f([]))\n",
    "subscript": "def f(xs):\n    return xs[0]==None\nprint(f([None]), f([1]))\n",
    "none-left": "def f(x):\n    return None==x\nprint(f(None), f(2))\n",
    "in-condition": "xs = [None, 1]\nprint([i for i in xs if i!=None])\n",
    "attribute": (
        "class C:\n    v = None\nc = C()\nprint(c.v==None)\nc.v = 1\nprint(c.v!=None)\n"),
    "chained-parens": "def f(a):\n    return (a)==None or(a)!=None\nprint(f(None))\n",
}


@pytest.mark.parametrize("name", sorted(NONE_WITHOUT_SPACES))
def test_a_comparison_with_none_without_spaces_behaves_the_same(name):
    out = _same_behaviour(NONE_WITHOUT_SPACES[name])
    assert "isnil" not in out and "notnil" not in out


def test_a_rewritten_operator_is_kept_apart_from_words_on_both_sides():
    out = migrate("def f(x):\n    return x==None\n").source
    assert "return x is nil" in out
    assert "x is not nil" in migrate("def f(x):\n    return x!=None\n").source


def test_a_helper_call_after_a_keyword_without_space_is_kept_apart():
    # `return(a)//b` puts a helper name right after the keyword `return`
    source = "def f(a, b):\n    return(a)//b\nprint(f(-7, 2), f(7, 2))\n"
    out = _same_behaviour(source)
    assert "returnpy3" not in out


# -- reversed() of a value whose type the migrator cannot prove -----------------------------
REVERSED = {
    "list/tuple/str/range/dict": (
        "def r(v):\n    return list(reversed(v))\n"
        "print(r([1, 2]), r((3, 4)), r('ab'), r(range(3)), r({'a': 1, 'b': 2}))\n"),
    "for-loop": "def r(v):\n    out = []\n    for x in reversed(v):\n        out.append(x)\n"
                "    return out\nprint(r([1, 2, 3]), r('xyz'))\n",
    "comprehension": "def r(v):\n    return [x * 2 for x in reversed(v)]\nprint(r((1, 2)))\n",
    "join": "def r(s):\n    return ''.join(reversed(s))\nprint(r('abc'))\n",
}


@pytest.mark.parametrize("name", sorted(REVERSED))
def test_reversed_of_an_unknown_value_works_for_every_type_python3_reverses(name):
    out = _same_behaviour(REVERSED[name])
    assert "reversed(py3_iter(" not in out


# -- a range bound rewritten into a helper keeps its closed-range correction --------------
RANGE_BOUNDS = {
    "floordiv": "def f(n, k):\n    return list(range(n // k))\nprint(f(7, 2), f(-7, 2))\n",
    "mod": "def f(n, k):\n    return list(range(n % k))\nprint(f(7, 4), f(-7, 4))\n",
    "start-stop": "def f(a, n, k):\n    return list(range(a, n // k))\nprint(f(1, 9, 2))\n",
    "with-step": "def f(n, k):\n    return list(range(0, n // k, 2))\nprint(f(20, 2))\n",
    "negative-index": "def f(xs):\n    return list(range(xs[-1]))\nprint(f([1, 4]))\n",
    "computed-index": "def f(xs, i):\n    return list(range(xs[i]))\nprint(f([3, 5], -1))\n",
    "roman": (
        "def roman(num):\n"
        "    vals = [1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1]\n"
        "    syms = ['M', 'CM', 'D', 'CD', 'C', 'XC', 'L', 'XL', 'X', 'IX', 'V', 'IV', 'I']\n"
        "    out = ''\n"
        "    i = 0\n"
        "    while num > 0:\n"
        "        for _ in range(num // vals[i]):\n"
        "            out += syms[i]\n"
        "            num -= vals[i]\n"
        "        i += 1\n"
        "    return out\n"
        "print(roman(1), roman(4), roman(50), roman(1994))\n"),
}


@pytest.mark.parametrize("name", sorted(RANGE_BOUNDS))
def test_a_range_bound_rewritten_into_a_helper_keeps_its_correction(name):
    _same_behaviour(RANGE_BOUNDS[name])


# -- what Python-4 does not have: reported, with the line, never "complete" ----------------
NOT_CONVERTIBLE = {
    "eval": ("def calc(a, b, op):\n    expr = str(a) + op + str(b)\n    return eval(expr)\n"
             "print(calc(2, 3, '+'))\n", 3, "dynamic code"),
    "exec": ("x = 1\nexec('y = 2')\nprint(x)\n", 2, "dynamic code"),
    "compile": ("code = compile('1 + 1', '<s>', 'eval')\nprint(code)\n", 1, "dynamic code"),
    "dunder-import": ("m = __import__('math')\nprint(m.pi)\n", 1, "dynamic code"),
    "eval-after-let": ("def f():\n    a = 1\n    b = []\n    return eval('a')\nprint(f())\n",
                       4, "dynamic code"),
}


@pytest.mark.parametrize("name", sorted(NOT_CONVERTIBLE))
def test_what_python4_lacks_is_not_a_complete_migration(name):
    source, line, words = NOT_CONVERTIBLE[name]
    result = migrate(source, assume_python3=True)
    assert not result.ok
    assert [c.line for c in result.cannot_convert] == [line]
    assert words in result.cannot_convert[0].reason


def test_a_partial_migration_on_purpose_is_not_checked_for_compiling():
    # skipping a rule leaves Python 3 that need not compile; that is not a refusal
    result = migrate("def f(x):\n    return x\n", skip_rules=["P4-01"])
    assert result.ok


# -- library code that iterates a Python-4 dict as Python 3 would ------------------------
def test_a_python4_dict_handed_to_chainmap_is_not_convertible():
    source = ("from collections import ChainMap\na = {'x': 1}\nb = {'y': 2}\n"
              "cm = ChainMap(a, b)\nprint(cm['x'], sorted(cm))\n")
    result = migrate(source)
    assert [(c.line, "ChainMap" in c.reason) for c in result.cannot_convert] == [(4, True), (4, True)]
    qualified = "import collections\ncm = collections.ChainMap({'x': 1})\nprint(cm['x'])\n"
    assert [c.line for c in migrate(qualified).cannot_convert] == [2]


def test_chainmap_of_python3_mappings_converts_and_behaves_the_same():
    _same_behaviour("from collections import ChainMap, Counter\n"
                    "cm = ChainMap(Counter(a=1), Counter(b=2))\nprint(cm['a'], sorted(cm))\n")


LIBRARY_ITERATION = {
    "itertools.chain": "import itertools\nd = {'a': 1, 'b': 2}\nprint(list(itertools.chain(d, d)))\n",
    "from itertools": "from itertools import permutations\nd = {'a': 1, 'b': 2}\n"
                      "print(list(permutations(d)))\n",
    "functools.reduce": "import functools\nd = {'a': 1, 'b': 2}\n"
                        "print(functools.reduce(lambda s, k: s + k, d, ''))\n",
    "statistics": "import statistics\nd = {1: 'x', 3: 'y'}\nprint(statistics.mean(d))\n",
}


@pytest.mark.parametrize("name", sorted(LIBRARY_ITERATION))
def test_a_python4_dict_iterated_by_library_code_yields_its_keys(name):
    assert ".keys()" in _same_behaviour(LIBRARY_ITERATION[name])


# -- negative indices in assignment targets --------------------------------------------------
NEGATIVE_TARGETS = {
    "negated-name": "def f(ys, i):\n    ys[-i] = 9\n    return ys\nprint(f([1, 2, 3], 1), f([1, 2, 3], 0))\n",
    "negated-expr": "def f(ys, i):\n    ys[-(i + 1)] = 0\n    return ys\nprint(f([1, 2, 3], 1))\n",
    "del-literal": "def f(ys):\n    del ys[-1]\n    return ys\nprint(f([1, 2, 3]))\n",
    "augmented": "def f(ys, k):\n    ys[-k] += 10\n    return ys\nprint(f([1, 2, 3], 2))\n",
    "dict-key": "def f(d, k):\n    d[-k] = 'v'\n    return sorted(d.items())\nprint(f({}, 2))\n",
    "out-of-range": "def f(ys, i):\n    ys[-i] = 0\n    return ys\nprint(f([1], 5))\n",
}


@pytest.mark.parametrize("name", sorted(NEGATIVE_TARGETS))
def test_a_negative_index_in_an_assignment_target_behaves_the_same(name):
    _same_behaviour(NEGATIVE_TARGETS[name])


def test_a_negative_target_on_a_receiver_not_evaluable_twice_is_not_convertible():
    result = migrate("def f(g, i):\n    g()[-i] = 1\n")
    assert [c.line for c in result.cannot_convert] == [2]


# -- the same shapes, differentially: python3 vs `boa run` of the migration ---------------
def fidelity_programs() -> dict[str, str]:
    """Every shape above that must behave the same, by class (also benchmarks/migrate.py's)."""
    classes = {"none-without-spaces": NONE_WITHOUT_SPACES, "reversed": REVERSED,
               "range-bound": RANGE_BOUNDS, "negative-target": NEGATIVE_TARGETS,
               "library-iteration": LIBRARY_ITERATION}
    return {f"{cls}/{name}": source for cls, shapes in classes.items() for name, source in shapes.items()}


def test_every_shape_behaves_the_same_under_python3_and_boa_run():
    from differential import Differential

    with Differential() as differential:
        outcomes = [differential.check(name, source, stdlib=True)
                    for name, source in sorted(fidelity_programs().items())]
    assert [(o.name, o.status, o.reason, o.detail) for o in outcomes if o.status != "pass"] == []
