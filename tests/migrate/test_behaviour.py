"""Migrated programs behave like the originals, compile without any diagnostic, and
migrating them again changes nothing."""

import pytest

from py4.lang.migrate import migrate

from behaviour_util import diagnostics, run_python3, run_python4

PROGRAMS = {
    "bounds": """
xs = [5, 6, 7, 8, 9]
print(xs[-1], xs[-2], xs[1:3], xs[:-2], xs[-3:], xs[::2], xs[::-1], xs[4:1:-1])
for i in range(len(xs)):
    print(i, xs[i], end=" ")
print(list(range(3)), list(range(2, 8, 3)), list(range(8, 2, -2)))
def window(seq, i, k):
    return seq[i:i + k], seq[i - 1]
print(window(xs, 0, 2), window(xs, 3, 9))
s = "hello"
print(s[-1], s[1:-1], s[:0])
""",
    "dicts": """
d = {}
d["b"] = 2
d["a"] = 1
for k in d:
    print(k, d[k])
print(sorted(d), list(d), max(d), {k: v for k, v in d.items()}, [k for k in d])
def keys_of(m):
    return [k for k in m]
print(keys_of(d), keys_of([1, 2]), keys_of("ab"), set())
e = {}
print(type(e).__name__, len(e), e == {})
""",
    "methods": """
xs = [1, 2, 3]
print(xs.pop(), xs.pop(0), xs)
def take(stack):
    return stack.pop()
print(take([4, 5]), take({6}), ", ".join(["a", "b"]), "-".join(str(i) for i in range(3)))
def glue(sep, items):
    return sep.join(items)
print(glue("+", ["x", "y"]), glue("", "abc"), "  pad ".strip(), "xxhixx".strip("x"))
def clean(v):
    return v.strip()
print(clean(" s "), clean(b" b "), "a,b".split(",")[0].rstrip())
""",
    "numbers": """
print(-7 // 2, -7 % 2, 7 // -2, divmod(-7, 2), 2 ** -1, 7.5 // 2)
def f(a, b):
    return a // b, a % b
print(f(-9, 4), f(9, -4), f(9.5, 2))
print(round(2.5), round(3.5), round(0.125, 2), round(-0.5), round(7))
print(sum([True, True, False]), sum(x > 1 for x in [1, 2, 3]), sum([0.5, 1]), sum(range(4)))
n = 10
n //= 3
print(n, [i for i in range(10) if i % 3 == 0], "%d items" % 3, "%s" % "x", "%5.1f|" % 2.25)
""",
    "builtins": """
for i, c in enumerate("ab"):
    print(i, c)
print(tuple(enumerate([1], 5)), tuple(zip([1, 2, 3], "ab")), tuple(zip(*[[1, 2], [3, 4]])))
list = [3, 1]
print(sorted(list), list)
def area(len, max=2):
    return len * max
print(area(3), area(len=4, max=5))
""",
    "syntax": """
import math
from collections import Counter as C
def classify(x):
    if x is None:
        return "none"
    elif x == None:
        return "eq-none"
    elif 0 < x < 10:
        return "small"
    elif type(x) == float:
        return "float"
    else:
        return "big"
print([classify(v) for v in [None, 5, 50, 50.5]], (lambda a, b=2: a * b)(3), math.floor(2.5))
try:
    raise ValueError("boom")
except ValueError as exc:
    print("caught", exc)
try:
    [][1]
except:
    print("bare")
name = "py4"
print(f"{name!r:>6} {name[-1]} {True} {None}", C("aab").most_common(1))
""",
    "scopes": """
total = 0
def add(n):
    global total
    total += n
    return total
add(2); add(3)
print(total)
def counter():
    count = 0
    def inc():
        nonlocal count
        count += 1
        return count
    return inc
c = counter()
print(c(), c())
def loop():
    for i in range(3):
        if i > 0:
            acc += i
        else:
            acc = 10
    return acc
print(loop())
a = b = 4
p = type("P", (), {})()
p.x, q = 1, 2
print(a, b, p.x, q)
""",
    "defaults": """
def f(items=[], n=0):
    '''doc'''
    return len(items) + n
print(f(), f([1, 2]), f(n=3))
def g(seen={}):
    return sorted(seen.keys())
print(g(), g({"a": 1}))
""",
    "errors": """
def last(xs):
    return xs[-1]
print(last([1, 2]))
print(last([]))
""",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_migration_preserves_behaviour(name):
    source = PROGRAMS[name]
    result = migrate(source, assume_python3=True)
    assert not result.cannot_convert, result.cannot_convert
    assert diagnostics(result.source) == [], result.source
    assert run_python4(result.source) == run_python3(source), result.source
    assert migrate(result.source).source == result.source  # idempotent


def test_builtin_used_before_module_binding_is_not_renamed():
    result = migrate("print(list('ab'))\nlist = [1]\n", assume_python3=True)
    assert "before binding" in result.cannot_convert[0].reason


def test_migrated_program_is_returned_unchanged():
    source = "fn f(x: int) -> int:\n    return x\nlet y = f(1)\n"
    result = migrate(source)
    assert result.source == source and result.rules_applied == [] and not result.cannot_convert


def test_skipping_a_semantic_rule_changes_the_answer():
    source = "def f(n):\n    return [i for i in range(n)]\nprint(f(3))\n"
    full = migrate(source, assume_python3=True)
    partial = migrate(source, skip_rules={"P4-12"}, assume_python3=True)
    assert "range(n)" in partial.source and diagnostics(partial.source) == []
    assert run_python4(full.source) == run_python3(source) != run_python4(partial.source)


def test_skipping_a_syntax_rule_leaves_a_compile_error():
    source = "def f(n):\n    return n\nprint(f(3))\n"
    partial = migrate(source, skip_rules={"P4-01"}, assume_python3=True)
    assert "def f" in partial.source
    assert any("P4-01" in d for d in diagnostics(partial.source))


def test_core_only_policy_applies_core_rules_only():
    source = "def f(xs):\n    y = None\n    return xs[-1]\n"
    result = migrate(source, only_rules={"P4-01", "P4-02", "P4-03", "P4-04", "P4-05"}, assume_python3=True)
    assert result.source == "fn f(xs: object) -> object:\n    let y = nil\n    return xs[-1]\n"
    assert {h.rule for h in result.rules_applied} == {"P4-01", "P4-02", "P4-04", "P4-05"}
