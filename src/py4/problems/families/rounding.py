"""Families targeting P4-22: `round()` rounds halves away from zero in Python-4.

The references use Python 3's `round`, which sends exact halves to the even neighbour;
the tasks say so, and the gold reproduces that behaviour on top of Python-4's `round`.
"""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import choose

_HALF_EVEN_HELPER = '''
fn half_even(x: float) -> int:
    let r = round(x)
    if abs(x - r) == 0.5 and r % 2 != 0:
        r = r - 1 if r > 0 else r + 1
    return r
'''.strip("\n")

_SCALES = {"x": "each value", "x * 3": "three times each value", "x / 2": "half of each value",
           "x * 1.5": "1.5 times each value", "x - 0.5": "each value minus 0.5", "x + 1": "each value plus 1"}
_POOL = [k / 4 for k in range(-24, 25)]


def _half_away(v: float) -> int:
    return int(v + 0.5) if v >= 0 else -int(-v + 0.5)


def _biting(rng, expr: str, n: int) -> list[float]:
    """Values x whose scaled value is a tie that Python 3 and Python-4 round differently."""
    f = eval("lambda x: " + expr)  # our own constant expressions, never input
    bites = [x for x in _POOL if f(x) > 0 and round(f(x)) != _half_away(f(x))]  # same sign: no cancelling in sums
    return rng.sample(bites, min(n, len(bites)))


def _halves(rng, n):
    return [rng.randint(-12, 12) / 2 for _ in range(n)]


@family("round_each", "arithmetic", ["P4-22"], difficulty=2)
def round_each(rng):
    """Round every (scaled) value to an integer, ties to even."""
    while True:
        expr, desc = choose(rng, _SCALES)
        agg = rng.choice(["list", "sum", "distinct"])
        name = rng.choice(["round_all", "to_integers", "bankers_round", "nearest_ints"])
        ref, gold, what, rtype = {
            "list": (f"[round({expr}) for x in xs]", f"[half_even({expr}) for x in xs]", "the list of the results",
                     "list[int]"),
            "sum": (f"sum(round({expr}) for x in xs)", f"sum(half_even({expr}) for x in xs)", "the sum of the results",
                    "int"),
            "distinct": (f"sorted(set(round({expr}) for x in xs))", f"sorted(set(half_even({expr}) for x in xs))",
                         "the sorted distinct results", "list[int]"),
        }[agg]
        yield Variant(
            title=f"Round {desc} (ties to even): {agg}",
            task=f"Round {desc} of xs to the nearest integer, with exact ties going to the even neighbour "
                 f"(2.5 -> 2, 3.5 -> 4, -2.5 -> -2), and return {what}.",
            entry_point=name,
            reference=code('''
                def $name(xs):
                    return $ref
            ''', name=name, ref=ref),
            gold=_HALF_EVEN_HELPER + "\n\n\n" + code('''
                fn $name(xs: list[float]) -> $rtype:
                    return $gold
            ''', name=name, gold=gold, rtype=rtype),
            tests=[[[]], [_biting(rng, expr, 3)], [_biting(rng, expr, 2) + _halves(rng, 2)], [[0.4, 0.6, 7.0]]]
                  + [[_halves(rng, rng.randint(1, 6))] for _ in range(4)],
            params={"expr": expr, "agg": agg},
        )


@family("rounded_mean", "statistics", ["P4-22"], difficulty=2)
def rounded_mean(rng):
    """The mean (or another average) of integers rounded with ties to even."""
    while True:
        kind = rng.choice(["mean", "midrange", "mean_of_pairs"])
        empty = rng.choice([0, -1])
        name = rng.choice(["rounded_average", "mean_score", "average_int", "typical_value"])
        ref, gold, what, rtype = {
            "mean": ("round(sum(xs) / len(xs))", "half_even(sum(xs) / len(xs))", "the mean of xs", "int"),
            "midrange": ("round((min(xs) + max(xs)) / 2)", "half_even((min(xs) + max(xs)) / 2)",
                         "the midpoint of the smallest and largest items", "int"),
            "mean_of_pairs": ("[round((xs[i] + xs[i + 1]) / 2) for i in range(len(xs) - 1)]",
                              "[half_even((xs[i] + xs[i + 1]) / 2) for i in range(0, len(xs) - 2)]",
                              "the list of the means of each item and the next", "list[int]"),
        }[kind]
        rules = ("P4-22", "P4-12") if kind == "mean_of_pairs" else ("P4-22",)
        yield Variant(
            title=f"Rounded {kind} (ties to even), {empty} when empty",
            task=f"Return {what}, rounded to the nearest integer with exact ties going to the even neighbour "
                 f"(Python 3's round). For an empty xs return {empty}"
                 f"{' (an empty list)' if kind == 'mean_of_pairs' else ''}."
                 .replace(f"return {empty} (an empty list)", "return an empty list"),
            entry_point=name,
            reference=code('''
                def $name(xs):
                    if not xs:
                        return $empty
                    return $ref
            ''', name=name, empty="[]" if kind == "mean_of_pairs" else empty, ref=ref),
            gold=_HALF_EVEN_HELPER + "\n\n\n" + code('''
                fn $name(xs: list[int]) -> $rtype:
                    if not xs:
                        return $empty
                    return $gold
            ''', name=name, empty="[]" if kind == "mean_of_pairs" else empty, gold=gold, rtype=rtype),
            tests=[[[]], [[1, 2]], [[2, 3]], [[-1, -2]], [[1, 2, 3, 4]], [[5, 6, 7, 9]]]
                  + [[[rng.randint(-9, 9) for _ in range(rng.randint(1, 6))]] for _ in range(3)],
            rules=rules,
            params={"kind": kind, "empty": empty},
        )
