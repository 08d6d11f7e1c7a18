"""The semantic rules end to end: Python-4 source → compile_py4 → exec with new_globals().

Random programs built from the spec's slice and arithmetic forms are compared with the
brute-force references of test_runtime_properties, so a translator that passes the wrong
bound, step or receiver to the runtime fails here even when the runtime is right.
"""
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from lang_helpers import run_py4


def reference_positions(n, a, b, s):
    """The spec, literally: positions a, a+s, … up to b inclusive, kept when inside 0 … n-1."""
    s = 1 if s is None else s
    a = (0 if s > 0 else n - 1) if a is None else a
    b = (n - 1 if s > 0 else 0) if b is None else b
    positions, p = [], a
    while (s > 0 and p <= b) or (s < 0 and p >= b):
        if 0 <= p < n:
            positions.append(p)
        p += s
    return positions

lists = st.lists(st.integers(0, 99), max_size=8)
bounds = st.none() | st.integers(-10, 10)
steps = st.none() | st.integers(-3, 3).filter(bool)


def slice_text(a, b, s) -> str:
    """`a:b:s` with omitted parts left out; bounds come from variables (negatives allowed)."""
    text = ("" if a is None else "a") + ":" + ("" if b is None else "b")
    return text + ("" if s is None else ":s")


def declarations(xs, a, b, s) -> str:
    return f"let xs = {xs!r}\nlet a = {a!r}\nlet b = {b!r}\nlet s = {s!r}\n".replace("None", "nil")


@settings(max_examples=60, deadline=None)
@given(lists, bounds, bounds, steps)
def test_slice_load(xs, a, b, s):
    expected = [xs[p] for p in reference_positions(len(xs), a, b, s)]
    source = declarations(xs, a, b, s) + f"print(xs[{slice_text(a, b, s)}])\n"
    assert run_py4(source) == f"{expected}\n"


@settings(max_examples=40, deadline=None)
@given(lists, bounds, bounds, steps)
def test_slice_delete(xs, a, b, s):
    doomed = set(reference_positions(len(xs), a, b, s))
    expected = [x for p, x in enumerate(xs) if p not in doomed]
    source = (declarations(xs, a, b, s) + "let box = [xs]\n"
              f"del box[0][{slice_text(a, b, s)}]\nprint(box[0])\n")
    assert run_py4(source) == f"{expected}\n"


@settings(max_examples=40, deadline=None)
@given(lists, st.integers(0, 10), st.integers(-1, 10))
def test_first_k_items_and_range(xs, k, n):
    source = (f"let xs = {xs!r}\nlet k = {k}\nprint(xs[0:k - 1], list(range({n})), "
              "list(indices(xs)))\n")
    assert run_py4(source) == f"{xs[:k]} {list(range(n + 1))} {list(range(len(xs)))}\n"


@settings(max_examples=60, deadline=None)
@given(st.integers(-10**6, 10**6), st.integers(-1000, 1000).filter(bool))
def test_integer_division(a, b):
    q = math.trunc(Fraction(a, b))
    source = (f"let a = {a}\nlet b = {b}\nlet c = a\nc //= b\nlet m = a\nm %= b\n"
              "print(a // b, a % b, c, m, divmod(a, b))\n")
    assert run_py4(source) == f"{q} {a - b * q} {q} {a - b * q} ({q}, {a - b * q})\n"


@settings(max_examples=40, deadline=None)
@given(st.integers(-2000, 2000))
def test_round_halves(k):
    x = k / 2  # every half is exactly representable
    whole = math.floor(abs(Fraction(x)) + Fraction(1, 2))
    expected = whole if x >= 0 else -whole
    assert run_py4(f"print(round({x!r}))\n") == f"{expected}\n"


def test_negative_index_at_run_time_through_the_translator():
    source = "let xs = [1, 2]\nlet k = 1\nprint(xs[0 - k])\n"
    with pytest.raises(IndexError, match=r"last\(xs\)"):
        run_py4(source)


def test_python3_habits_end_to_end():
    """One line per semantic rule: what a Python 3 habit runs into."""
    habits = {
        "let d = {}\nd['k'] = 1\n": TypeError,                         # P4-15
        "let d = {'a': 1}\nfor k in d:\n    print(d[k])\n": KeyError,  # P4-16
        "print(', '.join(['a']))\n": TypeError,                        # P4-18
        "print(list(zip([1, 2], [1])))\n": ValueError,                 # P4-20
        "print(sum([true, false]))\n": TypeError,                      # P4-21
        "print(' a '.strip())\n": AttributeError,                      # P4-24
    }
    for source, error in habits.items():
        with pytest.raises(error):
            run_py4(source)
    assert run_py4("let q = [1, 2, 3]\nprint(q.pop())\n") == "1\n"                  # P4-17
    assert run_py4("print(list(enumerate('a')))\n") == "[(1, 'a')]\n"              # P4-19
    assert run_py4("print(round(0.5), -7 // 2, -7 % 2)\n") == "1 -3 -1\n"         # P4-22/23
    assert run_py4("print(list(range(0, 2)), [1, 2, 3][0:1])\n") == "[0, 1, 2] [1, 2]\n"
