"""Cost of Python-4 semantics at run time: translated Python-4 vs the same program in Python 3.

    .venv/bin/python benchmarks/runtime.py [--repeat 5]

Each case is one Python-4 program and the Python 3 program that computes the same thing
(checked: both print the same). Both are compiled once; the timing is `exec` of the code
object in a fresh namespace (Python-4: `runtime.new_globals()`), best of `--repeat`
runs, measured in the same process. The ratio is Python-4 time / Python 3 time.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import time

from py4.lang import compile_py4
from py4.lang.runtime import new_globals

# name -> (Python-4 program, equivalent Python 3 program)
CASES = {
    "index loop": (
        "let xs = list(range(0, 19999))\nlet total = 0\n"
        "for i in indices(xs):\n    total += xs[i]\nprint(total)\n",
        "xs = list(range(0, 20000))\ntotal = 0\n"
        "for i in range(len(xs)):\n    total += xs[i]\nprint(total)\n"),
    "slices": (
        "let xs = list(range(0, 99))\nlet total = 0\n"
        "for i in range(0, 4999):\n    total += len(xs[i % 50:i % 50 + 9])\nprint(total)\n",
        "xs = list(range(0, 100))\ntotal = 0\n"
        "for i in range(0, 5000):\n    total += len(xs[i % 50:i % 50 + 10])\nprint(total)\n"),
    "int // and %": (
        "let total = 0\nfor i in range(1, 20000):\n    total += i // 7 + i % 7\nprint(total)\n",
        "total = 0\nfor i in range(1, 20001):\n    total += i // 7 + i % 7\nprint(total)\n"),
    "dict iteration": (
        "let d = {i: i * i for i in range(0, 999)}\nlet total = 0\n"
        "for r in range(1, 20):\n    for k, v in d:\n        total += v\nprint(total)\n",
        "d = {i: i * i for i in range(0, 1000)}\ntotal = 0\n"
        "for r in range(1, 21):\n    for k, v in d.items():\n        total += v\nprint(total)\n"),
    "strings (join, trim)": (
        "let words = [' a ', 'b ', ' c'] * 300\nlet total = 0\n"
        "for r in range(1, 10):\n    total += len([w.trim() for w in words].join(','))\nprint(total)\n",
        "words = [' a ', 'b ', ' c'] * 300\ntotal = 0\n"
        "for r in range(1, 11):\n    total += len(','.join([w.strip() for w in words]))\nprint(total)\n"),
    "sum / round": (
        "let xs = [i / 3 for i in range(0, 4999)]\nprint(sum(xs), round(sum([round(x) for x in xs])))\n",
        "import decimal\n"
        "def r(x):\n    return int(decimal.Decimal(x).to_integral_value(rounding=decimal.ROUND_HALF_UP))\n"
        "xs = [i / 3 for i in range(0, 5000)]\nprint(sum(xs), r(sum([r(x) for x in xs])))\n"),
}


def run(code, make_globals) -> tuple[float, str]:
    out = io.StringIO()
    globals_ = make_globals()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out):
        exec(code, globals_)
    return time.perf_counter() - start, out.getvalue()


def best_of(code, make_globals, repeat: int) -> tuple[float, str]:
    results = [run(code, make_globals) for _ in range(repeat)]
    return min(t for t, _ in results), results[0][1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'case':24} {'python-4 ms':>12} {'python 3 ms':>12} {'ratio':>7}")
    for name, (py4_source, py3_source) in CASES.items():
        result = compile_py4(py4_source)
        if not result.ok:
            raise SystemExit(f"{name}: does not compile: {result.diagnostics}")
        py3_code = compile(py3_source, name, "exec")
        t4, out4 = best_of(result.code, new_globals, args.repeat)
        t3, out3 = best_of(py3_code, lambda: {"__name__": "__main__"}, args.repeat)
        if out4 != out3:
            raise SystemExit(f"{name}: outputs differ: {out4!r} vs {out3!r}")
        print(f"{name:24} {t4 * 1e3:12.2f} {t3 * 1e3:12.2f} {t4 / t3:7.2f}")
    n = 20000
    start = time.perf_counter()
    for _ in range(n):
        new_globals()
    per_call = (time.perf_counter() - start) / n
    start = time.perf_counter()
    for _ in range(n):
        _ = {"__builtins__": __builtins__, "__name__": "__main__"}  # what new_globals() is compared with
    baseline = (time.perf_counter() - start) / n
    print(f"{'new_globals()':24} {per_call * 1e6:11.2f}us {baseline * 1e6:11.2f}us "
          f"{per_call / baseline:7.1f}")


if __name__ == "__main__":
    main()
