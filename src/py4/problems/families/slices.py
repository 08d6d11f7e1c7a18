"""Families targeting P4-13: slices include their end index (`xs[0:k - 1]`)."""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import WORDS, choose

_WINDOW_AGGS = {"sum": "sums", "max": "maxima", "min": "minima", "sorted": "sorted copies",
                "len(set": "numbers of distinct values"}


@family("window_stats", "lists", ["P4-13", "P4-12"], difficulty=2)
def window_stats(rng):
    """A statistic of every window of k consecutive items."""
    while True:
        agg, desc = choose(rng, _WINDOW_AGGS)
        k = rng.randint(2, 4)
        name = rng.choice(["window_stats", "sliding", "windows", "rolling"])
        call_ref = f"len(set(xs[i:i + {k}]))" if agg == "len(set" else f"{agg}(xs[i:i + {k}])"
        call_gold = f"len(set(xs[i:i + {k - 1}]))" if agg == "len(set" else f"{agg}(xs[i:i + {k - 1}])"
        rtype = "list[list[int]]" if agg == "sorted" else "list[int]"
        yield Variant(
            title=f"Sliding-window {desc}, width {k}",
            task=f"Return the list of the {desc} of every window of {k} consecutive items of xs, from left to right "
                 f"(an empty list when xs has fewer than {k} items).",
            entry_point=name,
            reference=code('''
                def $name(xs):
                    return [$call for i in range(len(xs) - $km1)]
            ''', name=name, call=call_ref, km1=k - 1),
            gold=code('''
                fn $name(xs: list[int]) -> $rtype:
                    return [$call for i in range(0, len(xs) - $k)]
            ''', name=name, call=call_gold, k=k, rtype=rtype),
            tests=[[[]], [list(range(1, k))], [list(range(k, 0, -1))]]
                  + [[[rng.randint(-9, 9) for _ in range(rng.randint(k, k + 5))]] for _ in range(5)],
            params={"agg": agg, "k": k},
        )


@family("chunk_items", "lists", ["P4-13", "P4-12"], difficulty=2)
def chunk_items(rng):
    """Split a list or string into consecutive chunks of size k."""
    while True:
        k = rng.randint(2, 5)
        kind = rng.choice(["list", "str"])
        post = rng.choice(["chunks", "sums", "lens"]) if kind == "list" else rng.choice(["chunks", "reversed"])
        name = rng.choice(["chunk", "split_into_groups", "batches", "group_by_size"])
        expr_ref = {"chunks": f"seq[i:i + {k}]", "sums": f"sum(seq[i:i + {k}])", "lens": f"len(seq[i:i + {k}])",
                    "reversed": f"seq[i:i + {k}][::-1]"}[post]
        expr_gold = expr_ref.replace(f"i + {k}]", f"i + {k - 1}]")
        ptype = "list[int]" if kind == "list" else "str"
        rtype = {"chunks": f"list[{ptype}]", "sums": "list[int]", "lens": "list[int]", "reversed": "list[str]"}[post]
        what = {"chunks": "the chunks", "sums": "the sum of each chunk", "lens": "the length of each chunk",
                "reversed": "each chunk reversed"}[post]
        make = (lambda: [rng.randint(0, 9) for _ in range(rng.randint(1, 11))]) if kind == "list" else \
            (lambda: "".join(rng.choice("abcdefgh") for _ in range(rng.randint(1, 11))))
        yield Variant(
            title=f"Chunks of {k} of a {kind}: {post}",
            task=f"Cut the {kind} seq into consecutive chunks of {k} items from the start (the last chunk may be "
                 f"shorter) and return a list of {what}.",
            entry_point=name,
            reference=code('''
                def $name(seq):
                    return [$expr for i in range(0, len(seq), $k)]
            ''', name=name, expr=expr_ref, k=k),
            gold=code('''
                fn $name(seq: $ptype) -> $rtype:
                    return [$expr for i in range(0, len(seq) - 1, $k)]
            ''', name=name, expr=expr_gold, k=k, ptype=ptype, rtype=rtype),
            tests=[[[] if kind == "list" else ""], [make()], [make()], [make()], [make()], [make()],
                   [list(range(k)) if kind == "list" else "x" * k]],
            params={"k": k, "kind": kind, "post": post},
        )


