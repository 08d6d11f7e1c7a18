"""Families targeting P4-18: `join` belongs to the iterable (`xs.join(sep)`)."""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import WORDS, choose

_WORD_MAPS = {
    "w": "the words", "w.upper()": "the words in upper case", "w.capitalize()": "the capitalized words",
    "w[::-1]": "each word reversed", "w * 2": "each word doubled", "str(len(w))": "the word lengths",
}
_WORD_FILTERS = {"True": "every word", "len(w) > 4": "words longer than 4 letters",
                 "w[0] in 'aeiou'": "words starting with a vowel", "'e' in w": "words containing 'e'"}


@family("join_words", "strings", ["P4-18"], difficulty=1)
def join_words(rng):
    """Transform and filter words, then join them with a separator."""
    while True:
        m, mdesc = choose(rng, _WORD_MAPS)
        f, fdesc = choose(rng, _WORD_FILTERS)
        sep = rng.choice([" ", ", ", "-", "", " | ", "+"])
        name = rng.choice(["rejoin", "join_words", "word_line", "compose"])
        yield Variant(
            title=f"Join {mdesc} of {fdesc} with {sep!r}",
            task=f"Split text on whitespace; keep {fdesc}; return {mdesc} joined by {sep!r}.",
            entry_point=name,
            reference=code('''
                def $name(text):
                    return $sep.join($m for w in text.split() if $f)
            ''', name=name, sep=repr(sep), m=m, f=f),
            gold=code('''
                fn $name(text: str) -> str:
                    return [$m for w in text.split() if $f].join($sep)
            ''', name=name, sep=repr(sep), m=m, f=f.replace("True", "true")),
            tests=[[""], ["one"], ["tree apple"]]
                  + [[" ".join(rng.sample(WORDS, rng.randint(2, 6)))] for _ in range(5)],
            params={"map": m, "filter": f, "sep": sep},
        )


_NUM_RENDER = {"str(x)": "each number", "str(x * x)": "each square", "str(abs(x))": "each absolute value",
               "str(x).zfill(3)": "each number zero-filled to 3 characters (str.zfill)",
               "hex(x)": "each number in hex (hex(x))"}


@family("number_line", "strings", ["P4-18"], difficulty=1)
def number_line(rng):
    """Render numbers as text joined by a separator, optionally with a header."""
    while True:
        m, mdesc = choose(rng, _NUM_RENDER)
        sep = rng.choice([",", ", ", ";", " ", "/", "\t"])
        wrap = rng.choice(["plain", "brackets", "count"])
        name = rng.choice(["csv_line", "render_numbers", "number_text", "serialize"])
        body = f"{sep!r}.join({m} for x in xs)"
        gold_body = f"[{m} for x in xs].join({sep!r})"
        outer = {"plain": "{b}", "brackets": "'[' + {b} + ']'", "count": "str(len(xs)) + ':' + {b}"}[wrap]
        wtext = {"plain": "", "brackets": " and wrap the result in square brackets",
                 "count": " and prefix the result with the count of numbers and ':'"}[wrap]
        yield Variant(
            title=f"Render {mdesc} with {sep!r} ({wrap})",
            task=f"Return {mdesc} of xs as text, joined by {sep!r}{wtext}.",
            entry_point=name,
            reference=code('''
                def $name(xs):
                    return $body
            ''', name=name, body=outer.format(b=body)),
            gold=code('''
                fn $name(xs: list[int]) -> str:
                    return $body
            ''', name=name, body=outer.format(b=gold_body)),
            tests=[[[]], [[0]], [[-1, 10]]]
                  + [[[rng.randint(-30, 300) for _ in range(rng.randint(1, 6))]] for _ in range(5)],
            params={"map": m, "sep": sep, "wrap": wrap},
        )


_ABBREV = {
    "w[0].upper()": "the upper-cased first letter of each word",
    "w[0]": "the first letter of each word",
    "w[:2]": "the first two letters of each word",
    "w[0] + str(len(w))": "the first letter of each word followed by its length",
}


@family("acronym", "strings", ["P4-18"], difficulty=1)
def acronym(rng):
    """Build an abbreviation from the words of a phrase."""
    while True:
        m, mdesc = choose(rng, _ABBREV)
        sep = rng.choice(["", ".", "-", " "])
        skip = rng.choice([[], ["of", "the"], ["and", "a", "the"]])
        name = rng.choice(["acronym", "abbreviate", "initials", "short_form"])
        gold_m = m.replace("w[:2]", "w[0:1]")
        rules = ("P4-18", "P4-13") if "w[:2]" in m else ("P4-18",)
        yield Variant(
            title=f"Abbreviation from {mdesc}, separator {sep!r}, skipping {skip}",
            task=f"Split phrase on whitespace, ignore the words {skip} (exact, case-sensitive match), and return "
                 f"{mdesc} joined by {sep!r}.",
            entry_point=name,
            reference=code('''
                def $name(phrase):
                    return $sep.join($m for w in phrase.split() if w not in $skip)
            ''', name=name, sep=repr(sep), m=m, skip=repr(skip)),
            gold=code('''
                fn $name(phrase: str) -> str:
                    return [$m for w in phrase.split() if w not in $skip].join($sep)
            ''', name=name, sep=repr(sep), m=gold_m, skip=repr(skip)),
            tests=[[""], ["portable network graphics"], ["the art of the deal"], ["a"]]
                  + [[" ".join(rng.sample(WORDS + ["of", "the", "and", "a"], rng.randint(2, 6)))] for _ in range(4)],
            rules=rules,
            params={"map": m, "sep": sep, "skip": skip},
        )
