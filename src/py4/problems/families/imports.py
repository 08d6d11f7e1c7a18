"""Families targeting P4-10: `use m` / `from m use a` replace `import`."""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import WORDS, choose

# (import line, use line, expression over ints a and b, description, domain)
_MATH = [
    ("import math", "use math", "math.gcd(a, b)", "the greatest common divisor of a and b"),
    ("import math", "use math", "math.lcm(a, b)", "the least common multiple of a and b"),
    ("import math", "use math", "math.isqrt(a * a + b * b)", "the integer square root of a*a + b*b"),
    ("import math", "use math", "math.comb(a + b, b)", "the number of ways to choose b items from a + b"),
    ("import math", "use math", "math.factorial(a) // math.factorial(b)", "a! divided by b! (b <= a here)"),
    ("from math import gcd", "from math use gcd", "a * b // gcd(a, b)", "a * b divided by gcd(a, b)"),
    ("from math import isqrt", "from math use isqrt", "isqrt(a) + isqrt(b)", "isqrt(a) + isqrt(b)"),
    ("import math", "use math", "math.perm(a, min(a, b))",
     "the number of ordered selections of min(a, b) items from a"),
]
_AGGS = {"sum": "the sum", "max": "the largest", "min": "the smallest"}


@family("math_module", "arithmetic", ["P4-10"], difficulty=1)
def math_module(rng):
    """Compute with functions from the math module over pairs of positive integers."""
    while True:
        imp, use, expr, desc = rng.choice(_MATH)
        agg, adesc = choose(rng, _AGGS)
        name = rng.choice(["pair_metric", "combine_pairs", "number_theory", "pair_stat"])
        ordered = "factorial(b)" in expr
        def pair():
            a, b = rng.randint(1, 12), rng.randint(1, 12)
            return [max(a, b), min(a, b)] if ordered else [a, b]
        yield Variant(
            title=f"{adesc.capitalize()} of {expr} over pairs",
            task=f"pairs is a non-empty list of [a, b] positive integer pairs. For each pair compute {desc} "
                 f"({expr} with Python's math module) and return {adesc} of these values.",
            entry_point=name,
            reference=code('''
                $imp

                def $name(pairs):
                    return $agg($expr for a, b in pairs)
            ''', imp=imp, name=name, agg=agg, expr=expr),
            gold=code('''
                $use

                fn $name(pairs: list[list[int]]) -> int:
                    return $agg($expr for a, b in pairs)
            ''', use=use, name=name, agg=agg, expr=expr),
            tests=[[[[1, 1]]], [[[12, 8]]]] + [[[pair() for _ in range(rng.randint(1, 5))]] for _ in range(6)],
            params={"expr": expr, "agg": agg},
        )


_COUNTER_TASKS = [
    ("most common letter", "the most common letter of text (ignoring non-letters; ties go to the letter seen first)",
     "Counter(c for c in text.lower() if c.isalpha())", "c.most_common(1)[0][0] if c else ''", "str"),
    ("top 2 words", "the two most common words of text, most common first (ties: first seen first)",
     "Counter(text.split())", "[w for w, n in c.most_common(2)]", "list[str]"),
    ("count of distinct words", "how many distinct words appear exactly once in text",
     "Counter(text.split())", "len([w for w in c if c[w] == 1])", "int"),
    ("max multiplicity", "the largest number of times any word occurs in text (0 for no words)",
     "Counter(text.split())", "max(c.values()) if c else 0", "int"),
    ("letters at least twice", "the sorted letters that occur at least twice in text (ignoring non-letters)",
     "Counter(ch for ch in text if ch.isalpha())", "sorted(ch for ch in c if c[ch] >= 2)", "list[str]"),
]


@family("counter_module", "counting", ["P4-10"], difficulty=2)
def counter_module(rng):
    """Count with collections.Counter (imported with `from collections use Counter`)."""
    while True:
        title, desc, make, result, rtype = rng.choice(_COUNTER_TASKS)
        style = rng.choice(["from", "module"])
        name = rng.choice(["tally", "frequency_answer", "count_stats", "word_counts"])
        if style == "module":
            imp, use = "import collections", "use collections"
            make = make.replace("Counter(", "collections.Counter(")
        else:
            imp, use = "from collections import Counter", "from collections use Counter"
        # Counter is made outside Python-4 code: iterating it yields keys in both languages.
        yield Variant(
            title=f"Counter: {title} ({style} import)",
            task=f"Return {desc}.",
            entry_point=name,
            reference=code('''
                $imp

                def $name(text):
                    c = $make
                    return $result
            ''', imp=imp, name=name, make=make, result=result),
            gold=code('''
                $use

                fn $name(text: str) -> $rtype:
                    let c = $make
                    return $result
            ''', use=use, name=name, make=make, result=result, rtype=rtype),
            tests=[[""], ["a"], ["b a b"]] + [[" ".join(rng.choice(WORDS[:12]) for _ in range(rng.randint(2, 9)))]
                                            for _ in range(5)],
            params={"task": title, "style": style},
        )


