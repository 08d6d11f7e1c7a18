"""Python-4 sequences: closed ranges, closed slices, no counting from the end.

Rules P4-12 (closed `range`, `indices`), P4-13 (closed slices), P4-14 (no negative
indices; `first`/`last`), P4-19 (`enumerate` from 1), P4-20 (strict `zip`,
`zip_shortest`) and P4-21's `count`.

`getslice`, `sliceobj` and `index` are called by translated code on every subscript,
so they check exact builtin types first (`type(x) is list`) and fall back to
`isinstance` only for the rare subclass or foreign type.
"""
from __future__ import annotations

import array
import builtins
import collections
import collections.abc
from operator import index as _as_int

_py3_range = builtins.range
_py3_enumerate = builtins.enumerate
_py3_zip = builtins.zip

# Sequences on which a negative index is an error (P4-14). Mappings and objects that
# are not sequences (numpy arrays, user classes) get their index unchanged.
_SEQUENCE_TYPES = (list, tuple, str, bytes, bytearray, _py3_range, memoryview,
                   array.array, collections.deque)


_MISSING = object()


class range:  # noqa: A001 - it *is* the Python-4 builtin `range`
    """Python-4 `range(a, b[, s])`: the closed interval a, a+s, … while not past b (P4-12).

    `range(n)` is `range(0, n)` (n + 1 items). Empty when `a` is already past `b` in the
    step's direction. Behaves like a Python 3 range otherwise (len, `in`, indexing,
    slicing, reversed, equality, hash) and shows its Python-4 bounds in `repr`.

    Raises:
        TypeError: wrong number of arguments, or a bound that is not an integer.
        ValueError: a step of 0.
    """

    __slots__ = ("start", "stop", "step", "_r")

    def __init__(self, start=_MISSING, stop=_MISSING, step=1, /, *extra):
        if stop is _MISSING:
            if start is _MISSING:
                raise TypeError("range expected at least 1 argument, got 0")
            start, stop = 0, start
        elif extra:
            raise TypeError(f"range expected at most 3 arguments, got {3 + len(extra)}")
        if type(start) is not int:
            start = _as_int(start)
        if type(stop) is not int:
            stop = _as_int(stop)
        if step == 1 and type(step) is int:  # the common case first
            self._r = _py3_range(start, stop + 1)
        else:
            step = _as_int(step)
            if step == 0:
                raise ValueError("range() step must not be zero")
            self._r = _py3_range(start, stop + 1 if step > 0 else stop - 1, step)
        self.start, self.stop, self.step = start, stop, step

    @classmethod
    def _from_py3(cls, r: _py3_range) -> "range":
        """Wrap a Python 3 range, naming its last item (or, when empty, a bound before it)."""
        self = cls.__new__(cls)
        last_item = r[-1] if r else r.start - r.step
        self.start, self.stop, self.step, self._r = r.start, last_item, r.step, r
        return self

    def __iter__(self):
        return iter(self._r)

    def __reversed__(self):
        return reversed(self._r)

    def __len__(self):
        return len(self._r)

    def __bool__(self):
        return bool(self._r)

    def __contains__(self, item):
        return item in self._r

    def __getitem__(self, i):
        if type(i) is slice:
            return range._from_py3(self._r[i])
        try:
            position = _as_int(i)
        except TypeError:
            raise TypeError(f"range indices must be integers or slices, "
                            f"not {type(i).__name__}") from None
        if position < 0:
            raise IndexError(_negative_index_message(self, i))
        return self._r[i]

    def index(self, value):
        return self._r.index(value)

    def count(self, value):
        return self._r.count(value)

    def __eq__(self, other):
        if isinstance(other, range):
            return self._r == other._r
        return NotImplemented

    def __hash__(self):
        return hash(self._r)

    def __repr__(self):
        if self.step == 1:
            return f"range({self.start}, {self.stop})"
        return f"range({self.start}, {self.stop}, {self.step})"

    def __reduce__(self):
        return (_make_range, (self.start, self.stop, self.step))


