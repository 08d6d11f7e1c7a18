"""Python-4 dicts (P4-15, P4-16): iterating a dict yields `(key, value)` pairs.

`Dict` is what every dict display, dict comprehension, `{:}` and `dict(...)` call makes
in Python-4 code. It is a real `dict` subclass (json, `**d`, `==`, `in` work as in
Python 3) that presents itself as `dict` (`print(type(d))` shows `<class 'dict'>`) and
keeps its Python-4 type through `copy()`, `|`, `|=` and `fromkeys`.

Dicts made outside Python-4 code (json.loads, collections.Counter, a library's return
value) are plain Python 3 dicts and iterate keys; `to_py4` converts them.
"""
from __future__ import annotations

_py3_dict = dict


class _DictType(type):
    """Lets `isinstance(x, dict)` in Python-4 code accept every dict, not only Dicts."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, _py3_dict)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, _py3_dict)


# Shown as `type`, like every builtin class's metaclass: `print(type(type({:})))`.
_DictType.__name__ = _DictType.__qualname__ = "type"
_DictType.__module__ = "builtins"


class Dict(dict, metaclass=_DictType):
    """A dict whose iteration yields `(key, value)` pairs; otherwise Python 3's dict."""

    __slots__ = ()

    def __iter__(self):
        return iter(_py3_dict.items(self))

    def __reversed__(self):
        return reversed(_py3_dict.items(self))

    def copy(self) -> "Dict":
        return Dict(self)

    def __or__(self, other):
        if not isinstance(other, _py3_dict):
            return NotImplemented
        merged = Dict(self)
        merged.update(other)
        return merged

    def __ror__(self, other):
        if not isinstance(other, _py3_dict):
            return NotImplemented
        merged = Dict(other)
        merged.update(self)
        return merged

    def __reduce__(self):
        return (_make_dict, (_py3_dict(self),))


Dict.__name__ = "dict"
Dict.__qualname__ = "dict"
Dict.__module__ = "builtins"
Dict.__doc__ = ("dict() -> new empty Python-4 dictionary; iterating it yields "
                "(key, value) pairs.\n" + (_py3_dict.__doc__ or ""))


def _make_dict(items: dict) -> Dict:
    """Unpickling hook: the class is named `dict` in `builtins`, so pickle needs a path."""
    return Dict(items)


# Test inputs travel as JSON, which has no tuple: a tuple is the object {TUPLE_KEY: [items]}.
TUPLE_KEY = "__tuple__"


def to_py4(value):
    """`value` with every plain dict inside lists, tuples and dicts made a `Dict`.

    For data that enters Python-4 code from outside (test inputs parsed from JSON): a
    `{TUPLE_KEY: [...]}` object becomes a tuple. Other values are returned as they are;
    containers are rebuilt, not mutated.
    """
    return _from_test_json(value, Dict)


def to_py3(value):
    """Test inputs parsed from JSON as Python 3 code receives them (tuples restored)."""
    return _from_test_json(value, _py3_dict)


def _from_test_json(value, make_dict):
    kind = type(value)
    if kind is _py3_dict or kind is Dict:
        if len(value) == 1 and TUPLE_KEY in value and type(value[TUPLE_KEY]) is list:
            return tuple(_from_test_json(item, make_dict) for item in value[TUPLE_KEY])
        return make_dict({key: _from_test_json(item, make_dict) for key, item in _py3_dict.items(value)})
    if kind is list:
        return [_from_test_json(item, make_dict) for item in value]
    if kind is tuple:
        return tuple(_from_test_json(item, make_dict) for item in value)
    return value
