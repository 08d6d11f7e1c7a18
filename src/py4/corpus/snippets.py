"""Per-rule program templates: an idiomatic Python-4 program and the Python 3 habit it replaces.

Each template is filled with random names and values (`$xs`, `$nums`, …, see `fill`), so a
template gives many distinct programs. Boa decides what each filled program prints; a
template's habit is kept only when Boa shows it going wrong (diagnostic, exception or a
different output), see `py4.corpus.pool`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from string import Template

DOMAINS = {
    "scores": ("scores", "marks", "points", "grades", "results"),
    "prices": ("prices", "costs", "fees", "amounts", "totals"),
    "readings": ("readings", "temps", "samples", "levels", "values"),
    "counts": ("counts", "visits", "clicks", "orders", "steps"),
}
WORD_LISTS = (
    ("apple", "pear", "plum", "fig", "kiwi", "lime"),
    ("oslo", "lima", "kyiv", "rome", "baku", "doha"),
    ("red", "teal", "gold", "navy", "plum", "rust"),
    ("ada", "grace", "linus", "guido", "barbara", "ken"),
    ("north", "south", "east", "west", "up", "down"),
    ("draft", "review", "merged", "closed", "open", "stale"),
)
WORD_VARS = ("names", "words", "tags", "labels", "items", "keys_seen", "entries")
SCALARS = ("value", "amount", "level", "size", "limit", "width", "depth", "budget")
DICT_VARS = ("stock", "tally", "inventory", "ages", "table", "ledger", "lookup")
HALVES = ("0.5", "1.5", "2.5", "3.5", "-0.5", "-1.5", "-2.5", "4.5", "12.5")


@dataclass(frozen=True)
class Template3:
    rule: str
    topic: str
    good: str
    bad: str | None = None


def fill(rng: random.Random) -> dict[str, str]:
    """Random names and values for one filling of a template."""
    domain = rng.choice(list(DOMAINS.values()))
    words = list(rng.choice(WORD_LISTS))
    rng.shuffle(words)
    strs = words[: rng.randint(3, 5)]
    nums = [rng.randint(0, 60) for _ in range(rng.randint(3, 6))]
    a = rng.randint(1, 9)
    xs, ys = rng.sample(domain, 2)
    return {
        "xs": xs, "ys": ys, "ws": rng.choice(WORD_VARS), "x": rng.choice(SCALARS),
        "d": rng.choice(DICT_VARS), "nums": repr(nums), "nums2": repr(nums[: len(nums) - 1]),
        "strs": repr(strs), "w": strs[0], "w2": strs[1], "a": str(a), "b": str(a + rng.randint(2, 9)),
        "n": str(rng.randint(3, 9)), "k": str(rng.randint(1, 3)), "neg": str(-rng.randint(3, 29)),
        "m": str(rng.randint(2, 5)), "half": rng.choice(HALVES),
        "pairs": "{" + ", ".join(f"{w!r}: {rng.randint(1, 20)}" for w in strs) + "}",
        "pad": rng.choice(("  ", "\\t", " ", "   ")),
    }


def render(template: str | None, values: dict[str, str]) -> str | None:
    return None if template is None else Template(template).substitute(values)


T = Template3
TEMPLATES: tuple[Template3, ...] = (
    T("P4-01", "a small function",
      "fn total_of($xs: list[int]) -> int:\n    let result = 0\n    for v in $xs:\n        result += v\n"
      "    return result\n\nprint(total_of($nums))\n",
      "def total_of($xs: list[int]) -> int:\n    let result = 0\n    for v in $xs:\n        result += v\n"
      "    return result\n\nprint(total_of($nums))\n"),
    T("P4-01", "a helper that scales",
      "fn scale($x: int, factor: int) -> int:\n    return $x * factor\n\nprint(scale($a, $m), scale($b, $m))\n",
      "def scale($x: int, factor: int) -> int:\n    return $x * factor\n\nprint(scale($a, $m))\n"),
    T("P4-02", "a running total",
      "let $x = 0\nfor v in $nums:\n    $x = $x + v\nprint($x)\n",
      "$x = 0\nfor v in $nums:\n    $x = $x + v\nprint($x)\n"),
    T("P4-02", "declare then update",
      "let $ws = $strs\nlet longest = ''\nfor w in $ws:\n    if len(w) > len(longest):\n"
      "        longest = w\nprint(longest)\n",
      "$ws = $strs\nlongest = ''\nfor w in $ws:\n    if len(w) > len(longest):\n"
      "        longest = w\nprint(longest)\n"),
    T("P4-02", "unpacking with let",
      "let low, high = $a, $b\nlet span = high - low\nprint(low, high, span)\n",
      "low, high = $a, $b\nprint(high - low)\n"),
    T("P4-03", "grading with else if",
      "fn bucket($x: int) -> str:\n    if $x < $a:\n        return 'low'\n    else if $x < $b:\n"
      "        return 'mid'\n    else:\n        return 'high'\n\nfor v in $nums:\n    print(v, bucket(v))\n",
      "fn bucket($x: int) -> str:\n    if $x < $a:\n        return 'low'\n    elif $x < $b:\n"
      "        return 'mid'\n    else:\n        return 'high'\n\nprint(bucket($a))\n"),
    T("P4-03", "sign of a number",
      "let $x = $neg\nif $x > 0:\n    print('positive')\nelse if $x == 0:\n    print('zero')\n"
      "else:\n    print('negative')\n",
      "let $x = $neg\nif $x > 0:\n    print('positive')\nelif $x == 0:\n    print('zero')\n"),
    T("P4-04", "flags and missing values",
      "let $ws = $strs\nlet found = false\nlet where = nil\nfor i in indices($ws):\n    if $ws[i] == '$w2':\n"
      "        found = true\n        where = i\nprint(found, where)\n",
      "let found = False\nlet where = None\nprint(found, where)\n"),
    T("P4-04", "a search that may fail",
      "fn find($ws: list[str], target: str) -> int | nil:\n    for i in indices($ws):\n"
      "        if $ws[i] == target:\n            return i\n    return nil\n\n"
      "print(find($strs, '$w2'), find($strs, 'zzz') is nil, true and not false)\n",
      "fn find($ws: list[str], target: str) -> int | None:\n    return None\n\nprint(find($strs, 'x'), True)\n"),
    T("P4-05", "annotations everywhere",
      "fn average($xs: list[int]) -> float:\n    return sum($xs) / len($xs)\n\nprint(average($nums))\n",
      "fn average($xs):\n    return sum($xs) / len($xs)\n\nprint(average($nums))\n"),
    T("P4-05", "annotated parameters and return",
      "fn repeat($w: str, times: int) -> str:\n    return $w * times\n\nprint(repeat('$w', $k))\n",
      "fn repeat($w: str, times) -> str:\n    return $w * times\n\nprint(repeat('$w', $k))\n"),
    T("P4-06", "catching a bad number",
      "fn parse(text: str) -> int:\n    try:\n        return int(text)\n    catch ValueError as err:\n"
      "        print('not a number:', text)\n        return 0\n\nprint(parse('$a') + parse('$w'))\n",
      "fn parse(text: str) -> int:\n    try:\n        return int(text)\n    except ValueError as err:\n"
      "        return 0\n\nprint(parse('$w'))\n"),
    T("P4-06", "a missing key",
      "let $d = $pairs\ntry:\n    print($d['zzz'])\ncatch KeyError as missing:\n    print('no such key:', missing)\n",
      "let $d = $pairs\ntry:\n    print($d['zzz'])\nexcept KeyError:\n    print('no such key')\n"),
    T("P4-07", "refusing bad input",
      "fn checked($x: int) -> int:\n    if $x < 0:\n        throw ValueError(i'negative: {$x}')\n    return $x\n\n"
      "print(checked($a))\ntry:\n    checked($neg)\ncatch ValueError as err:\n    print(err)\n",
      "fn checked($x: int) -> int:\n    if $x < 0:\n        raise ValueError('negative')\n    return $x\n\n"
      "print(checked($a))\n"),
    T("P4-07", "throw from a lookup",
      "fn need($d: dict, key: str) -> int:\n    if key not in $d:\n        throw KeyError(key)\n    return $d[key]\n\n"
      "print(need($pairs, '$w'))\n",
      "fn need($d: dict, key: str) -> int:\n    if key not in $d:\n        raise KeyError(key)\n    return $d[key]\n\n"
      "print(need($pairs, '$w'))\n"),
    T("P4-08", "an i-string report",
      "let $x = $b\nlet who = '$w'\nprint(i'{who} has {$x} items, {$x * 2} after doubling')\n",
      "let $x = $b\nlet who = '$w'\nprint(f'{who} has {$x} items')\n"),
    T("P4-08", "formatting inside an i-string",
      "let ratio = $a / $b\nprint(i'ratio = {ratio:.3f}')\nprint(i'{\"$w\"!r:>8}|')\n",
      "let ratio = $a / $b\nprint(f'ratio = {ratio:.3f}')\n"),
    T("P4-09", "sorting with a key",
      "let $ws = $strs\nprint(sorted($ws, key=fun w: (len(w), w)))\n",
      "let $ws = $strs\nprint(sorted($ws, key=lambda w: (len(w), w)))\n"),
    T("P4-09", "a small function value",
      "let twice = fun v: v * 2\nprint([twice(v) for v in $nums])\n",
      "let twice = lambda v: v * 2\nprint([twice(v) for v in $nums])\n"),
    T("P4-10", "using a module",
      "use math\nprint(math.gcd($a, $b), math.isqrt($b * $b))\n",
      "import math\nprint(math.gcd($a, $b))\n"),
    T("P4-10", "from-use imports",
      "from collections use Counter\nlet seen = Counter($strs + ['$w'])\nprint(seen.most_common(1))\n",
      "from collections import Counter\nprint(Counter($strs).most_common(1))\n"),
    T("P4-11", "a range check",
      "fn in_band($x: int) -> bool:\n    return $a <= $x and $x <= $b\n\nprint([v for v in $nums if in_band(v)])\n",
      "fn in_band($x: int) -> bool:\n    return $a <= $x <= $b\n\nprint([v for v in $nums if in_band(v)])\n"),
    T("P4-11", "ordered triple",
      "let p, q, r = $a, $m, $b\nprint(p < q and q < r)\n",
      "let p, q, r = $a, $m, $b\nprint(p < q < r)\n"),
    T("P4-12", "positions of a list",
      "let $xs = $nums\nfor i in indices($xs):\n    print(i, $xs[i])\n",
      "let $xs = $nums\nfor i in range(len($xs)):\n    print(i, $xs[i])\n"),
    T("P4-12", "a closed range sum",
      "let $x = 0\nfor i in range($a, $b):\n    $x += i\nprint($x, list(range($a, $b)))\n",
      "let $x = 0\nfor i in range($a, $b + 1):\n    $x += i\nprint($x)\n"),
    T("P4-12", "counting down with a step",
      "print(list(range($b, $a, -$m)), list(range($n)))\n",
      "print(list(range($n)))\n"),
    T("P4-13", "the first k items",
      "let $xs = $nums\nlet k = $k\nprint($xs[0:k - 1], $xs[1:2])\n",
      "let $xs = $nums\nlet k = $k\nprint($xs[0:k], $xs[1:2])\n"),
    T("P4-13", "a window of a string",
      "let word = '$w$w2'\nprint(word[0:2], word[2:len(word) - 1])\n",
      "let word = '$w$w2'\nprint(word[0:3])\n"),
    T("P4-14", "the last item",
      "let $xs = $nums\nprint(last($xs), first($xs), $xs[len($xs) - 2])\n",
      "let $xs = $nums\nprint($xs[-1], $xs[-2])\n"),
    T("P4-14", "all but the last",
      "let $ws = $strs\nprint($ws[0:len($ws) - 2])\n",
      "let $ws = $strs\nprint($ws[:-1])\n"),
    T("P4-15", "an empty dict and an empty set",
      "let $d = {:}\nlet seen = {}\nfor w in $strs:\n    $d[w] = len(w)\n    seen.add(len(w))\n"
      "print($d, sorted(seen))\n",
      "let $d = {}\nfor w in $strs:\n    $d[w] = len(w)\nprint($d)\n"),
    T("P4-15", "counting into a dict",
      "let $d = {:}\nfor w in $strs + ['$w']:\n    $d[w] = $d.get(w, 0) + 1\nprint($d)\n",
      "let $d = {}\nfor w in $strs + ['$w']:\n    $d[w] = $d.get(w, 0) + 1\nprint($d)\n"),
    T("P4-16", "walking a dict",
      "let $d = $pairs\nfor key, qty in $d:\n    print(key, qty)\n",
      "let $d = $pairs\nfor key in $d:\n    print(key, $d[key])\n"),
    T("P4-16", "keys when you only need keys",
      "let $d = $pairs\nprint(sorted($d.keys()), [key for key, _ in $d])\n",
      "let $d = $pairs\nprint(sorted($d), [key for key in $d])\n"),
    T("P4-17", "a first-in first-out queue",
      "let queue = $nums\nlet head = queue.pop()\nprint(head, queue)\n",
      "let queue = $nums\nlet head = queue.pop(0)\nprint(head)\nlet top = queue.pop()\nprint(top, queue)\n"),
    T("P4-17", "popping the last item",
      "let stack = $strs\nlet top = stack.pop(len(stack) - 1)\nprint(top, stack)\n",
      "let stack = $strs\nlet top = stack.pop()\nprint(top, stack)\n"),
    T("P4-18", "joining words",
      "let $ws = $strs\nprint($ws.join(', '), $ws.join('-'))\n",
      "let $ws = $strs\nprint(', '.join($ws))\n"),
    T("P4-18", "joining numbers as text",
      "let $xs = $nums\nprint([str(v) for v in $xs].join(' + '), '=', sum($xs))\n",
      "let $xs = $nums\nprint(' + '.join([str(v) for v in $xs]))\n"),
    T("P4-19", "numbered lines",
      "for n, w in enumerate($strs):\n    print(i'{n}. {w}')\n",
      "for i, w in enumerate($strs):\n    print(i'{i + 1}. {w}')\n"),
    T("P4-19", "positions from enumerate",
      "let $xs = $nums\nfor pos, v in enumerate($xs, start=0):\n    print(pos, v)\n",
      "let $xs = $nums\nfor pos, v in enumerate($xs):\n    print(pos, $xs[pos])\n"),
    T("P4-20", "pairing two lists",
      "let $xs = $nums\nlet $ys = $nums2\nprint(list(zip_shortest($xs, $ys)))\n",
      "let $xs = $nums\nlet $ys = $nums2\nprint(list(zip($xs, $ys)))\n"),
    T("P4-20", "zip of equal lengths",
      "let $ws = $strs\nlet sizes = [len(w) for w in $ws]\nfor w, size in zip($ws, sizes):\n    print(w, size)\n",
      "let $ws = $strs\nfor w, size in zip($ws, [1, 2]):\n    print(w, size)\n"),
    T("P4-21", "counting true items",
      "let $xs = $nums\nprint(count([v > $a for v in $xs]), count($xs))\n",
      "let $xs = $nums\nprint(sum([v > $a for v in $xs]))\n"),
    T("P4-21", "how many match",
      "let $ws = $strs\nprint(count(len(w) > 3 for w in $ws))\n",
      "let $ws = $strs\nprint(sum(len(w) > 3 for w in $ws))\n"),
    T("P4-22", "rounding halves",
      "print(round($half), round(-$a.5), round($b.25, 1))\n",
      "print(round($half), round($a.5))\n"),
    T("P4-22", "rounding an average",
      "let $xs = [$a, $m]\nprint(round(sum($xs) / 2), sum($xs) / 2)\n",
      "let $xs = [1, 2]\nprint(round(sum($xs) / 2))\n"),
    T("P4-23", "truncating division",
      "print($neg // $m, $neg % $m, divmod($neg, $m))\n",
      "print($neg // $m, $neg % $m)\n"),
    T("P4-23", "division on both sides of zero",
      "for v in [$b, $neg]:\n    print(v, v // $m, v % $m)\n",
      "let v = $neg\nprint(v // $m, v % $m)\n"),
    T("P4-24", "trimming input",
      "let raw = '$pad$w$pad'\nprint(repr(raw.trim()), repr(raw.trim_start()), repr(raw.trim_end()))\n",
      "let raw = '$pad$w$pad'\nprint(repr(raw.strip()))\n"),
    T("P4-24", "cleaning fields",
      "let fields = ' $w , $w2 '.split(',')\nprint([f.trim() for f in fields])\n",
      "let fields = ' $w , $w2 '.split(',')\nprint([f.strip() for f in fields])\n"),
    T("P4-25", "formatting with an i-string",
      "let $x = $b\nprint(i'{$x} units of $w')\n",
      "let $x = $b\nprint('%d units of $w' % $x)\n"),
    T("P4-25", "padding with i-strings",
      "let $x = $a / $m\nprint(i'{$x:8.2f}|')\n",
      "let $x = $a / $m\nprint('%8.2f|' % $x)\n"),
    T("P4-26", "a default of nil",
      "fn collect(v: int, bag: list[int] | nil = nil) -> list[int]:\n    if bag is nil:\n        bag = []\n"
      "    bag.append(v)\n    return bag\n\nprint(collect($a), collect($b))\n",
      "fn collect(v: int, bag: list[int] = []) -> list[int]:\n    bag.append(v)\n    return bag\n\n"
      "print(collect($a), collect($b))\n"),
    T("P4-26", "fresh dict per call",
      "fn tally_words($ws: list[str], into: dict | nil = nil) -> dict:\n    let out = {:} if into is nil else into\n"
      "    for w in $ws:\n        out[w] = out.get(w, 0) + 1\n    return out\n\nprint(tally_words($strs))\n",
      "fn tally_words($ws: list[str], into: dict = {:}) -> dict:\n    for w in $ws:\n"
      "        into[w] = into.get(w, 0) + 1\n    return into\n\nprint(tally_words($strs))\n"),
    T("P4-27", "testing for nil",
      "let $x = nil\nprint($x is nil, $x is not nil)\n",
      "let $x = nil\nprint($x == nil)\n"),
    T("P4-27", "an optional limit",
      "fn clip(v: int, cap: int | nil) -> int:\n    if cap is not nil and v > cap:\n        return cap\n"
      "    return v\n\nprint(clip($b, $a), clip($b, nil))\n",
      "fn clip(v: int, cap: int | nil) -> int:\n    if cap != nil and v > cap:\n        return cap\n"
      "    return v\n\nprint(clip($b, $a))\n"),
    T("P4-28", "naming the exception",
      "try:\n    print(int('$w'))\ncatch ValueError:\n    print('not a number')\n",
      "try:\n    print(int('$w'))\ncatch:\n    print('not a number')\n"),
    T("P4-28", "two named exceptions",
      "let $d = $pairs\nfor key in ['$w', 'zzz']:\n    try:\n        print(100 // $d[key])\n"
      "    catch (KeyError, ZeroDivisionError) as err:\n        print('skipped', key)\n",
      "let $d = $pairs\ntry:\n    print($d['zzz'])\ncatch:\n    print('skipped')\n"),
    T("P4-29", "names that do not shadow builtins",
      "let $xs = $nums\nlet biggest = max($xs)\nlet total = sum($xs)\nprint(biggest, total)\n",
      "let $xs = $nums\nlet max = 0\nfor v in $xs:\n    if v > max:\n        max = v\nprint(max)\n"),
    T("P4-29", "a list that is not called list",
      "let $ws = list($strs)\nprint(len($ws), sorted($ws))\n",
      "let list = $strs\nprint(len(list))\n"),
    T("P4-30", "checking types",
      "for v in [$a, '$w', $half, nil]:\n    print(isinstance(v, int), isinstance(v, (int, float)))\n",
      "let v = $a\nprint(type(v) == int)\n"),
    T("P4-30", "dispatch on type",
      "fn describe(v: object) -> str:\n    if isinstance(v, str):\n        return 'text'\n"
      "    else if isinstance(v, bool):\n        return 'flag'\n    else if isinstance(v, int):\n"
      "        return 'number'\n    return 'other'\n\nprint([describe(v) for v in [$a, '$w', true, nil]])\n",
      "fn describe(v: object) -> str:\n    if type(v) == str:\n        return 'text'\n    return 'other'\n\n"
      "print(describe('$w'))\n"),
)