range.__module__ = "builtins"
collections.abc.Sequence.register(range)
P4Range = range  # an unambiguous name for other modules


def _make_range(start: int, stop: int, step: int) -> range:
    """Unpickling hook: the class is named `range` in `builtins`, so pickle needs a path."""
    return range(start, stop, step)


def indices(xs) -> range:
    """The valid positions of `xs`: `range(0, len(xs) - 1)` (P4-12).

    Raises:
        TypeError: `xs` has no length.
    """
    return range(0, len(xs) - 1)


def _is_sequence(xs) -> bool:
    return isinstance(xs, _SEQUENCE_TYPES) or (
        isinstance(xs, collections.abc.Sequence) and not isinstance(xs, collections.abc.Mapping))


def first(xs):
    """The first item of `xs` (a sequence, or any iterable) (P4-14).

    Raises:
        IndexError: `xs` is empty.
    """
    if type(xs) is list or type(xs) is tuple or type(xs) is str or _is_sequence(xs):
        if len(xs) == 0:
            raise IndexError(f"first() of an empty {type(xs).__name__}")
        return xs[0]
    for item in xs:
        return item
    raise IndexError(f"first() of an empty {type(xs).__name__}")


def last(xs):
    """The last item of `xs` (a sequence, or any finite iterable) (P4-14).

    Raises:
        IndexError: `xs` is empty.
    """
    if type(xs) is list or type(xs) is tuple or type(xs) is str or _is_sequence(xs):
        n = len(xs)
        if n == 0:
            raise IndexError(f"last() of an empty {type(xs).__name__}")
        return xs[n - 1]
    sentinel = item = object()
    for item in xs:  # noqa: B007 -- the loop leaves the last element in item
        pass
    if item is sentinel:
        raise IndexError(f"last() of an empty {type(xs).__name__}")
    return item


def _negative_index_message(xs, i) -> str:
    kind = type(xs).__name__
    return (f"{kind} index {i} is negative: Python-4 does not count from the end "
            f"(use last(xs) for the last item, xs[len(xs) - k] for the k-th from the end)")


def index(xs, i):
    """The index `i` for `xs[i]`, checked (P4-14): returns `i` unchanged.

    Raises:
        IndexError: `i` is a negative integer and `xs` is a sequence (list, tuple, str,
            bytes, bytearray, range, memoryview, array, deque or any other
            `collections.abc.Sequence`). Mappings and other objects are not checked.
    """
    if type(i) is int:
        if i >= 0:
            return i
    elif type(i) is str or type(i) is slice or type(i) is tuple:
        return i
    if type(xs) is list or type(xs) is tuple or type(xs) is str or _is_sequence(xs):
        try:
            position = _as_int(i)
        except TypeError:
            return i  # the sequence itself reports the bad index type
        if position < 0:
            raise IndexError(_negative_index_message(xs, i))
    return i


def _bound(value, name: str) -> int:
    if type(value) is int:
        return value
    try:
        return _as_int(value)
    except TypeError:
        raise TypeError(f"slice {name} must be an integer or omitted, "
                        f"not {type(value).__name__}") from None


def _closed_positions(n: int, a, b, s: int):
    """The Python 3 slice selecting positions a, a+s, … to b inclusive inside 0 … n-1.

    Returns None when no position is selected.
    """
    if s > 0:
        start = 0 if a is None else _bound(a, "start")
        end = n - 1 if b is None else min(_bound(b, "end"), n - 1)
        if start < 0:  # first position of the progression at or after 0
            start += (-start + s - 1) // s * s
        if start > end:
            return None
        return slice(start, end + 1, s)
    start = n - 1 if a is None else _bound(a, "start")
    end = 0 if b is None else max(_bound(b, "end"), 0)
    if start > n - 1:  # last position of the progression at or before n-1
        start -= (start - (n - 1) - s - 1) // -s * -s
    if start < end:
        return None
    return slice(start, end - 1 if end > 0 else None, s)


