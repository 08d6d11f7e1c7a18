"""Families targeting P4-12: `range(a, b)` is closed; `indices(xs)` gives positions."""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import choose, int_lists

_TERMS = {
    "i": "the integers i",
    "i * i": "the squares i * i",
    "i * i * i": "the cubes i * i * i",
    "2 * i + 1": "the odd numbers 2 * i + 1",
    "3 * i - 1": "the values 3 * i - 1",
    "i * (i + 1)": "the products i * (i + 1)",
}


@family("series_sum", "arithmetic", ["P4-12"], difficulty=1)
def series_sum(rng):
    """Sum a simple term over i = start, start + step, ... up to and including n."""
    while True:
        expr, desc = choose(rng, _TERMS)
        start, step = rng.choice([0, 1, 2, 5]), rng.choice([1, 1, 2, 3])
        name = rng.choice(["series_sum", "sum_terms", "total_of_terms", "partial_sum"])
        step_arg = "" if step == 1 else f", {step}"
        yield Variant(
            title=f"Sum of {desc} from {start} in steps of {step}",
            task=f"Return the sum of {desc} for i = {start}, {start + step}, {start + 2 * step}, ... "
                 f"while i <= n (n itself is included when the sequence reaches it). "
                 f"Return 0 when n < {start}.",
            entry_point=name,
            reference=code("""
                def $name(n):
                    total = 0
                    for i in range($start, n + 1$step_arg):
                        total += $expr
                    return total
            """, name=name, start=start, step_arg=step_arg, expr=expr),
            gold=code("""
                fn $name(n: int) -> int:
                    let total = 0
                    for i in range($start, n$step_arg):
                        total += $expr
                    return total
            """, name=name, start=start, step_arg=step_arg, expr=expr),
            tests=[[start - 1], [start], [start + step - 1], [start + step], [start + 2 * step + 1]]
                  + [[rng.randint(start, 40)] for _ in range(3)],
            params={"expr": expr, "start": start, "step": step},
        )


_PAIR_TESTS = {
    "xs[i] + xs[j] == target": "xs[i] + xs[j] equals target",
    "xs[i] > xs[j] + target": "xs[i] is greater than xs[j] + target",
    "xs[i] * xs[j] == target": "xs[i] * xs[j] equals target",
    "xs[i] - xs[j] == target": "xs[i] - xs[j] equals target",
    "(xs[i] + xs[j]) % 2 == target % 2 and xs[i] != target":
        "xs[i] + xs[j] has the parity of target and xs[i] differs from target",
}


@family("pair_count", "lists", ["P4-12"], difficulty=2)
def pair_count(rng):
    """Count index pairs i < j whose values satisfy a condition (nested index loops)."""
    while True:
        cond, desc = choose(rng, _PAIR_TESTS)
        name = rng.choice(["count_pairs", "pair_count", "matching_pairs", "count_index_pairs"])
        # Non-negative values keep P4-23 (`%` on negatives) out of a P4-12 problem.
        lists = int_lists(rng, 6, lo=0, hi=9, min_len=2, max_len=7)
        yield Variant(
            title=f"Count pairs where {desc}",
            task=f"Given a list of non-negative integers xs and an integer target, return how many index "
                 f"pairs (i, j) with 0 <= i < j < len(xs) satisfy: {desc}.",
            entry_point=name,
            reference=code("""
                def $name(xs, target):
                    found = 0
                    for i in range(len(xs)):
                        for j in range(i + 1, len(xs)):
                            if $cond:
                                found += 1
                    return found
            """, name=name, cond=cond),
            gold=code("""
                fn $name(xs: list[int], target: int) -> int:
                    let found = 0
                    for i in indices(xs):
                        for j in range(i + 1, len(xs) - 1):
                            if $cond:
                                found += 1
                    return found
            """, name=name, cond=cond),
            tests=[[[], 3], [[5], 5]] + [[xs, rng.randint(0, 10)] for xs in lists],
            params={"cond": cond},
        )


@family("table_rows", "arithmetic", ["P4-12"], difficulty=1)
def table_rows(rng):
    """Build an n-row table whose row r holds f(r, c) for c = 1 .. width."""
    cells = {"r * c": "r * c", "r + c": "r + c", "r * r + c": "r * r + c", "max(r, c)": "the larger of r and c",
             "abs(r - c)": "the absolute difference of r and c", "r * 10 + c": "r * 10 + c"}
    while True:
        expr, desc = choose(rng, cells)
        width = rng.randint(2, 6)
        name = rng.choice(["make_table", "build_grid", "table_rows", "grid_of_values"])
        yield Variant(
            title=f"Table of {desc}, {width} columns",
            task=f"Return a list of n rows; row r (for r = 1 .. n) is the list of {desc} "
                 f"for c = 1 .. {width}. Return an empty list when n <= 0.",
            entry_point=name,
            reference=code("""
                def $name(n):
                    rows = []
                    for r in range(1, n + 1):
                        rows.append([$expr for c in range(1, $width + 1)])
                    return rows
            """, name=name, expr=expr, width=width),
            gold=code("""
                fn $name(n: int) -> list[list[int]]:
                    let rows = []
                    for r in range(1, n):
                        rows.append([$expr for c in range(1, $width)])
                    return rows
            """, name=name, expr=expr, width=width),
            tests=[[0], [1], [2], [-1], [rng.randint(3, 6)], [rng.randint(7, 9)]],
            params={"expr": expr, "width": width},
        )
