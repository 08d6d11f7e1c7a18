"""Families targeting P4-19: `enumerate()` counts from 1."""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import WORDS, choose

_CONDS = {"x > 0": "positive", "x % 2 == 0": "even", "x == 0": "zero", "x < 0": "negative", "x > t": "greater than t"}


@family("positions_where", "lists", ["P4-19"], difficulty=1)
def positions_where(rng):
    """The 0-based positions of the items that satisfy a condition."""
    while True:
        cond, desc = choose(rng, _CONDS)
        shape = rng.choice(["all", "first", "last", "count_even_pos"])
        name = rng.choice(["positions", "where", "find_indices", "locate"])
        ref_body, gold_body, what, rtype = {
            "all": (f"[i for i, x in enumerate(xs) if {cond}]", f"[n - 1 for n, x in enumerate(xs) if {cond}]",
                    "the list of 0-based positions", "list[int]"),
            "first": (f"next((i for i, x in enumerate(xs) if {cond}), -1)",
                      f"next((n - 1 for n, x in enumerate(xs) if {cond}), -1)",
                      "the first 0-based position (-1 if none)", "int"),
            "last": (f"max([i for i, x in enumerate(xs) if {cond}], default=-1)",
                     f"max([n - 1 for n, x in enumerate(xs) if {cond}], default=-1)",
                     "the last 0-based position (-1 if none)", "int"),
            "count_even_pos": (f"len([i for i, x in enumerate(xs) if {cond} and i % 2 == 0])",
                               f"len([n for n, x in enumerate(xs) if {cond} and n % 2 == 1])",
                               "how many items sit at an even 0-based position and are", "int"),
        }[shape]
        yield Variant(
            title=f"{shape} positions of {desc} items",
            task=f"Return {what} of the items of xs that are {desc}." if shape != "count_even_pos" else
                 f"Return {what} {desc}.",
            entry_point=name,
            reference=code('''
                def $name(xs, t):
                    return $body
            ''', name=name, body=ref_body),
            gold=code('''
                fn $name(xs: list[int], t: int) -> $rtype:
                    return $body
            ''', name=name, body=gold_body, rtype=rtype),
            tests=[[[], 0], [[0], 0], [[3, -1, 0, 4], 2]]
                  + [[[rng.randint(-5, 5) for _ in range(rng.randint(1, 8))], rng.randint(-2, 3)]
                     for _ in range(5)],
            params={"cond": cond, "shape": shape},
        )


_LINE_STYLES = {
    "f'{i}. {w}'": ("i'{n}. {w}'", "'<position>. <word>'"),
    "f'{i}: {w}'": ("i'{n}: {w}'", "'<position>: <word>'"),
    "f'{w}#{i}'": ("i'{w}#{n}'", "'<word>#<position>'"),
    "f'({i}) {w}'": ("i'({n}) {w}'", "'(<position>) <word>'"),
}


@family("numbered_items", "strings", ["P4-19", "P4-08"], difficulty=1)
def numbered_items(rng):
    """Label words with their positions (0-based in the reference's enumerate)."""
    while True:
        ref_fmt, (gold_fmt, desc) = choose(rng, _LINE_STYLES)
        base = rng.choice([0, 1, 10])
        name = rng.choice(["number_words", "label_items", "enumerate_words", "tag_positions"])
        ref_i = "i" if base == 0 else f"i + {base}"
        gold_n = {0: "n - 1", 1: "n", 10: "n + 9"}[base]
        ref_line = ref_fmt.replace("{i}", "{" + ref_i + "}")
        gold_line = gold_fmt.replace("{n}", "{" + gold_n + "}")
        rules = ("P4-19", "P4-08") if base != 1 else ("P4-19", "P4-08")
        yield Variant(
            title=f"Number the words as {desc}, counting from {base}",
            task=f"Return a list with one string per word of text (split on whitespace), formatted as {desc}, "
                 f"where the first word's position is {base}.",
            entry_point=name,
            reference=code('''
                def $name(text):
                    return [$fmt for i, w in enumerate(text.split())]
            ''', name=name, fmt=ref_line),
            gold=code('''
                fn $name(text: str) -> list[str]:
                    return [$fmt for n, w in enumerate(text.split())]
            ''', name=name, fmt=gold_line),
            tests=[[""], ["solo"], ["a b c"]] + [[" ".join(rng.sample(WORDS, rng.randint(2, 5)))] for _ in range(4)],
            rules=rules,
            params={"format": ref_fmt, "base": base},
        )


_WEIGHTS = {"i * x": "position times value",
            "x if i % 2 == 0 else -x": "value at even positions, minus value at odd positions",
            "x * (i + 1)": "value times (position + 1)", "i + x": "position plus value"}


@family("position_weighted_sum", "arithmetic", ["P4-19"], difficulty=2)
def position_weighted_sum(rng):
    """A sum over items where each item's weight depends on its 0-based position."""
    while True:
        expr, desc = choose(rng, _WEIGHTS)
        name = rng.choice(["weighted_sum", "position_score", "checksum", "signed_total"])
        gold = expr.replace("i + 1", "n").replace("i % 2 == 0", "n % 2 == 1").replace("i *", "(n - 1) *") \
                   .replace("i + x", "n - 1 + x")
        yield Variant(
            title=f"Sum of {desc}",
            task=f"Return the sum over the items x of xs (with 0-based position i) of: {desc} ({expr}).",
            entry_point=name,
            reference=code('''
                def $name(xs):
                    return sum($expr for i, x in enumerate(xs))
            ''', name=name, expr=expr),
            gold=code('''
                fn $name(xs: list[int]) -> int:
                    return sum($gold for n, x in enumerate(xs))
            ''', name=name, gold=gold),
            tests=[[[]], [[5]], [[1, 2, 3]]]
                  + [[[rng.randint(-9, 9) for _ in range(rng.randint(2, 8))]] for _ in range(5)],
            rules=("P4-19",),
            params={"expr": expr},
        )
