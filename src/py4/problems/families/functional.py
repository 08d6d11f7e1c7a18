"""Families targeting P4-09: `fun` replaces `lambda`."""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import NAMES, WORDS, choose

# key expression over a record r = [name, a, b] and its description
_RECORD_KEYS = {
    "r[1]": "by the first number",
    "-r[1]": "by the first number, largest first",
    "(r[1], r[0])": "by the first number, then by name",
    "(-r[2], r[0])": "by the second number (largest first), then by name",
    "r[1] + r[2]": "by the sum of the two numbers",
    "abs(r[1] - r[2])": "by the absolute difference of the two numbers",
    "(len(r[0]), r[0])": "by the length of the name, then alphabetically",
    "r[1] * r[2]": "by the product of the two numbers",
}


@family("sort_records", "sorting", ["P4-09"], difficulty=2)
def sort_records(rng):
    """Sort records with a key function (a `fun` in the gold)."""
    while True:
        key, desc = choose(rng, _RECORD_KEYS)
        output = rng.choice(["names", "records"])
        reverse = rng.random() < 0.25
        name = rng.choice(["sort_records", "order_rows", "rank_entries", "arrange"])
        rev_ref, rev_text = (", reverse=True", " in reverse (descending) order of that key") if reverse else ("", "")
        ret = "[r[0] for r in ordered]" if output == "names" else "ordered"
        rtype = "list[str]" if output == "names" else "list[list]"
        what = "the names in that order" if output == "names" else "the sorted records"
        rows = lambda: [[rng.choice(NAMES), rng.randint(-5, 9), rng.randint(-5, 9)] for _ in range(rng.randint(2, 6))]
        yield Variant(
            title=f"Sort [name, a, b] records {desc}{' reversed' if reverse else ''}",
            task=f"records is a list of [name, a, b] (a, b integers). Sort them stably {desc}{rev_text} "
                 f"(Python's sorted with key {key!r} on a record r{', reverse=True' if reverse else ''}) and return "
                 f"{what}.",
            entry_point=name,
            reference=code('''
                def $name(records):
                    ordered = sorted(records, key=lambda r: $key$rev)
                    return $ret
            ''', name=name, key=key, rev=rev_ref, ret=ret),
            gold=code('''
                fn $name(records: list[list]) -> $rtype:
                    let ordered = sorted(records, key=fun r: $key$rev)
                    return $ret
            ''', name=name, key=key, rev=rev_ref.replace("True", "true"), ret=ret, rtype=rtype),
            tests=[[[]], [[["ada", 1, 2]]]] + [[rows()] for _ in range(6)],
            params={"key": key, "output": output, "reverse": reverse},
        )


_WORD_KEYS = {
    "len(w)": "the longest word",
    "(len(w), w)": "the longest word, ties going to the alphabetically last",
    "w.count('a')": "the word with the most letters 'a'",
    "len(set(w))": "the word with the most distinct letters",
    "w[::-1]": "the word whose reversal is alphabetically largest",
    "sum(ord(c) for c in w)": "the word with the largest sum of character codes",
}


@family("best_word", "strings", ["P4-09"], difficulty=1)
def best_word(rng):
    """Pick the best word with max/min and a key function."""
    while True:
        key, desc = choose(rng, _WORD_KEYS)
        pick = rng.choice(["max", "min"])
        name = rng.choice(["best_word", "pick_word", "select_word", "standout_word"])
        if pick == "min":
            desc = (desc.replace("longest", "shortest").replace("most", "fewest").replace("largest", "smallest")
                    .replace("alphabetically last", "alphabetically first"))
        fallback = rng.choice(["''", "'none'", "'-'"])
        yield Variant(
            title=f"{pick} word by {key}",
            task=f"Return {desc} among the words of text (split on whitespace); the first such word wins ties "
                 f"(Python's {pick}(words, key=lambda w: {key})). Return {fallback} when text has no words.",
            entry_point=name,
            reference=code('''
                def $name(text):
                    words = text.split()
                    if not words:
                        return $fallback
                    return $pick(words, key=lambda w: $key)
            ''', name=name, pick=pick, key=key, fallback=fallback),
            gold=code('''
                fn $name(text: str) -> str:
                    let words = text.split()
                    if not words:
                        return $fallback
                    return $pick(words, key=fun w: $key)
            ''', name=name, pick=pick, key=key, fallback=fallback),
            tests=[[""], ["solo"], ["bb aa"]] + [[" ".join(rng.sample(WORDS, rng.randint(2, 6)))] for _ in range(5)],
            params={"key": key, "pick": pick},
        )