_STRING_SETS = [
    ("string.ascii_lowercase", "lower-case ASCII letters"),
    ("string.ascii_uppercase", "upper-case ASCII letters"),
    ("string.digits", "decimal digits"),
    ("string.punctuation", "ASCII punctuation characters"),
    ("string.whitespace", "whitespace characters"),
    ("string.hexdigits", "hexadecimal digit characters (either case)"),
]


@family("string_module", "strings", ["P4-10"], difficulty=1)
def string_module(rng):
    """Classify characters with the constants of the string module."""
    while True:
        const, desc = rng.choice(_STRING_SETS)
        mode = rng.choice(["count", "keep", "drop"])
        name = rng.choice(["char_filter", "classify_chars", "pick_chars", "char_census"])
        body, rtype, what = {
            "count": (f"len([c for c in text if c in {const}])", "int", f"how many characters of text are {desc}"),
            "keep": (f"''.join(c for c in text if c in {const})", "str", f"text with only its {desc} kept"),
            "drop": (f"''.join(c for c in text if c not in {const})", "str", f"text with its {desc} removed"),
        }[mode]
        gold_body = body.replace("''.join(c for c in text if c in " + const + ")",
                                 f"[c for c in text if c in {const}].join('')") \
                        .replace("''.join(c for c in text if c not in " + const + ")",
                                 f"[c for c in text if c not in {const}].join('')")
        rules = ("P4-10",) if mode == "count" else ("P4-10", "P4-18")
        samples = ["Hello, World! 42", "a-b c_D 9f", "", "   ", "Py4 (2026): ok?", "ABCdef\t123\n", "x"]
        yield Variant(
            title=f"string module: {mode} {desc}",
            task=f"Return {what} (as listed in Python's {const}).",
            entry_point=name,
            reference=code('''
                import string

                def $name(text):
                    return $body
            ''', name=name, body=body),
            gold=code('''
                use string

                fn $name(text: str) -> $rtype:
                    return $body
            ''', name=name, body=gold_body, rtype=rtype),
            tests=[[s] for s in samples] + [[" ".join(rng.sample(WORDS, 2)) + rng.choice(["!", "7", " A", "#x"])]],
            rules=rules,
            params={"const": const, "mode": mode},
        )


_COMBOS = [
    ("combinations", "sum(c) == target", "unordered groups of {k} distinct positions whose values sum to target"),
    ("combinations", "max(c) - min(c) <= target",
     "unordered groups of {k} distinct positions whose values span at most target"),
    ("permutations", "c[0] > c[1]",
     "ordered arrangements of {k} distinct positions whose first value exceeds the second"),
    ("product", "sum(c) == target", "ordered {k}-tuples of values (repetition allowed) whose sum is target"),
]


@family("itertools_count", "combinatorics", ["P4-10"], difficulty=2)
def itertools_count(rng):
    """Count itertools combinations/permutations/products that satisfy a condition."""
    while True:
        fn, cond, desc = rng.choice(_COMBOS)
        k = rng.choice([2, 3]) if fn != "permutations" else 2
        call = f"{fn}(xs, repeat={k})" if fn == "product" else f"{fn}(xs, {k})"
        style = rng.choice(["from", "module"])
        name = rng.choice(["count_groups", "count_choices", "combo_count", "count_selections"])
        if style == "module":
            imp, use, call = "import itertools", "use itertools", "itertools." + call
        else:
            imp, use = f"from itertools import {fn}", f"from itertools use {fn}"
        yield Variant(
            title=f"Count {fn} of size {k} with {cond}",
            task=f"Return the number of {desc.format(k=k)} in the list xs (Python's itertools.{fn}).",
            entry_point=name,
            reference=code('''
                $imp

                def $name(xs, target):
                    return len([c for c in $call if $cond])
            ''', imp=imp, name=name, call=call, cond=cond),
            gold=code('''
                $use

                fn $name(xs: list[int], target: int) -> int:
                    return len([c for c in $call if $cond])
            ''', use=use, name=name, call=call, cond=cond),
            tests=[[[], 0], [[1, 2], 3]] + [[[rng.randint(0, 6) for _ in range(rng.randint(2, 5))], rng.randint(0, 8)]
                                            for _ in range(5)],
            params={"fn": fn, "cond": cond, "k": k, "style": style},
        )
