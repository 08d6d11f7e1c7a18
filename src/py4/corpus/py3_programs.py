"""Small everyday Python 3 programs, run through the migrator to give migrated examples.

They are written the way Python 3 code is usually written (type hints, f-strings,
`range(len(...))`, `elif`, negative indices, `", ".join`), filled with the same random
values as the per-rule templates (`py4.corpus.snippets.fill`). A migrated program joins
the pool only when the migrator converts everything, uses no `py3_*` helper, and Boa's
output of the Python-4 program equals CPython's output of the original
(`py4.corpus.pool.migrated_pairs`).
"""

from __future__ import annotations

PROGRAMS: tuple[tuple[str, str], ...] = (
    ("word lengths", """\
def lengths(words: list[str]) -> dict[str, int]:
    result = {}
    for w in words:
        result[w] = len(w)
    return result

table = lengths($strs)
for name in sorted(table.keys()):
    print(f"{name}: {table[name]}")
"""),
    ("running maximum", """\
def running_max(values: list[int]) -> list[int]:
    best = None
    out = []
    for v in values:
        if best is None or v > best:
            best = v
        out.append(best)
    return out

print(running_max($nums))
"""),
    ("grade buckets", """\
def grade(score: int) -> str:
    if score >= 50:
        return "A"
    elif score >= $b:
        return "B"
    elif score >= $a:
        return "C"
    return "D"

for s in $nums:
    print(s, grade(s))
"""),
    ("safe parse", """\
def parse_int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None

print([parse_int(t) for t in ["$a", "$w", "$b"]])
"""),
    ("validated input", """\
def require_positive(n: int) -> int:
    if n <= 0:
        raise ValueError(f"expected a positive number, got {n}")
    return n

try:
    require_positive($neg)
except ValueError as err:
    print("error:", err)
print(require_positive($a))
"""),
    ("sorted by length", """\
words = $strs
print(sorted(words, key=lambda w: (len(w), w)))
print(max(words, key=lambda w: len(w)))
"""),
    ("gcd table", """\
import math

pairs = [($a, $b), ($m, $n), ($b, $m)]
for a, b in pairs:
    print(a, b, math.gcd(a, b))
"""),
    ("in range check", """\
def clamp(x: int, low: int, high: int) -> int:
    if x < low:
        return low
    if x > high:
        return high
    return x

print([clamp(v, $a, $b) for v in $nums])
"""),
    ("pairwise differences", """\
def diffs(values: list[int]) -> list[int]:
    out = []
    for i in range(len(values) - 1):
        out.append(values[i + 1] - values[i])
    return out

print(diffs($nums))
"""),
    ("last and first", """\
values = $nums
print(values[0], values[-1], values[len(values) - 1])
"""),
    ("counter", """\
from collections import Counter

letters = Counter("$w$w2$w")
print(sorted(letters.items()))
"""),
    ("dictionary inversion", """\
def invert(table: dict[str, int]) -> dict[int, list[str]]:
    out = {}
    for key, value in table.items():
        out.setdefault(value, []).append(key)
    return out

print(invert($pairs))
"""),
    ("text report", """\
items = $pairs
total = 0
for name, qty in items.items():
    total += qty
    print(f"{name:>8} {qty:3d}")
print(f"{'total':>8} {total:3d}")
"""),
    ("average with guard", """\
def mean(values: list[float]) -> float:
    if not values:
        raise ValueError("mean of an empty list")
    return sum(values) / len(values)

print(round(mean($nums), 2))
"""),
    ("string cleanup", """\
raw = ["  $w ", "$w2  ", " $a"]
cleaned = [r.strip() for r in raw]
print(cleaned, "|".join(cleaned))
"""),
    ("nested loops", """\
size = $k + 1
for row in range(size):
    line = ""
    for col in range(size):
        line += "#" if col <= row else "."
    print(line)
"""),
    ("none checks", """\
def first_even(values: list[int]) -> int | None:
    for v in values:
        if v % 2 == 0:
            return v
    return None

result = first_even($nums)
print(result is None, result)
"""),
    ("fizzbuzz", """\
for n in range(1, $n + 6):
    if n % 15 == 0:
        print("FizzBuzz")
    elif n % 3 == 0:
        print("Fizz")
    elif n % 5 == 0:
        print("Buzz")
    else:
        print(n)
"""),
)