_OPS = {
    "add": "a + b", "sub": "a - b", "mul": "a * b", "max": "max(a, b)", "min": "min(a, b)",
    "avg2": "(a + b) / 2", "pow": "a ** 2 + b", "diff": "abs(a - b)",
}


@family("op_table", "dispatch", ["P4-09"], difficulty=2)
def op_table(rng):
    """Dispatch named binary operations through a table of anonymous functions."""
    while True:
        names = sorted(rng.sample(sorted(_OPS), rng.randint(3, 5)))
        unknown = rng.choice(["None", "0", "'?'"])
        fname = rng.choice(["apply_ops", "run_commands", "evaluate_ops", "compute_all"])
        table_ref = ", ".join(f"{k!r}: lambda a, b: {_OPS[k]}" for k in names)
        table_gold = ", ".join(f"{k!r}: fun a, b: {_OPS[k]}" for k in names)
        doc = "; ".join(f"{k!r} gives {_OPS[k]}" for k in names)
        cmds = lambda: [[rng.choice(names + ["nop"]), rng.randint(-6, 6), rng.randint(-6, 6)]
                        for _ in range(rng.randint(1, 5))]
        yield Variant(
            title=f"Operation table with {', '.join(names)}",
            task=f"commands is a list of [op, a, b]. Known operations: {doc}. Return the list of results in order; "
                 f"an unknown op gives {unknown}.",
            entry_point=fname,
            reference=code('''
                def $fname(commands):
                    table = {$table}
                    out = []
                    for op, a, b in commands:
                        if op in table:
                            out.append(table[op](a, b))
                        else:
                            out.append($unknown)
                    return out
            ''', fname=fname, table=table_ref, unknown=unknown),
            gold=code('''
                fn $fname(commands: list[list]) -> list:
                    let table = {$table}
                    let out = []
                    for op, a, b in commands:
                        if op in table:
                            out.append(table[op](a, b))
                        else:
                            out.append($unknown)
                    return out
            ''', fname=fname, table=table_gold, unknown=unknown.replace("None", "nil")),
            tests=[[[]], [[["nop", 1, 2]]]] + [[cmds()] for _ in range(6)],
            tolerance=1e-9 if "avg2" in names else None,
            params={"ops": names, "unknown": unknown},
        )


_MAPS = {"x * 2": "doubled", "x * x": "squared", "x - 1": "decremented", "abs(x)": "made absolute",
         "x + 10": "increased by 10", "-x": "negated"}
_FILTERS = {"x > 0": "positive", "x % 2 == 0": "even", "x != 0": "non-zero", "x < 5": "smaller than 5",
            "abs(x) > 2": "of absolute value above 2"}


@family("filter_map", "lists", ["P4-09"], difficulty=1)
def filter_map(rng):
    """filter() then map() with anonymous functions."""
    while True:
        m, mdesc = choose(rng, _MAPS)
        f, fdesc = choose(rng, _FILTERS)
        order = rng.choice(["filter-map", "map-filter"])
        name = rng.choice(["transform", "keep_and_change", "pipeline", "process_values"])
        if order == "filter-map":
            ref = f"list(map(lambda x: {m}, filter(lambda x: {f}, xs)))"
            text = f"Keep the {fdesc} values of xs, then return them {mdesc} (order kept)."
        else:
            ref = f"list(filter(lambda x: {f}, map(lambda x: {m}, xs)))"
            text = f"Return the values of xs {mdesc}, keeping only the results that are {fdesc} (order kept)."
        gold = ref.replace("lambda", "fun")
        yield Variant(
            title=f"{order}: {fdesc} / {mdesc}",
            task=text,
            entry_point=name,
            reference=code('''
                def $name(xs):
                    return $ref
            ''', name=name, ref=ref),
            gold=code('''
                fn $name(xs: list[int]) -> list[int]:
                    return $gold
            ''', name=name, gold=gold),
            # non-negative values: keep `%` (P4-23) semantics identical in both languages
            tests=[[[]], [[0]], [[1, 2, 3, 4]]]
                  + [[[rng.randint(0, 12) for _ in range(rng.randint(1, 8))]] for _ in range(5)],
            params={"map": m, "filter": f, "order": order},
        )
