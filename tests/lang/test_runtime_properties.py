"""Property tests: the runtime against brute-force reference implementations of the spec."""
import math
from fractions import Fraction

from hypothesis import given, strategies as st

from py4.lang import runtime as rt
from py4.lang.runtime_seq import range as p4range

B = rt.builtins_dict()

lists = st.lists(st.integers(0, 99), max_size=12)
bounds = st.none() | st.integers(-20, 20)
steps = st.none() | st.integers(-5, 5).filter(bool)


def reference_positions(n, a, b, s):
    """The spec, literally: positions a, a+s, … up to b inclusive, kept when inside 0 … n-1."""
    s = 1 if s is None else s
    if a is None:
        a = 0 if s > 0 else n - 1
    if b is None:
        b = n - 1 if s > 0 else 0
    positions, p = [], a
    while (s > 0 and p <= b) or (s < 0 and p >= b):
        if 0 <= p < n:
            positions.append(p)
        p += s
    return positions


@given(lists, bounds, bounds, steps)
def test_getslice_matches_the_spec(xs, a, b, s):
    expected = [xs[p] for p in reference_positions(len(xs), a, b, s)]
    assert rt.getslice(xs, a, b, s) == expected
    assert rt.getslice(tuple(xs), a, b, s) == tuple(expected)
    text = "".join(chr(65 + x % 26) for x in xs)
    assert rt.getslice(text, a, b, s) == "".join(text[p] for p in reference_positions(len(xs), a, b, s))


@given(lists, st.integers(0, 15))
def test_first_k_items(xs, k):
    assert rt.getslice(xs, 0, k - 1, None) == xs[:k]


@given(lists, bounds, bounds, steps)
def test_slice_deletion_matches_the_spec(xs, a, b, s):
    doomed = set(reference_positions(len(xs), a, b, s))
    ys = list(xs)
    del ys[rt.sliceobj(ys, a, b, s)]
    assert ys == [x for p, x in enumerate(xs) if p not in doomed]


@given(lists, bounds, bounds, st.lists(st.integers(100, 199), max_size=4))
def test_step1_slice_assignment_matches_the_spec(xs, a, b, new):
    """Replace the selected positions; when none is selected, insert at a clamped to 0 … n."""
    n = len(xs)
    selected = reference_positions(n, a, b, None)
    if selected:
        at = selected[0]
    else:
        at = min(max(0 if a is None else a, 0), n)
    kept = [(p, x) for p, x in enumerate(xs) if p not in selected]
    expected = [x for p, x in kept if p < at] + new + [x for p, x in kept if p >= at]
    ys = list(xs)
    ys[rt.sliceobj(ys, a, b, None)] = new
    assert ys == expected


@given(lists, bounds, bounds, st.integers(-4, 4).filter(lambda s: s not in (0, 1)))
def test_extended_slice_assignment_matches_the_spec(xs, a, b, s):
    selected = reference_positions(len(xs), a, b, s)
    new = [1000 + i for i in range(len(selected))]
    ys = list(xs)
    ys[rt.sliceobj(ys, a, b, s)] = new
    expected = list(xs)
    for p, value in zip(selected, new, strict=True):
        expected[p] = value
    assert ys == expected


@given(st.integers(-30, 30), st.integers(-30, 30), st.integers(-6, 6).filter(bool))
def test_range_matches_the_spec(a, b, s):
    expected, x = [], a
    while (s > 0 and x <= b) or (s < 0 and x >= b):
        expected.append(x)
        x += s
    r = p4range(a, b, s)
    assert list(r) == expected and len(r) == len(expected)
    assert list(reversed(r)) == expected[::-1]
    if s == 1:
        assert list(p4range(a, b)) == expected


@given(st.integers(-50, 50))
def test_range_n_is_zero_to_n(n):
    assert list(p4range(n)) == list(range(0, n + 1))


def reference_round(x: Fraction, ndigits):
    unit = Fraction(10) ** -(ndigits or 0)
    whole = math.floor(abs(x) / unit + Fraction(1, 2))
    return (whole if x >= 0 else -whole) * unit


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e15, max_value=1e15))
def test_round_float_matches_half_away_from_zero(x):
    result = B["round"](x)
    assert type(result) is int and result == reference_round(Fraction(x), None)


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6),
       st.integers(-5, 8))
def test_round_float_ndigits_is_the_nearest_float_to_the_exact_rounding(x, ndigits):
    result = B["round"](x, ndigits)
    assert type(result) is float
    assert result == float(reference_round(Fraction(x), ndigits))


@given(st.integers(-10**6, 10**6).map(lambda k: k * 5), st.integers(-4, 3))
def test_round_int_ndigits(x, ndigits):
    result = B["round"](x, ndigits)
    assert type(result) is int and result == reference_round(Fraction(x), ndigits)


@given(st.integers(-10**20, 10**20), st.integers(-10**6, 10**6).filter(bool))
def test_floordiv_and_mod_truncate(a, b):
    q = math.trunc(Fraction(a, b))
    assert rt.floordiv(a, b) == q
    assert rt.mod(a, b) == a - b * q
    assert B["divmod"](a, b) == (q, a - b * q)
    r = rt.mod(a, b)
    assert r == 0 or (r > 0) == (a > 0)  # the remainder has the sign of a


@given(st.integers(-10**45, 10**45), st.integers(-50, 0))
def test_round_int_far_ndigits(x, ndigits):
    """Covers the shortcut that returns 0 without computing 10 ** -ndigits."""
    assert B["round"](x, ndigits) == reference_round(Fraction(x), ndigits)


plain_dicts = st.dictionaries(st.text(max_size=3), st.integers() | st.text(max_size=3), max_size=6)


@given(plain_dicts, plain_dicts)
def test_dict_is_a_dict_that_iterates_pairs(a, b):
    import json
    d = rt.Dict(a)
    assert d == a and len(d) == len(a) and list(d) == list(a.items())
    assert list(reversed(d)) == list(reversed(a.items()))
    assert json.loads(json.dumps(d)) == a
    merged = d | b
    assert type(merged) is rt.Dict and merged == {**a, **b}
    assert {**d} == a and dict(d) == a and rt.Dict(d) == a


@given(st.sampled_from([list, tuple, str, bytes]), st.integers(0, 5), st.integers(-10, 10))
def test_index_rejects_exactly_the_negative_ints(kind, n, i):
    xs = kind("a" * n) if kind is str else kind(b"a" * n) if kind is bytes else kind(range(n))
    if i < 0:
        try:
            rt.index(xs, i)
        except IndexError as error:
            assert "last(xs)" in str(error)
        else:
            raise AssertionError("a negative index was accepted")
    else:
        assert rt.index(xs, i) == i
