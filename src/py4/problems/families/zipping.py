"""Families targeting P4-20: `zip()` is strict; `zip_shortest()` truncates."""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import NAMES, choose

_PAIR_OPS = {"a + b": "sums", "a * b": "products", "a - b": "differences a - b", "max(a, b)": "larger values",
             "abs(a - b)": "absolute differences", "a * 10 + b": "values a * 10 + b"}


@family("pairwise_combine", "lists", ["P4-20"], difficulty=1)
def pairwise_combine(rng):
    """Combine two lists position by position, up to the shorter length."""
    while True:
        op, desc = choose(rng, _PAIR_OPS)
        agg = rng.choice(["list", "sum", "count_pos"])
        name = rng.choice(["combine", "pairwise", "merge_values", "elementwise"])
        body, what, rtype = {
            "list": (f"[{op} for a, b in ZIP(xs, ys)]", f"the list of the {desc}", "list[int]"),
            "sum": (f"sum({op} for a, b in ZIP(xs, ys))", f"the total of the {desc}", "int"),
            "count_pos": (f"len([1 for a, b in ZIP(xs, ys) if {op} > 0])", f"how many of the {desc} are positive",
                          "int"),
        }[agg]
        yield Variant(
            title=f"Pairwise {desc}: {agg}",
            task=f"Pair the items of xs and ys position by position, stopping at the end of the shorter list, and "
                 f"return {what} (a from xs, b from ys).",
            entry_point=name,
            reference=code('''
                def $name(xs, ys):
                    return $body
            ''', name=name, body=body.replace("ZIP", "zip")),
            gold=code('''
                fn $name(xs: list[int], ys: list[int]) -> $rtype:
                    return $body
            ''', name=name, body=body.replace("ZIP", "zip_shortest"), rtype=rtype),
            tests=[[[], [1]], [[1, 2], [3, 4]], [[1, 2, 3], [4]], [[5], [6, 7, 8]]]
                  + [[[rng.randint(-5, 9) for _ in range(rng.randint(0, 6))],
                      [rng.randint(-5, 9) for _ in range(rng.randint(0, 6))]]
                     for _ in range(4)],
            params={"op": op, "agg": agg},
        )


_STEPS = {"b - a": "the differences between neighbours (next minus current)", "a + b": "the sums of neighbours",
          "b > a": "whether each next item is larger (True/False)", "max(a, b)": "the larger of each neighbour pair"}


@family("neighbour_steps", "lists", ["P4-20"], difficulty=1)
def neighbour_steps(rng):
    """Compare each item with the next one by zipping the list with its tail."""
    while True:
        op, desc = choose(rng, _STEPS)
        post = rng.choice(["list", "max", "first_drop"]) if op != "b > a" else rng.choice(["list", "all"])
        name = rng.choice(["steps", "neighbour_diffs", "adjacent", "deltas"])
        body, what, rtype = {
            "list": (f"[{op} for a, b in ZIP(xs, xs[1:])]", f"the list of {desc}", "list"),
            "max": (f"max([{op} for a, b in ZIP(xs, xs[1:])], default=0)", f"the largest of {desc} (0 if none)", "int"),
            "first_drop": ("next((i for i, (a, b) in enumerate(ZIP(xs, xs[1:])) if b < a), -1)",
                           "the 0-based position of the first item that is larger than the next (-1 if none)", "int"),
            "all": (f"all({op} for a, b in ZIP(xs, xs[1:]))", "True when every next item is larger", "bool"),
        }[post]
        gold_body = body.replace("ZIP", "zip_shortest")
        rules = ("P4-20",)
        if post == "first_drop":
            gold_body = "next((n - 1 for n, (a, b) in enumerate(zip_shortest(xs, xs[1:])) if b < a), -1)"
            rules = ("P4-20", "P4-19")
        yield Variant(
            title=f"Neighbour pairs: {desc} ({post})",
            task=f"For each item of xs and the item right after it, consider {desc}; return {what}.",
            entry_point=name,
            reference=code('''
                def $name(xs):
                    return $body
            ''', name=name, body=body.replace("ZIP", "zip")),
            gold=code('''
                fn $name(xs: list[int]) -> $rtype:
                    return $body
            ''', name=name, body=gold_body, rtype=rtype),
            tests=[[[]], [[4]], [[1, 2]], [[3, 1, 2]]]
                  + [[[rng.randint(-5, 9) for _ in range(rng.randint(2, 7))]] for _ in range(4)],
            rules=rules,
            params={"op": op, "post": post},
        )


@family("pair_up_names", "dicts", ["P4-20"], difficulty=1)
def pair_up_names(rng):
    """Build a dict or lines from two parallel lists that may differ in length."""
    while True:
        shape = rng.choice(["dict", "lines", "best"])
        sep = rng.choice([": ", "=", " -> "])
        name = rng.choice(["pair_up", "assign_scores", "match_lists", "roster"])
        body, what, rtype = {
            "dict": ("dict(ZIP(names, scores))", "a dict mapping each name to its score (a later duplicate name wins)",
                     "dict[str, int]"),
            "lines": (f"[n + {sep!r} + str(s) for n, s in ZIP(names, scores)]",
                      f"the list of '<name>{sep}<score>' strings",
                      "list[str]"),
            "best": ("max(ZIP(scores, names), default=[0, ''])[1]",
                     "the name with the highest score (ties: the alphabetically last name; '' when there are no pairs)",
                     "str"),
        }[shape]
        yield Variant(
            title=f"Pair names with scores: {shape}",
            task=f"names and scores are parallel lists, but either may be longer; pair them up to the shorter length "
                 f"and return {what}.",
            entry_point=name,
            reference=code('''
                def $name(names, scores):
                    return $body
            ''', name=name, body=body.replace("ZIP", "zip")),
            gold=code('''
                fn $name(names: list[str], scores: list[int]) -> $rtype:
                    return $body
            ''', name=name, body=body.replace("ZIP", "zip_shortest"), rtype=rtype),
            tests=[[[], []], [["ada"], [3, 4]], [["ada", "tim"], [5]], [["bo", "al"], [2, 2]]]
                  + [[rng.sample(NAMES, rng.randint(0, 4)), [rng.randint(0, 9) for _ in range(rng.randint(0, 4))]]
                     for _ in range(4)],
            params={"shape": shape, "sep": sep},
        )
