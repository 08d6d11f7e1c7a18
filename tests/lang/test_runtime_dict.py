"""Unit tests of Python-4 dicts: P4-15 ({:} and dict displays make Dicts) and P4-16 (pair iteration)."""
import copy
import json
import pickle

from py4.lang.runtime import Dict, builtins_dict, to_py4


def test_iterating_yields_key_value_pairs():
    d = Dict(a=1, b=2)
    assert list(d) == [("a", 1), ("b", 2)]
    assert [k + str(v) for k, v in d] == ["a1", "b2"]
    assert list(reversed(d)) == [("b", 2), ("a", 1)]
    assert list(d.keys()) == ["a", "b"] and list(d.values()) == [1, 2]
    assert "a" in d and ("a", 1) not in d  # `in` tests keys


def test_python3_habit_iterating_for_keys_gets_pairs():
    d = Dict(a=1)
    keys = [k for k in d]
    assert keys == [("a", 1)]


def test_presents_itself_as_dict():
    d = Dict({1: "x"})
    assert type(d).__name__ == "dict" and str(type(d)) == "<class 'dict'>"
    assert repr(d) == "{1: 'x'}" and str(Dict()) == "{}"
    assert d == {1: "x"} and isinstance(d, dict)
    assert str(type(type(d))) == "<class 'type'>"


def test_python4_dict_name_accepts_every_dict():
    p4dict = builtins_dict()["dict"]
    assert p4dict is Dict
    assert isinstance({}, p4dict) and issubclass(dict, p4dict)
    assert not isinstance([], p4dict)


def test_operations_keep_the_python4_type():
    d = Dict(a=1)
    for made in (d.copy(), d | {"b": 2}, {"b": 2} | d, Dict.fromkeys("ab", 0), copy.copy(d),
                 copy.deepcopy(d), pickle.loads(pickle.dumps(d))):
        assert type(made) is Dict, made
    assert d | {"b": 2} == {"a": 1, "b": 2} and {"a": 0} | d == {"a": 1}
    e = Dict(a=1)
    e |= Dict(b=2)
    assert type(e) is Dict and e == {"a": 1, "b": 2}


def test_interoperates_with_python3_code():
    d = Dict(a=1, b=[1, 2])
    assert json.dumps(d) == '{"a": 1, "b": [1, 2]}'
    assert json.loads(json.dumps(d, indent=2)) == d
    assert dict(d) == {"a": 1, "b": [1, 2]} and type(dict(d)) is dict
    assert Dict(d) == d and {**d} == d

    def kw(**kwargs):
        return kwargs
    assert kw(**d) == {"a": 1, "b": [1, 2]}
    assert sorted(d.items()) == [("a", 1), ("b", [1, 2])]
    assert dict[str, int].__origin__ is dict and repr(Dict[str, int]) == "dict[str, int]"


def test_to_py4_converts_nested_plain_dicts():
    data = json.loads('{"a": [{"b": 1}], "c": {"d": [2, {"e": 3}]}}')
    converted = to_py4(data)
    assert converted == data
    assert type(converted) is Dict and type(converted["a"][0]) is Dict
    assert type(converted["c"]["d"][1]) is Dict
    assert type(data) is dict  # not mutated
    assert to_py4([1, (2, {"x": 1})])[1][1] == {"x": 1}