def _step(s) -> int:
    step = _bound(s, "step")
    if step == 0:
        raise ValueError("slice step cannot be zero")
    return step


def getslice(xs, a, b, s):
    """`xs[a:b:s]` in Python-4: positions a … b inclusive, clamped to `xs` (P4-13).

    Omitted bounds are `None`: an omitted `a` is the first position (the last for a
    negative step), an omitted `b` the last (the first for a negative step). A negative
    bound is a position before the start, never a count from the end. Objects without
    a length get `xs[slice(a, b + 1, s)]` (`b - 1` for a negative step).

    Raises:
        ValueError: step 0.
        TypeError: a bound that is not an integer, or `xs` not subscriptable.
    """
    if s is None and (type(xs) is list or type(xs) is str or type(xs) is tuple):
        # Hot path: step 1 on a builtin sequence, int or omitted bounds.
        if a is None:
            start = 0
        else:
            start = a if type(a) is int else _bound(a, "start")
            if start < 0:
                start = 0
        if b is None:
            return xs[start:]
        stop = (b if type(b) is int else _bound(b, "end")) + 1
        if stop <= start:
            return xs[0:0]
        return xs[start:stop]
    step = 1 if s is None else _step(s)
    try:
        n = len(xs)
    except TypeError:
        return xs[_open_slice(a, b, step)]
    positions = _closed_positions(n, a, b, step)
    if positions is None:
        return xs[0:0]
    return xs[positions]


def _open_slice(a, b, step: int) -> slice:
    if b is None:
        return slice(a, None, step)
    end = _bound(b, "end")
    return slice(a, end + 1 if step > 0 else end - 1, step)


def sliceobj(xs, a, b, s) -> slice:
    """The Python 3 slice for `xs[a:b:s] = v` and `del xs[a:b:s]` in Python-4 (P4-13).

    Step 1 (or omitted): the positions a … b inclusive, clamped; when `b < a` (or both
    lie outside `xs`) the slice is empty at the clamped position `a`, so assignment
    inserts there. Other steps select exactly what `getslice` reads.

    Raises:
        ValueError: step 0.
        TypeError: a bound that is not an integer.
    """
    step = 1 if s is None else _step(s)
    try:
        n = len(xs)
    except TypeError:
        return _open_slice(a, b, step)
    if step == 1:
        start = 0 if a is None else min(max(_bound(a, "start"), 0), n)
        stop = n if b is None else min(_bound(b, "end") + 1, n)
        return slice(start, max(stop, start))
    positions = _closed_positions(n, a, b, step)
    return slice(0, 0, step) if positions is None else positions


class enumerate(_py3_enumerate):  # noqa: A001
    """Python-4 `enumerate(xs, start=1)`: counts from 1 unless told otherwise (P4-19).

    Raises:
        TypeError: `iterable` is not iterable or `start` is not an integer.
    """

    def __new__(cls, iterable, start=1):
        return _py3_enumerate.__new__(cls, iterable, start)


enumerate.__module__ = "builtins"


class zip(_py3_zip):  # noqa: A001
    """Python-4 `zip(*iterables)`: strict (P4-20).

    Raises (while iterating):
        ValueError: the iterables have different lengths ("zip() argument 2 is shorter
            than argument 1"); use `zip_shortest` to stop at the shortest.
    """

    def __new__(cls, *iterables, strict=True):
        return _py3_zip.__new__(cls, *iterables, strict=strict)


zip.__module__ = "builtins"


def zip_shortest(*iterables):
    """Pairs items until the shortest iterable ends (Python 3's non-strict `zip`) (P4-20)."""
    return _py3_zip(*iterables)


def count(xs) -> int:
    """The number of truthy items of `xs` (P4-21): `count([true, false, true]) == 2`.

    Raises:
        TypeError: `xs` is not iterable.
    """
    return builtins.sum(map(bool, xs))
