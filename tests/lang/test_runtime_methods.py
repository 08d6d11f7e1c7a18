"""Unit tests of the method helpers: P4-17 (pop), P4-18 (join), P4-24 (trim)."""
import collections
import os.path
import threading

import pytest

from py4.lang import runtime as rt


# --- P4-17 ------------------------------------------------------------------------------

def test_pop_without_index_takes_the_first_item():
    xs = [1, 2, 3]
    assert rt.pop(xs) == 1 and xs == [2, 3]
    assert rt.pop(xs, 1) == 3 and xs == [2]
    ba = bytearray(b"ab")
    assert rt.pop(ba) == ord("a")


def test_pop_errors():
    with pytest.raises(IndexError, match="pop from empty list"):
        rt.pop([])
    with pytest.raises(IndexError) as info:
        rt.pop([1, 2], -1)
    assert "Python-4 does not count from the end" in str(info.value)
    assert "xs.pop(len(xs) - 1)" in str(info.value)
    with pytest.raises(AttributeError):
        rt.pop("abc")


def test_pop_on_other_types_is_their_own():
    d = rt.Dict(a=1)
    assert rt.pop(d, "a") == 1 and rt.pop(d, "zz", 0) == 0
    dq = collections.deque([1, 2])
    assert rt.pop(dq) == 2
    s = {5}
    assert rt.pop(s) == 5


# --- P4-18 ------------------------------------------------------------------------------

def test_join_belongs_to_the_iterable():
    assert rt.join(["a", "b"], ", ") == "a, b"
    assert rt.join(("a",), "-") == "a"
    assert rt.join((c for c in "xyz"), "") == "xyz"
    assert rt.join({"k"}, "") == "k"
    assert rt.join([b"a", b"b"], b"+") == b"a+b"


def test_python3_habit_str_join_is_a_type_error():
    with pytest.raises(TypeError) as info:
        rt.join(", ", ["a", "b"])
    assert str(info.value) == "join belongs to the iterable in Python-4: write xs.join(sep)"
    with pytest.raises(TypeError, match="belongs to the iterable"):
        rt.join(b",", [b"a"])


def test_join_errors():
    with pytest.raises(TypeError, match="exactly one argument"):
        rt.join(["a"])
    with pytest.raises(TypeError, match="separator must be a str, not int"):
        rt.join(["a"], 1)
    with pytest.raises(TypeError, match="expected str instance, int found"):
        rt.join([1, 2], ",")


def test_objects_with_their_own_join_keep_it():
    assert rt.join(os.path, "a", "b") == os.path.join("a", "b")
    t = threading.Thread(target=lambda: None)
    t.start()
    assert rt.join(t, 5) is None

    class Custom:
        def join(self, *parts):
            return parts
    assert rt.join(Custom(), 1, 2) == (1, 2)


# --- P4-24 ------------------------------------------------------------------------------

def test_trim_family_on_str():
    assert rt.attr("  a  ", "trim")() == "a"
    assert rt.attr("  a  ", "trim_start")() == "a  "
    assert rt.attr("  a  ", "trim_end")() == "  a"
    assert rt.attr("xxaxx", "trim")("x") == "a"
    assert rt.attr(str, "trim")(" b ") == "b"
    assert rt.attr("abc", "upper")() == "ABC"


@pytest.mark.parametrize("old, new", [("strip", "trim"), ("lstrip", "trim_start"),
                                      ("rstrip", "trim_end")])
def test_python3_habit_strip_is_an_attribute_error(old, new):
    with pytest.raises(AttributeError) as info:
        rt.attr(" a ", old)
    assert str(info.value) == f"'str' object has no attribute '{old}' (Python-4 renamed it {new})"
    with pytest.raises(AttributeError, match=f"renamed it {new}"):
        rt.attr(str, old)


def test_other_objects_keep_strip_and_have_no_trim():
    assert rt.attr(b" a ", "strip")() == b"a"

    class Thing:
        trim = 3
    assert rt.attr(Thing(), "trim") == 3
    with pytest.raises(AttributeError):
        rt.attr([1], "trim")