_PIECES = {
    "s[:k]": ("s[0:k - 1]", "the first k characters"),
    "s[k:]": None,  # placeholder removed below
    "s[1:k]": ("s[1:k - 1]", "the characters at positions 1 .. k-1"),
    "s[:k] + s[:k]": ("s[0:k - 1] + s[0:k - 1]", "the first k characters, twice"),
    "s[:k].upper() + s[k:]": ("s[0:k - 1].upper() + s[k:]", "s with its first k characters upper-cased"),
    "s[k:] + s[:k]": ("s[k:] + s[0:k - 1]", "s rotated left by k (the first k characters moved to the end)"),
    "s[:k][::-1] + s[k:]": ("s[0:k - 1][::-1] + s[k:]", "s with its first k characters reversed"),
}
_PIECES = {k: v for k, v in _PIECES.items() if v}


@family("string_prefixes", "strings", ["P4-13"], difficulty=1)
def string_prefixes(rng):
    """Take, rotate or rewrite the first k characters of each word."""
    while True:
        ref_expr, (gold_expr, desc) = choose(rng, _PIECES)
        sep = rng.choice([" ", "-", ",", ""])
        name = rng.choice(["prefix_words", "rewrite_heads", "word_heads", "head_transform"])
        yield Variant(
            title=f"{desc.capitalize()} of each word, joined by {sep!r}",
            task=f"For each word s of text (split on whitespace) compute {desc} (k >= 0; when k exceeds the word's "
                 f"length the whole word counts), and return the results joined by {sep!r}.",
            entry_point=name,
            reference=code('''
                def $name(text, k):
                    return $sep.join($expr for s in text.split())
            ''', name=name, sep=repr(sep), expr=ref_expr),
            gold=code('''
                fn $name(text: str, k: int) -> str:
                    return [$expr for s in text.split()].join($sep)
            ''', name=name, sep=repr(sep), expr=gold_expr),
            tests=[["", 2], ["abc", 0], ["abc", 1], ["abc def", 3], ["hi", 5]]
                  + [[" ".join(rng.sample(WORDS, rng.randint(1, 4))), rng.randint(1, 6)] for _ in range(3)],
            rules=("P4-13", "P4-18"),
            params={"expr": ref_expr, "sep": sep},
        )


@family("middle_segment", "lists", ["P4-13"], difficulty=2)
def middle_segment(rng):
    """Drop a fixed number of items from both ends (negative slice bounds in Python 3)."""
    while True:
        a, b = rng.randint(1, 3), rng.randint(1, 3)
        agg = rng.choice(["list", "sum", "max_or_none", "len"])
        name = rng.choice(["trim_ends", "middle", "inner_part", "drop_edges"])
        ref_core = f"xs[{a}:-{b}]"
        gold_core = f"xs[{a}:len(xs) - {b + 1}]"
        wrap = {"list": "{c}", "sum": "sum({c})", "len": "len({c})",
                "max_or_none": "max({c}) if {c} else None"}[agg]
        rtype = {"list": "list[int]", "sum": "int", "len": "int", "max_or_none": "int | nil"}[agg]
        what = {"list": "the remaining items", "sum": "the sum of the remaining items",
                "len": "how many items remain", "max_or_none": "the largest remaining item (None if none remain)"}[agg]
        yield Variant(
            title=f"Drop {a} from the front and {b} from the back: {agg}",
            task=f"Remove the first {a} and the last {b} items of xs and return {what}.",
            entry_point=name,
            reference=code('''
                def $name(xs):
                    return $body
            ''', name=name, body=wrap.format(c=ref_core)),
            gold=code('''
                fn $name(xs: list[int]) -> $rtype:
                    let inner = $core
                    return $body
            ''', name=name, core=gold_core, body=wrap.format(c="inner").replace("None", "nil"), rtype=rtype),
            tests=[[[]], [[1]], [list(range(a + b))], [list(range(a + b + 1))]]
                  + [[[rng.randint(-9, 9) for _ in range(rng.randint(a + b, a + b + 6))]] for _ in range(4)],
            params={"front": a, "back": b, "agg": agg},
        )
