"""Families targeting P4-21: `bool` is not a number; `count(xs)` counts truthy items."""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import WORDS, choose

_INT_CONDS = {"x > 0": "positive", "x % 3 == 0": "multiples of 3", "x > t": "greater than t", "x == t": "equal to t",
              "abs(x) <= t": "within t of zero", "x != 0": "non-zero"}


@family("count_matching", "counting", ["P4-21"], difficulty=1)
def count_matching(rng):
    """Count items that satisfy a condition by summing booleans (Python 3) / count() (Python-4)."""
    while True:
        cond, desc = choose(rng, _INT_CONDS)
        shape = rng.choice(["count", "fraction", "more_than_half", "per_list"])
        name = rng.choice(["count_if", "how_many", "tally_matches", "matching"])
        ref, gold, what, rtype = {
            "count": (f"sum({cond} for x in xs)", f"count({cond} for x in xs)", "how many items are", "int"),
            "fraction": (f"sum({cond} for x in xs) / len(xs) if xs else 0.0",
                         f"count({cond} for x in xs) / len(xs) if xs else 0.0",
                         "the fraction (0.0 for an empty list) of items that are", "float"),
            "more_than_half": (f"sum({cond} for x in xs) * 2 > len(xs)", f"count({cond} for x in xs) * 2 > len(xs)",
                               "whether more than half of the items are", "bool"),
            "per_list": (f"[sum({cond} for x in row) for row in xs]", f"[count({cond} for x in row) for row in xs]",
                         "for each inner list, how many of its items are", "list[int]"),
        }[shape]
        mk = (lambda: [[rng.randint(-6, 9) for _ in range(rng.randint(0, 4))] for _ in range(rng.randint(1, 3))]) \
            if shape == "per_list" else (lambda: [rng.randint(-6, 9) for _ in range(rng.randint(1, 8))])
        yield Variant(
            title=f"{shape}: items that are {desc}",
            task=f"{'xs is a list of integer lists. ' if shape == 'per_list' else ''}Return {what} {desc}.",
            entry_point=name,
            reference=code('''
                def $name(xs, t):
                    return $ref
            ''', name=name, ref=ref),
            gold=code('''
                fn $name(xs: list, t: int) -> $rtype:
                    return $gold
            ''', name=name, gold=gold, rtype=rtype),
            tests=[[[], 1], [mk(), 0], [mk(), 2]] + [[mk(), rng.randint(-2, 4)] for _ in range(5)],
            tolerance=1e-9 if shape == "fraction" else None,
            params={"cond": cond, "shape": shape},
        )


_CHAR_TESTS = {"c.isupper()": "upper-case letters", "c.isdigit()": "digits", "c in 'aeiou'": "lower-case vowels",
               "c.isspace()": "whitespace characters",
               "not c.isalnum()": "characters that are neither letters nor digits"}


@family("count_char_kinds", "strings", ["P4-21"], difficulty=1)
def count_char_kinds(rng):
    """Count characters of a kind in each word or in the whole text."""
    while True:
        cond, desc = choose(rng, _CHAR_TESTS)
        scope = rng.choice(["text", "words", "best_word"])
        name = rng.choice(["count_kind", "char_census", "kind_counter", "measure_text"])
        ref, gold, what, rtype = {
            "text": (f"sum({cond} for c in text)", f"count({cond} for c in text)", f"how many {desc} text contains",
                     "int"),
            "words": (f"[sum({cond} for c in w) for w in text.split()]",
                      f"[count({cond} for c in w) for w in text.split()]",
                      f"for each word (split on whitespace), how many {desc} it contains", "list[int]"),
            "best_word": (f"max([sum({cond} for c in w) for w in text.split()], default=0)",
                          f"max([count({cond} for c in w) for w in text.split()], default=0)",
                          f"the largest number of {desc} found in a single word (0 if no words)", "int"),
        }[scope]
        yield Variant(
            title=f"Count {desc} ({scope})",
            task=f"Return {what}.",
            entry_point=name,
            reference=code('''
                def $name(text):
                    return $ref
            ''', name=name, ref=ref),
            gold=code('''
                fn $name(text: str) -> $rtype:
                    return $gold
            ''', name=name, gold=gold, rtype=rtype),
            tests=[[""], ["A1 b2 C3!"], ["  spaced   out "]]
                  + [[" ".join(rng.choice([w, w.upper(), w + str(rng.randint(0, 99)), w + "!"])
                               for w in rng.sample(WORDS, 3))]
                     for _ in range(5)],
            params={"cond": cond, "scope": scope},
        )


@family("ascending_steps", "lists", ["P4-21", "P4-12"], difficulty=2)
def ascending_steps(rng):
    """Count neighbour pairs that satisfy a comparison, by index."""
    while True:
        op = rng.choice(["<", ">", "==", "<=", "!="])
        gap = rng.choice([1, 2])
        name = rng.choice(["count_rises", "step_count", "neighbour_matches", "compare_neighbours"])
        yield Variant(
            title=f"Count i with xs[i] {op} xs[i + {gap}]",
            task=f"Return how many positions i have xs[i] {op} xs[i + {gap}] (both positions inside the list).",
            entry_point=name,
            reference=code('''
                def $name(xs):
                    return sum(xs[i] $op xs[i + $gap] for i in range(len(xs) - $gap))
            ''', name=name, op=op, gap=gap),
            gold=code('''
                fn $name(xs: list[int]) -> int:
                    return count(xs[i] $op xs[i + $gap] for i in range(0, len(xs) - $gp1))
            ''', name=name, op=op, gap=gap, gp1=gap + 1),
            tests=[[[]], [[1]], [[1, 2]], [[2, 2, 2]], [[3, 1, 2, 5]]]
                  + [[[rng.randint(0, 5) for _ in range(rng.randint(2, 8))]] for _ in range(4)],
            params={"op": op, "gap": gap},
        )
