"""new_globals(): the namespace translated Python-4 code runs in."""
import builtins
import io
import contextlib

import pytest

from py4.lang import runtime as rt


def test_new_globals_layout():
    g = rt.new_globals()
    assert g["__name__"] == "__main__" and g["__p4__"] is rt.HELPERS
    b = g["__builtins__"]
    for name, value in rt.PY4_BUILTIN_OVERRIDES.items():
        assert b[name] is value
    assert b["print"] is builtins.print and b["__build_class__"] is builtins.__build_class__
    for helper in ("getslice", "sliceobj", "index", "floordiv", "mod", "pop", "join", "attr",
                   "Dict"):
        assert callable(getattr(g["__p4__"], helper))


def test_migration_helpers_are_builtins():
    b = rt.builtins_dict()
    assert list(b["py3_range"](3)) == [0, 1, 2]
    assert b["py3_slice"]([1, 2, 3], None, -1, None) == [1, 2]
    assert b["py3_index"]([1, 2, 3], -1) == 3
    assert b["py3_pop"]([1, 2, 3]) == 3
    assert list(b["py3_iter"](rt.Dict(a=1))) == ["a"]
    assert list(b["py3_enumerate"]("a")) == [(0, "a")]
    assert list(b["py3_zip"]([1, 2], [3])) == [(1, 3)]
    assert b["py3_sum"]([True, True]) == 2
    assert b["py3_round"](2.5) == 2
    assert b["py3_floordiv"](-7, 2) == -4 and b["py3_mod"](-7, 2) == 1
    assert b["py3_divmod"](-7, 2) == (-4, 1)


def test_each_run_gets_its_own_builtins():
    g1, g2 = rt.new_globals(), rt.new_globals()
    exec("__builtins__['print'] = None", g1)
    assert g2["__builtins__"]["print"] is builtins.print


def test_helpers_are_read_only():
    with pytest.raises(AttributeError, match="read-only"):
        rt.HELPERS.index = None


def test_python4_builtins_apply_in_exec():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec("print(list(range(2)), list(enumerate('a')), round(0.5), true if False else 1)",
             {**rt.new_globals(), "true": True})
    assert out.getvalue() == "[0, 1, 2] [(1, 'a')] 1 1\n"
