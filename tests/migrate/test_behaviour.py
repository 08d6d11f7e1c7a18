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


# Small programs, one idiom each (written while hunting migrator bugs).
SNIPPETS = [
"from __future__ import annotations\ndef f(x: int) -> list[int]:\n    return [x]\nprint(f(1))\n",
"class P:\n    count = 0\n    def __init__(self):\n        P.count += 1\n    @property\n    def v(self):\n"
"        return self.count\nprint(P().v, P().v)\n",
"def gen(n):\n    i = 0\n    while i < n:\n        yield i\n        i += 1\nprint(list(gen(3)), sum(gen(4)))\n",
"import itertools\nprint(list(itertools.islice(itertools.count(), 3)))\n",
"x = [[1, 2], [3, 4]]\nprint(x[-1][-1], [row[-1] for row in x], x[0][1:])\n",
"def f(*args, **kwargs):\n    return args[-1], sorted(kwargs)\nprint(f(1, 2, a=3, b=4))\n",
"import collections\nc = collections.Counter('abca')\nfor k in c: print(k, c[k])\nd = collections.defaultdict(list)\n"
"d['x'].append(1)\nprint(dict(d), [k for k in d])\n",
"s = 'a b  c'\nwords = s.split()\nprint(words[-1], ' '.join(reversed(words)), s.count(' '), s.find('z'))\n",
"def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n"
"print([fib(i) for i in range(10)])\n",
"m = {'a': 1}\nm.update(b=2)\nprint(sorted(m.items()), list(m.keys()), m.get('z'), {**m})\n"
"print(sorted(m), max(m, key=m.get))\n",
"n = -17\nprint(n // 5, n % 5, abs(n) // 5, divmod(n, 5), -n % 5, n % -5)\n",
"def mid(xs):\n    return xs[len(xs) // 2]\nprint(mid([1, 2, 3]), mid('abcd'))\n",
"t = (1, 2, 3)\nprint(t[-1], t[:-1], t[::-1][0], len(t[1:]))\n",
"import re\nm = re.match(r'(\\d+)-(\\d+)', '12-34')\nprint(m.group(1), m.groups()[-1])\n",
"xs = [3, 1, 2]\nxs.sort(key=lambda v: -v)\nprint(xs, xs.index(1), xs.pop(), xs)\n",
"def f(d):\n    return {k: v for k, v in d.items() if v}\nprint(f({'a': 0, 'b': 1}))\n",
"a = 5\nif 0 <= a < 10 and a != 7: print('in')\nprint(1 if a > 2 else 0, a < 3 or a > 4)\n",
"try:\n    raise KeyError('k')\nexcept (KeyError, IndexError) as e:\n    print(type(e).__name__, e)\nfinally:\n"
"    print('done')\n",
"def outer():\n    items = []\n    def add(x):\n        items.append(x)\n    add(1); add(2)\n    return items\n"
"print(outer())\n",
"matrix = [[1, 2, 3], [4, 5, 6]]\nprint([list(col) for col in zip(*matrix)], list(map(sum, matrix)))\n",
"print('%-5s|%5s|%05.1f|%x|%%' % ('a', 'b', 3.14159, 255))\nprint('%s and %s' % (1, [2]))\n",
"s = '  Hello  '\nprint(repr(s.strip()), repr(s.lstrip()), repr(s.rstrip()), s.strip().lower()[1:-1])\n",
"nums = [1, 2, 3, 4]\n"
"print(sum(1 for n in nums if n % 2), sum(n % 2 == 0 for n in nums), round(sum(nums) / len(nums)))\n",
"import math\nprint(round(2.675, 2), round(-1.5), math.floor(-1.5), int(-1.5), round(1e15 + 0.5))\n",
"xs = [1, 2, 3]\nxs[-1] = 9\nxs[-1] += 1\ndel xs[0]\nprint(xs)\nxs[1:] = [7, 8]\nprint(xs)\ndel xs[-1:]\nprint(xs)\n",
"d = {}\nd[-1] = 'neg'\nprint(d[-1], d)\n",
"i = 3\nxs = list(range(5))\nwhile i > 0:\n    i -= 1\n    print(xs[i], end=' ')\nprint()\n",
"s = 'abcdef'\nfor i in range(len(s)):\n    for j in range(i + 1, len(s) + 1):\n"
"        if j - i == 2: print(s[i:j], end=' ')\nprint()\n",
"a, b = 1, 2\na, b = b, a\nx = y = []\nx.append(1)\nprint(a, b, y)\n",
"d = {'k': 1, 'j': 2}\nprint(*d, sep=',')\nprint(list(zip(d, d.values())), [*d])\n",
"def f(xs, k):\n    return xs[-k:], xs[:-k], xs[k:-k]\nprint(f([1, 2, 3, 4, 5], 2), f([1], 0))\n",
"def g(s):\n    return s[::-1] == s\nprint(g('abba'), g([1, 2]))\n",
"grid = [[0] * 3 for _ in range(2)]\ngrid[1][2] = 5\nprint(grid, grid[-1][-1])\n",
"def count_words(text):\n    counts = {}\n    for w in text.split():\n        counts[w] = counts.get(w, 0) + 1\n"
"    return sorted(counts, key=lambda w: (-counts[w], w))\nprint(count_words('a b a c b a'))\n",
"stack = []\nfor ch in '(()())':\n    if ch == '(':\n        stack.append(ch)\n    else:\n        stack.pop()\n"
"print(len(stack), not stack)\n",
"from collections import deque\nq = deque([1, 2, 3])\nprint(q.pop(), q.popleft(), q)\n",
"def avg(*xs):\n    return sum(xs) / len(xs)\nprint(avg(1, 2), avg(True, False))\n",
"flags = [True, False, True]\nprint(sum(flags), sum([1, True]), any(flags))\n",
"import json\ndata = json.loads('{\"b\": 1, \"a\": 2}')\nfor k in data: print(k)\nprint(json.dumps({'x': [1, {}]}))\n",
"x = 10\ndef f():\n    return x * 2\nx = 11\nprint(f())\n",
"def f(n):\n    if n == 0:\n        return []\n    return f(n - 1) + [n]\nprint(f(3))\n",
"text = 'line1\\nline2\\n'\nfor line in text.splitlines():\n    print(line.strip().upper())\n"
"print([l.rstrip() for l in text.split('\\n')][-1] == '')\n",
"pairs = [(1, 'b'), (0, 'a')]\nfor i, (n, s) in enumerate(sorted(pairs)):\n    print(i, n, s)\n",
"print(list(range(10))[2:8:3], list(range(10))[8:2:-3], 'hello'[-3:-1])\n",
"def f(seq, i):\n    seq[i] = 0\n    return seq\nprint(f([1, 2], 1), f({'a': 1}, 'a'))\n",
"n = 0\nfor c in 'hello':\n    n += ord(c) % 7\nprint(n, n // 3)\n",
"class Node:\n    def __init__(self, val, next=None):\n        self.val = val\n        self.next = next\n"
"n = Node(1, Node(2))\nprint(n.next.val, n.next.next is None)\n",
"import functools\nprint(functools.reduce(lambda a, b: a * b, range(1, 6)))\n",
"from dataclasses import dataclass, field\n@dataclass\nclass P:\n    x: int\n    y: int = 0\n"
"    tags: list = field(default_factory=list)\n    def norm(self):\n        return abs(self.x) + abs(self.y)\n"
"print(P(1, -2), P(3).norm())\n",
"import enum\nclass Color(enum.Enum):\n    RED = 1\n    GREEN = 2\n"
"print([c.name for c in Color], Color(2), Color['RED'].value)\n",
"class A:\n    def __init__(self, v):\n        self.v = v\n    @classmethod\n    def make(cls, v=3):\n"
"        return cls(v)\n    @staticmethod\n    def twice(x):\n        return 2 * x\n    def __repr__(self):\n"
"        return f'A({self.v!r})'\nclass B(A):\n    def __init__(self, v):\n        super().__init__(v + 1)\n"
"print(A.make(), B.make(1), A.twice(4))\n",
"class Stack:\n    def __init__(self):\n        self.items = []\n    def push(self, x):\n        self.items.append(x)\n"
"    def pop(self):\n        return self.items.pop()\n    def peek(self):\n        return self.items[-1]\ns = Stack()\n"
"s.push(1); s.push(2)\nprint(s.pop(), s.peek(), s.pop())\n",
"def deco(f):\n    def wrapper(*a, **k):\n        print('call', f.__name__)\n        return f(*a, **k)\n"
"    return wrapper\n@deco\ndef add(a, b=1):\n    return a + b\nprint(add(2), add(2, b=5))\n",
"import heapq\nh = []\nfor v in [5, 1, 3]:\n    heapq.heappush(h, v)\n"
"print([heapq.heappop(h) for _ in range(len(h))])\n",
"def bsearch(xs, t):\n    lo, hi = 0, len(xs) - 1\n    while lo <= hi:\n        mid = (lo + hi) // 2\n"
"        if xs[mid] == t:\n            return mid\n        elif xs[mid] < t:\n            lo = mid + 1\n        else:\n"
"            hi = mid - 1\n    return -1\nprint(bsearch([1, 3, 5, 7], 5), bsearch([1, 3], 4))\n",
"def rotate(xs, k):\n    k %= len(xs)\n    return xs[-k:] + xs[:-k]\n"
"print(rotate([1, 2, 3, 4], 1), rotate([1, 2, 3], -1))\n",
"words = ['b', 'a', 'c']\nindex = {w: i for i, w in enumerate(words)}\n"
"print(index, sorted(index, key=index.get), list(index.items())[-1])\n",
"def chunks(xs, n):\n    return [xs[i:i + n] for i in range(0, len(xs), n)]\nprint(chunks(list(range(7)), 3))\n",
"import string\nprint(string.ascii_lowercase[:3], string.ascii_lowercase[-3:], 'abc'.upper()[::-1])\n",
"x = 5\nresult = 'pos' if x > 0 else 'neg' if x < 0 else 'zero'\n"
"print(result, [i * i for i in range(1, 4)], {i % 3 for i in range(6)})\n",
"def f(a, b):\n    try:\n        return a / b\n    except ZeroDivisionError:\n        return None\n    finally:\n"
"        print('f done')\nprint(f(1, 0), f(4, 2))\n",
"total = 0\nfor i, ch in enumerate('abc', 1):\n    total += i * ord(ch)\nprint(total)\n",
"lst = [4, 5, 6]\nfor i in range(len(lst) - 1, -1, -1):\n    print(lst[i], end=' ')\nprint(list(reversed(range(3))))\n",
]


@pytest.mark.parametrize("source", SNIPPETS, ids=[f"snippet{i}" for i in range(len(SNIPPETS))])
def test_snippet_behaviour(source):
    result = migrate(source, assume_python3=True)
    assert not result.cannot_convert, result.cannot_convert
    assert diagnostics(result.source) == [], result.source
    assert run_python4(result.source) == run_python3(source), result.source


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
