"""Unit tests of the Python-4 sequence runtime: P4-12, P4-13, P4-14, P4-19, P4-20, P4-21 (count)."""
import collections
import pickle
import random

import pytest

from py4.lang import runtime as rt
from py4.lang.runtime_seq import range as p4range

getslice, sliceobj, index = rt.getslice, rt.sliceobj, rt.index


# --- P4-12: closed range, indices ------------------------------------------------------

@pytest.mark.parametrize("args, expected", [
    ((3,), [0, 1, 2, 3]),
    ((0,), [0]),
    ((-1,), []),
    ((1, 4), [1, 2, 3, 4]),
    ((0, -1), []),
    ((2, 2), [2]),
    ((0, 10, 3), [0, 3, 6, 9]),
    ((0, 9, 3), [0, 3, 6, 9]),
    ((5, 1, -2), [5, 3, 1]),
    ((5, 0, -2), [5, 3, 1]),
    ((1, 5, -1), []),
])
def test_range_is_closed(args, expected):
    assert list(p4range(*args)) == expected
    assert len(p4range(*args)) == len(expected)


def test_range_python3_habit_range_len_runs_past_the_end():
    xs = [10, 20, 30]
    with pytest.raises(IndexError):
        for i in p4range(len(xs)):
            xs[index(xs, i)]


def test_range_errors():
    with pytest.raises(ValueError, match="step must not be zero"):
        p4range(0, 5, 0)
    with pytest.raises(TypeError, match="at least 1 argument"):
        p4range()
    with pytest.raises(TypeError, match="at most 3 arguments"):
        p4range(1, 2, 3, 4)
    with pytest.raises(TypeError):
        p4range(1.5)


def test_range_behaves_like_a_sequence():
    r = p4range(1, 7, 2)  # 1 3 5 7
    assert repr(r) == "range(1, 7, 2)" and repr(p4range(3)) == "range(0, 3)"
    assert str(type(r)) == "<class 'range'>"
    assert 7 in r and 8 not in r
    assert list(reversed(r)) == [7, 5, 3, 1]
    assert r[0] == 1 and r[3] == 7
    assert r.index(5) == 2 and r.count(3) == 1
    assert (r.start, r.stop, r.step) == (1, 7, 2)
    assert r == p4range(1, 8, 2) and hash(r) == hash(p4range(1, 8, 2))
    assert r != [1, 3, 5, 7]
    assert isinstance(r, collections.abc.Sequence)
    assert random.Random(0).sample(r, 2)  # random needs a Sequence
    assert pickle.loads(pickle.dumps(r)) == r
    assert not p4range(0, -1) and bool(p4range(0))
    with pytest.raises(IndexError, match="negative"):
        r[-1]
    sub = getslice(r, 1, 2, None)
    assert list(sub) == [3, 5] and repr(sub) == "range(3, 5, 2)"
    assert list(getslice(r, 3, 1, None)) == []


def test_indices():
    assert list(rt.builtins_dict()["indices"]("abc")) == [0, 1, 2]
    assert list(rt.builtins_dict()["indices"]([])) == []


# --- P4-13: closed slices ---------------------------------------------------------------

XS = [0, 1, 2, 3, 4, 5]


@pytest.mark.parametrize("a, b, s, expected", [
    (1, 3, None, [1, 2, 3]),
    (None, 2, None, [0, 1, 2]),
    (3, None, None, [3, 4, 5]),
    (None, None, None, XS),
    (0, -1, None, []),            # xs[0:k - 1] with k = 0
    (4, 2, None, []),             # b < a
    (-3, 1, None, [0, 1]),        # negative bound: before the start, not from the end
    (-5, -2, None, []),
    (4, 99, None, [4, 5]),
    (0, 5, 2, [0, 2, 4]),
    (-3, 5, 2, [1, 3, 5]),        # the progression -3, -1, 1, 3, 5 clamped
    (None, None, -1, [5, 4, 3, 2, 1, 0]),
    (4, 1, -1, [4, 3, 2, 1]),
    (9, 0, -2, [5, 3, 1]),        # 9, 7 are past the end
    (4, None, -2, [4, 2, 0]),
    (1, 4, -1, []),
    (2, -5, -1, [2, 1, 0]),
])
def test_getslice(a, b, s, expected):
    assert getslice(XS, a, b, s) == expected
    assert getslice(tuple(XS), a, b, s) == tuple(expected)
    text = "abcdef"
    assert getslice(text, a, b, s) == "".join(text[i] for i in expected)


def test_first_k_items_for_every_k():
    for k in range(0, 9):
        assert getslice(XS, 0, k - 1, None) == XS[:k]


def test_getslice_errors():
    with pytest.raises(ValueError, match="step cannot be zero"):
        getslice(XS, 0, 2, 0)
    with pytest.raises(TypeError, match="slice end must be an integer"):
        getslice(XS, 0, 1.5, None)


