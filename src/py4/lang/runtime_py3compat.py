"""Migration helpers: Python 3 semantics under reserved `py3_` names.

`boa migrate` uses them where it cannot prove that a plain Python-4 form behaves the
same (e.g. a slice whose bounds may be negative at run time). They are legal Python-4
but never gold: the problem bank's validator rejects code that calls them.
"""
from __future__ import annotations

import builtins

py3_range = builtins.range
py3_enumerate = builtins.enumerate
py3_zip = builtins.zip
py3_sum = builtins.sum
py3_round = builtins.round
py3_divmod = builtins.divmod


def py3_slice(xs, a=None, b=None, s=None):
    """`xs[a:b:s]` with Python 3 semantics (half-open, negative bounds count from the end).

    Raises:
        ValueError: step 0.  TypeError: bad bound types or `xs` not subscriptable.
    """
    return xs[a:b:s]


def py3_index(xs, i):
    """`xs[i]` with Python 3 semantics (a negative index counts from the end).

    Raises:
        IndexError, KeyError, TypeError: as Python 3's `xs[i]`.
    """
    return xs[i]


def py3_position(xs, i):
    """The position Python 3's `xs[i]` means: a negative int on a sequence counts from the end.

    For an assignment target (`xs[py3_position(xs, 0 - i)] = v`), where `py3_index`
    cannot stand. A mapping's key and a non-negative index come back unchanged; a position
    still negative after counting from the end raises IndexError in both languages.
    """
    if type(i) is int and i < 0 and not isinstance(xs, dict) and hasattr(xs, "__len__"):
        return i + len(xs)
    return i


def py3_pop(obj, *args):
    """`obj.pop(*args)` with Python 3 semantics (`xs.pop()` removes the last item).

    Raises:
        IndexError: pop from an empty list or an index out of range.
    """
    return obj.pop(*args)


def py3_iter(obj):
    """Iterate `obj` as Python 3 would: a dict (any dict) yields its keys.

    Raises:
        TypeError: `obj` is not iterable.
    """
    if isinstance(obj, dict):
        return iter(dict.keys(obj))
    return iter(obj)


def py3_reversed(obj):
    """`reversed(obj)` with Python 3 semantics: a dict (any dict) reverses its keys.

    Raises:
        TypeError: `obj` is not reversible.
    """
    if isinstance(obj, dict):
        return reversed(dict.keys(obj))
    return reversed(obj)


def py3_floordiv(a, b):
    """`a // b` with Python 3 semantics (floor division). Raises ZeroDivisionError."""
    return a // b


def py3_mod(a, b):
    """`a % b` with Python 3 semantics (result has the sign of b). Raises ZeroDivisionError."""
    return a % b


MIGRATION_HELPERS = {
    name: value for name, value in dict(globals()).items() if name.startswith("py3_")
}
