"""Families targeting P4-08 (`i"..."` strings) and P4-25 (no `%`-formatting)."""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import NAMES, WORDS, choose

# (f-string body over name/score, description). Scores are ints.
_LINE_FORMATS = {
    "{name}: {score}": "'<name>: <score>'",
    "{name} scored {score}": "'<name> scored <score>'",
    "{name}={score:>4}": "'<name>=' then the score right-aligned in 4 characters",
    "{score:03d} {name}": "the score zero-padded to 3 digits, a space, then the name",
    "[{name}] {score * 2}": "'[<name>] ' then twice the score",
    "{name.upper()}:{score}": "the name in upper case, ':' then the score",
    "{name:<6}|{score}": "the name left-aligned in 6 characters, '|' then the score",
    "{name} ({score} pts)": "'<name> (<score> pts)'",
}

_SCORE_FILTERS = {
    "True": "every entry",
    "score > 0": "only entries with a positive score",
    "score >= 10": "only entries with a score of at least 10",
    "len(name) > 3": "only entries whose name is longer than 3 characters",
}


@family("format_score_lines", "strings", ["P4-08"], difficulty=1)
def format_score_lines(rng):
    """Format [name, score] entries as text lines with interpolated strings."""
    while True:
        fmt, desc = choose(rng, _LINE_FORMATS)
        cond, cdesc = choose(rng, _SCORE_FILTERS)
        name = rng.choice(["format_scores", "score_lines", "render_scores", "describe_scores"])
        gold_cond = cond.replace("True", "true")
        entries = lambda: [[rng.choice(NAMES), rng.randint(-5, 120)] for _ in range(rng.randint(1, 5))]
        yield Variant(
            title=f"Score lines formatted as {fmt} ({cdesc})",
            task=f"entries is a list of [name, score] pairs (score an integer). Return a list of strings, one per "
                 f"entry in order, for {cdesc}; each string is {desc} (Python format spec: {fmt!r}).",
            entry_point=name,
            reference=code('''
                def $name(entries):
                    lines = []
                    for name, score in entries:
                        if $cond:
                            lines.append(f"$fmt")
                    return lines
            ''', name=name, cond=cond, fmt=fmt),
            gold=code('''
                fn $name(entries: list[list]) -> list[str]:
                    let lines = []
                    for name, score in entries:
                        if $cond:
                            lines.append(i"$fmt")
                    return lines
            ''', name=name, cond=gold_cond, fmt=fmt),
            tests=[[[]], [[["ada", 0]]], [[["tim", 7], ["grace", 12]]]] + [[entries()] for _ in range(5)],
            params={"format": fmt, "filter": cond},
        )


_SUMMARIES = {
    "n={n} min={lo} max={hi}": "'n=<count> min=<smallest> max=<largest>'",
    "{lo}..{hi} ({n} values)": "'<smallest>..<largest> (<count> values)'",
    "range {hi - lo} over {n}": "'range <largest minus smallest> over <count>'",
    "mean={total / n:.2f}": "'mean=' then the mean with 2 decimals",
    "sum={total}, mean={total / n:.1f}": "'sum=<sum>, mean=' then the mean with 1 decimal",
    "{n} items, total {total:+d}": "'<count> items, total ' then the sum with an explicit sign",
}


@family("summary_string", "strings", ["P4-08"], difficulty=1)
def summary_string(rng):
    """Summarise a list of integers in one interpolated string."""
    while True:
        fmt, desc = choose(rng, _SUMMARIES)
        empty = rng.choice(["empty", "no data", "-", "n/a"])
        name = rng.choice(["summarize", "summary_line", "describe_numbers", "stats_text"])
        yield Variant(
            title=f"Summary string {fmt}",
            task=f"Return a one-line summary of the integer list xs: {desc} (Python format {fmt!r}, where n is the "
                 f"count, lo/hi the smallest/largest and total the sum). Return {empty!r} for an empty list.",
            entry_point=name,
            reference=code('''
                def $name(xs):
                    if not xs:
                        return $empty
                    n, lo, hi, total = len(xs), min(xs), max(xs), sum(xs)
                    return f"$fmt"
            ''', name=name, fmt=fmt, empty=repr(empty)),
            gold=code('''
                fn $name(xs: list[int]) -> str:
                    if not xs:
                        return $empty
                    let n, lo, hi, total = len(xs), min(xs), max(xs), sum(xs)
                    return i"$fmt"
            ''', name=name, fmt=fmt, empty=repr(empty)),
            tests=[[[]], [[5]], [[-3, 3]]]
                  + [[[rng.randint(-50, 50) for _ in range(rng.randint(1, 7))]] for _ in range(5)],
            params={"format": fmt, "empty": empty},
        )