def test_getslice_on_object_without_len():
    class Recorder:
        def __getitem__(self, key):
            return key
    assert getslice(Recorder(), 1, 3, None) == slice(1, 4, 1)
    assert getslice(Recorder(), 5, 1, -1) == slice(5, 0, -1)
    assert getslice(Recorder(), 1, None, 2) == slice(1, None, 2)
    assert sliceobj(Recorder(), 1, 3, None) == slice(1, 4, 1)


def test_slice_assignment_replaces_closed_range():
    xs = list(XS)
    xs[sliceobj(xs, 1, 2, None)] = ["a"]
    assert xs == [0, "a", 3, 4, 5]


def test_slice_assignment_b_before_a_inserts_at_a():
    xs = [1, 2, 3]
    xs[sliceobj(xs, 1, 0, None)] = [9]
    assert xs == [1, 9, 2, 3]
    ys = [1, 2, 3]
    ys[sliceobj(ys, -4, -2, None)] = [0]  # all before the start: insert at 0
    assert ys == [0, 1, 2, 3]
    zs = [1, 2, 3]
    zs[sliceobj(zs, 7, 9, None)] = [4]
    assert zs == [1, 2, 3, 4]


def test_slice_deletion_and_extended_assignment():
    xs = list(XS)
    del xs[sliceobj(xs, 1, 3, None)]
    assert xs == [0, 4, 5]
    ys = list(XS)
    del ys[sliceobj(ys, None, None, -2)]
    assert ys == [0, 2, 4]
    zs = list(XS)
    zs[sliceobj(zs, 0, 4, 2)] = ["a", "b", "c"]
    assert zs == ["a", 1, "b", 3, "c", 5]
    with pytest.raises(ValueError):
        zs[sliceobj(zs, 0, 4, 2)] = ["too", "short"]
    with pytest.raises(ValueError):
        sliceobj(zs, 0, 1, 0)


# --- P4-14: no negative indices; first, last -----------------------------------------

@pytest.mark.parametrize("seq", [[1, 2], (1, 2), "ab", b"ab", bytearray(b"ab"),
                                 range(3), p4range(2), collections.deque([1, 2])])
def test_negative_index_is_an_error_on_sequences(seq):
    with pytest.raises(IndexError, match=r"use last\(xs\)"):
        index(seq, -1)
    assert index(seq, 0) == 0 and index(seq, True) is True


def test_index_leaves_mappings_and_other_keys_alone():
    d = {-1: "minus one"}
    assert d[index(d, -1)] == "minus one"
    assert index({}, "k") == "k"
    assert index([1], 1.5) == 1.5  # the list itself reports the bad type
    key = (1, -2)
    assert index([], key) is key


def test_negative_index_message_reads_well():
    with pytest.raises(IndexError) as info:
        index([1, 2, 3], -1)
    assert str(info.value) == ("list index -1 is negative: Python-4 does not count from "
                               "the end (use last(xs) for the last item, xs[len(xs) - k] "
                               "for the k-th from the end)")


def test_first_and_last():
    b = rt.builtins_dict()
    first, last = b["first"], b["last"]
    assert first([3, 4]) == 3 and last([3, 4]) == 4
    assert first("xy") == "x" and last(p4range(1, 5)) == 5
    assert first(x for x in [7, 8]) == 7 and last(iter([7, 8])) == 8
    assert first(rt.Dict({"a": 1})) == ("a", 1)
    for empty in ([], "", (), iter([]), p4range(0, -1)):
        with pytest.raises(IndexError, match="empty"):
            first(empty)
        with pytest.raises(IndexError, match="empty"):
            last(empty)


# --- P4-19, P4-20, P4-21 ---------------------------------------------------------------

def test_enumerate_counts_from_one():
    e = rt.builtins_dict()["enumerate"]
    assert list(e("ab")) == [(1, "a"), (2, "b")]
    assert list(e("ab", start=0)) == [(0, "a"), (1, "b")]
    assert list(e("ab", 5)) == [(5, "a"), (6, "b")]
    assert str(type(e([]))) == "<class 'enumerate'>"


def test_zip_is_strict_and_zip_shortest_truncates():
    b = rt.builtins_dict()
    assert list(b["zip"]([1, 2], "ab")) == [(1, "a"), (2, "b")]
    with pytest.raises(ValueError, match="zip\\(\\) argument 2 is shorter than argument 1"):
        list(b["zip"]([1, 2, 3], "ab"))
    assert list(b["zip_shortest"]([1, 2, 3], "ab")) == [(1, "a"), (2, "b")]
    assert list(b["zip"]([1, 2, 3], "ab", strict=False)) == [(1, "a"), (2, "b")]
    assert str(type(b["zip"]())) == "<class 'zip'>"


def test_count_counts_truthy_items():
    c = rt.builtins_dict()["count"]
    assert c([True, False, True]) == 2
    assert c([0, 1, "", "x", None, [0]]) == 3
    assert c(x > 2 for x in [1, 2, 3, 4]) == 2
    assert c([]) == 0
