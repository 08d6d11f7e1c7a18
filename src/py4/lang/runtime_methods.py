"""Python-4 method semantics that translated code routes through helpers.

`xs.pop()` takes the first item (P4-17), `join` belongs to the iterable (P4-18) and
`str.strip/lstrip/rstrip` are called `trim/trim_start/trim_end` (P4-24). The
translator cannot know a receiver's type, so it calls these helpers, which decide at
run time and leave every other type's methods alone.
"""
from __future__ import annotations

from py4.lang.internals import attribute_refused

_STRIP_RENAMES = {"strip": "trim", "lstrip": "trim_start", "rstrip": "trim_end"}
_TRIM_METHODS = {"trim": "strip", "trim_start": "lstrip", "trim_end": "rstrip"}
_TEXT_TYPES = (str, bytes, bytearray)


def pop(obj, *args, **kwargs):
    """`obj.pop(...)` in Python-4 (P4-17).

    On a list (or bytearray) `pop()` removes and returns the *first* item and
    `pop(i)` the item at position i; every other type's `pop` is called unchanged
    (dict.pop(key), set.pop(), deque.pop(), …).

    Raises:
        IndexError: the list is empty, or `i` is negative (Python-4 does not count
            from the end) or past the end.
        AttributeError: `obj` has no `pop` method.
    """
    if type(obj) is list or isinstance(obj, (list, bytearray)):
        if not args and not kwargs:
            if not obj:
                raise IndexError(f"pop from empty {type(obj).__name__}")
            return obj.pop(0)
        if args and type(args[0]) is int and args[0] < 0:
            raise IndexError(
                f"pop index {args[0]} is negative: Python-4 does not count from the end "
                "(xs.pop() takes the first item; xs.pop(len(xs) - 1) the last)")
    return obj.pop(*args, **kwargs)


def join(obj, *args, **kwargs):
    """`obj.join(sep)` in Python-4 (P4-18): the items of iterable `obj` joined by `sep`.

    Objects that have a `join` method of their own (os.path, threads, user classes)
    keep it.

    Raises:
        TypeError: `obj` is a str, bytes or bytearray (the Python 3 habit
            `", ".join(xs)`); `sep` is missing or not a str/bytes; an item is not a
            str (or bytes for a bytes separator).
    """
    if type(obj) is list or type(obj) is tuple:
        return _join_items(obj, args, kwargs)
    if isinstance(obj, _TEXT_TYPES):
        raise TypeError("join belongs to the iterable in Python-4: write xs.join(sep)")
    own_join = getattr(obj, "join", None)
    if own_join is not None:
        return own_join(*args, **kwargs)
    return _join_items(obj, args, kwargs)


def _join_items(items, args, kwargs):
    if kwargs or len(args) != 1:
        raise TypeError("join() takes exactly one argument, the separator: xs.join(sep)")
    sep = args[0]
    if type(sep) is str or isinstance(sep, (str, bytes, bytearray)):
        return sep.join(items)
    raise TypeError(f"join() separator must be a str, not {type(sep).__name__}")


def attr(obj, name: str):
    """`obj.name` for the names that P4-24 renames on str.

    On a str (or the `str` type itself, e.g. `map(str.trim, xs)`): `trim`,
    `trim_start`, `trim_end` are Python 3's `strip`, `lstrip`, `rstrip`; the old names
    do not exist. Any other object: plain `getattr`.

    Raises:
        AttributeError: `strip`/`lstrip`/`rstrip` on a str, naming the new method; the
            attribute does not exist on `obj`; or it is one a program may not reach
            (internals.py).
    """
    if type(obj) is str or isinstance(obj, str):
        if name in _TRIM_METHODS:
            return getattr(obj, _TRIM_METHODS[name])
        if name in _STRIP_RENAMES:
            raise AttributeError(f"'str' object has no attribute '{name}' "
                                 f"(Python-4 renamed it {_STRIP_RENAMES[name]})")
    elif isinstance(obj, type) and issubclass(obj, str):
        if name in _TRIM_METHODS:
            return getattr(obj, _TRIM_METHODS[name])
        if name in _STRIP_RENAMES:
            raise AttributeError(f"type object 'str' has no attribute '{name}' "
                                 f"(Python-4 renamed it {_STRIP_RENAMES[name]})")
    if type(name) is not str or attribute_refused(name):
        # The translator passes only the strip/trim names: this is a program calling the
        # helper itself, to reach what the analyser refuses (see internals.py).
        raise AttributeError(f"attribute {name!r} is not available to Python-4 programs")
    return getattr(obj, name)
