"""The Python-4 runtime: the builtins and helpers that translated code runs with.

`new_globals()` is the one entry point for executing a compiled Python-4 program:

    exec(compile_py4(src).code, new_globals())

It gives the program the vetted builtins (Python 3's less those that run text, with
guarded `getattr`/`vars`/`__import__`: runtime_builtins.py) with the Python-4 overrides
(closed `range`, `enumerate` from 1, strict `zip`, …), the migration helpers (`py3_*`), and `__p4__`,
the helper namespace that translated subscripts, `//`, `%`, `.pop`, `.join`,
`.strip`/`.trim` and dict displays call. The semantics live in `runtime_seq`,
`runtime_methods`, `runtime_num` and `runtime_dict`; this module only assembles them.
"""
from __future__ import annotations

from py4.lang import code_gate  # noqa: F401 - loaded with the runtime: Boa's run children install it
from py4.lang.runtime_builtins import vetted_builtins
from py4.lang.runtime_dict import Dict, to_py4
from py4.lang.runtime_methods import attr, join, pop
from py4.lang.runtime_num import divmod, floordiv, mod, round, sum
from py4.lang.runtime_py3compat import MIGRATION_HELPERS
from py4.lang.runtime_seq import (
    count, enumerate, first, getslice, index, indices, last, range, sliceobj, zip,
    zip_shortest,
)

__all__ = [
    "HELPERS", "PY4_BUILTIN_OVERRIDES", "Dict", "attr", "builtins_dict", "floordiv",
    "getslice", "index", "join", "mod", "new_globals", "pop", "sliceobj", "to_py4",
]

# Builtins whose Python-4 meaning differs from Python 3's, or that Python 3 lacks.
PY4_BUILTIN_OVERRIDES = {
    "range": range, "indices": indices, "first": first, "last": last,
    "enumerate": enumerate, "zip": zip, "zip_shortest": zip_shortest, "sum": sum,
    "count": count, "round": round, "divmod": divmod, "dict": Dict,
}


class _Helpers:
    """The `__p4__` namespace: read-only, shared by every run in the process."""

    __slots__ = ()
    getslice = staticmethod(getslice)
    sliceobj = staticmethod(sliceobj)
    index = staticmethod(index)
    floordiv = staticmethod(floordiv)
    mod = staticmethod(mod)
    pop = staticmethod(pop)
    join = staticmethod(join)
    attr = staticmethod(attr)
    Dict = Dict

    def __setattr__(self, name, value):
        raise AttributeError("the Python-4 runtime helpers are read-only")

    def __repr__(self):
        return "<Python-4 runtime helpers>"


HELPERS = _Helpers()

# Built once at import; new_globals() copies it (about a microsecond) so that one
# program cannot change another's builtins.
_BASE_BUILTINS = {**vetted_builtins(), **PY4_BUILTIN_OVERRIDES, **MIGRATION_HELPERS}


def builtins_dict() -> dict:
    """A fresh copy of the Python-4 builtins (vetted, overridden, plus `py3_*`)."""
    return _BASE_BUILTINS.copy()


def new_globals() -> dict:
    """A fresh globals dict for running one translated Python-4 program.

    Holds `__builtins__` (the Python-4 builtins), `__p4__` (the helper namespace the
    translated code calls) and `__name__ == "__main__"`. Raises nothing.
    """
    return {"__builtins__": _BASE_BUILTINS.copy(), "__p4__": HELPERS, "__name__": "__main__"}
