"""Families targeting P4-14: no negative index literals; `first(xs)`, `last(xs)`."""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import WORDS

# (Python 3 expression, Python-4 expression, description); xs is non-empty
_END_EXPRS = [
    ("xs[-1]", "last(xs)", "the last item"),
    ("xs[-1] - xs[0]", "last(xs) - first(xs)", "the last item minus the first"),
    ("xs[-1] + xs[-2]", "last(xs) + xs[len(xs) - 2]", "the sum of the last two items"),
    ("xs[-2]", "xs[len(xs) - 2]", "the second-to-last item"),
    ("max(xs[0], xs[-1])", "max(first(xs), last(xs))", "the larger of the first and last items"),
    ("xs[-1] * 2", "last(xs) * 2", "twice the last item"),
    ("xs[-3]", "xs[len(xs) - 3]", "the third-to-last item"),
    ("xs[-1] * xs[-2]", "last(xs) * xs[len(xs) - 2]", "the product of the last two items"),
]


@family("end_items", "lists", ["P4-14"], difficulty=1)
def end_items(rng):
    """Values computed from the items at the end of each list."""
    while True:
        ref, gold, desc = rng.choice(_END_EXPRS)
        need = 3 if "-3" in ref else 2 if "-2" in ref else 1
        default = rng.choice([0, -1, None])
        name = rng.choice(["tail_values", "end_values", "last_parts", "from_the_end"])
        yield Variant(
            title=f"{desc.capitalize()} of each list",
            task=f"groups is a list of integer lists. Return a list with, for each group, {desc}; a group with "
                 f"fewer than {need} items gives {default!r}.",
            entry_point=name,
            reference=code('''
                def $name(groups):
                    out = []
                    for xs in groups:
                        out.append($ref if len(xs) >= $need else $default)
                    return out
            ''', name=name, ref=ref, need=need, default=default),
            gold=code('''
                fn $name(groups: list[list[int]]) -> list[int | nil]:
                    let out = []
                    for xs in groups:
                        out.append($gold if len(xs) >= $need else $default)
                    return out
            ''', name=name, gold=gold, need=need, default="nil" if default is None else default),
            tests=[[[]], [[[]]], [[[4]]], [[[1, 2, 3]]]]
                  + [[[[rng.randint(-9, 9) for _ in range(rng.randint(0, 5))] for _ in range(rng.randint(1, 4))]]
                     for _ in range(4)],
            params={"expr": ref, "default": default},
        )


_WORD_ENDS = [
    ("w[0] == w[-1]", "w[0] == last(w)", "start and end with the same letter"),
    ("w[-1] in 'aeiou'", "last(w) in 'aeiou'", "end with a vowel"),
    ("w[-1] == 's'", "last(w) == 's'", "end with 's'"),
    ("w[-1] == w[-2]", "last(w) == w[len(w) - 2]", "end with a doubled letter"),
    ("w[-1] > w[0]", "last(w) > first(w)", "have a last letter alphabetically after their first"),
    ("w[-2] in 'aeiou'", "w[len(w) - 2] in 'aeiou'", "have a vowel as second-to-last letter"),
]


@family("word_endings", "strings", ["P4-14"], difficulty=1)
def word_endings(rng):
    """Select or count words by their last letters."""
    while True:
        ref, gold, desc = rng.choice(_WORD_ENDS)
        mode = rng.choice(["count", "list", "last_match"])
        name = rng.choice(["match_endings", "word_ends", "ending_filter", "select_words"])
        minlen = 2 if "-2" in ref else 1
        body = {"count": ("len([w for w in words if len(w) >= $m and $c])", "int",
                          f"how many words (of length >= {minlen}) {desc}"),
                "list": ("[w for w in words if len(w) >= $m and $c]", "list[str]",
                         f"the words (of length >= {minlen}) that {desc}, in order"),
                "last_match": ("([w for w in words if len(w) >= $m and $c] or [''])[-1]", "str",
                               f"the last word (of length >= {minlen}) that {desc}, or '' if none does")}[mode]
        ref_body = body[0].replace("$m", str(minlen)).replace("$c", ref)
        gold_body = body[0].replace("$m", str(minlen)).replace("$c", gold)
        if mode == "last_match":
            gold_body = "last(" + gold_body.removeprefix("(").removesuffix(")[-1]") + ")"
        yield Variant(
            title=f"Words that {desc} ({mode})",
            task=f"Split text on whitespace and return {body[2]}.",
            entry_point=name,
            reference=code('''
                def $name(text):
                    words = text.split()
                    return $body
            ''', name=name, body=ref_body),
            gold=code('''
                fn $name(text: str) -> $rtype:
                    let words = text.split()
                    return $body
            ''', name=name, body=gold_body, rtype=body[1]),
            tests=[[""], ["a"], ["moss gas tea"], ["noon level sees"]]
                  + [[" ".join(rng.sample(WORDS, rng.randint(2, 7)))] for _ in range(4)],
            params={"cond": ref, "mode": mode},
        )