# (%-format, equivalent i-string body, description, argument kind)
_PERCENT = [
    ("%s has %d items", "{name} has {n} items", "'<name> has <n> items'"),
    ("%s: %05d", "{name}: {n:05d}", "'<name>: ' then n zero-padded to 5 digits"),
    ("%-8s|%3d", "{name:<8}|{n:3d}", "the name left-aligned in 8 characters, '|', then n right-aligned in 3"),
    ("%s=%x", "{name}={n:x}", "'<name>=' then n in lower-case hexadecimal"),
    ("<%s> #%d", "<{name}> #{n}", "'<<name>> #<n>'"),
    ("%s (%+d)", "{name} ({n:+d})", "'<name> (' then n with an explicit sign, then ')'"),
    ("%s/%o", "{name}/{n:o}", "'<name>/' then n in octal"),
    ("%d%% of %s", "{n}% of {name}", "'<n>% of <name>'"),
]


@family("percent_format_pairs", "strings", ["P4-25"], difficulty=1)
def percent_format_pairs(rng):
    """Reference formats with the `%` operator; the gold interpolates instead."""
    while True:
        pfmt, ibody, desc = rng.choice(_PERCENT)
        sep = rng.choice(["; ", ", ", " / ", "\n"])
        name = rng.choice(["label_items", "format_pairs", "render_counts", "describe_items"])
        pairs = lambda: [[rng.choice(WORDS), rng.randint(-20, 300)] for _ in range(rng.randint(1, 4))]
        yield Variant(
            title=f"Format [name, n] pairs as {pfmt!r}",
            task=f"pairs is a list of [name, n] (n an integer). Format each pair as {desc} and return the pieces "
                 f"joined by {sep!r} (an empty string for no pairs).",
            entry_point=name,
            reference=code('''
                def $name(pairs):
                    parts = []
                    for name, n in pairs:
                        parts.append("$pfmt" % ($args))
                    return $sep.join(parts)
            ''', name=name, pfmt=pfmt, args="n, name" if pfmt.startswith("%d") else "name, n", sep=repr(sep)),
            gold=code('''
                fn $name(pairs: list[list]) -> str:
                    let parts = []
                    for name, n in pairs:
                        parts.append(i"$ibody")
                    return parts.join($sep)
            ''', name=name, ibody=ibody, sep=repr(sep)),
            tests=[[[]], [[["a", 0]]], [[["box", 12], ["cup", -7]]]] + [[pairs()] for _ in range(5)],
            rules=("P4-25", "P4-18"),
            params={"format": pfmt, "sep": sep},
        )


_MONEY = [
    ("%.2f", "{x:.2f}", "with 2 decimals"),
    ("%.1f", "{x:.1f}", "with 1 decimal"),
    ("%8.2f", "{x:8.2f}", "with 2 decimals, right-aligned in 8 characters"),
    ("%+.3f", "{x:+.3f}", "with an explicit sign and 3 decimals"),
    ("%.0f", "{x:.0f}", "with no decimals"),
    ("%e", "{x:e}", "in exponent notation (6 decimals)"),
]


@family("percent_format_money", "strings", ["P4-25"], difficulty=1)
def percent_format_money(rng):
    """Format a price line with `%`-formatting (reference) vs an i-string (gold)."""
    while True:
        pfmt, ibody, desc = rng.choice(_MONEY)
        prefix = rng.choice(["$", "EUR ", "total: ", "", "= "])
        factor = rng.choice([1, 1, 100, 0.5, 1.2])
        name = rng.choice(["format_price", "price_text", "money_label", "show_amount"])
        what = "x" if factor == 1 else f"x * {factor}"
        yield Variant(
            title=f"Format {what} {desc} after {prefix!r}",
            task=f"Return the string {prefix!r} followed by the number {what} formatted {desc} "
                 f"(Python's {pfmt!r} format).",
            entry_point=name,
            reference=code('''
                def $name(x):
                    return $prefix + "$pfmt" % ($what)
            ''', name=name, prefix=repr(prefix), pfmt=pfmt, what=what),
            gold=code('''
                fn $name(x: float) -> str:
                    let value = $what
                    return $prefix + i"$ibody"
            ''', name=name, prefix=repr(prefix), ibody=ibody.replace("{x", "{value"), what=what),
            tests=[[0.0], [1.0], [2.5], [-3.75], [1234.5678]] + [[round(rng.uniform(-100, 100), 3)] for _ in range(3)],
            params={"format": pfmt, "prefix": prefix, "factor": factor},
        )
