"""Families targeting P4-15 (`{:}` is the empty dict) and P4-16 (dicts iterate pairs)."""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import WORDS, choose

_GROUP_KEYS = {
    "w[0]": "its first letter",
    "str(len(w))": "its length (as a string)",
    "w[len(w) // 2]": "its middle letter (index len(w) // 2)",
    "'long' if len(w) > 5 else 'short'": "'long' when it has more than 5 letters, else 'short'",
    "'vowel' if w[0] in 'aeiou' else 'consonant'": "'vowel' or 'consonant' after its first letter",
}
_GROUP_VALUES = {"w": "the words themselves", "len(w)": "the word lengths", "w.upper()": "the words in upper case"}


@family("group_words", "dicts", ["P4-15"], difficulty=1)
def group_words(rng):
    """Group words into a dict of lists built from an empty dict."""
    while True:
        key, kdesc = choose(rng, _GROUP_KEYS)
        val, vdesc = choose(rng, _GROUP_VALUES)
        style = rng.choice(["setdefault", "membership"])
        name = rng.choice(["group_words", "bucket_words", "index_words", "classify_words"])
        step = (f"groups.setdefault(key, []).append({val})" if style == "setdefault" else
                f"if key not in groups:\n            groups[key] = []\n        groups[key].append({val})")
        yield Variant(
            title=f"Group words by {kdesc}: {vdesc}",
            task=f"Split text on whitespace and group the words: a word's key is {kdesc}. Return a dict mapping each "
                 f"key to the list of {vdesc}, in the order the words appear.",
            entry_point=name,
            reference=code('''
                def $name(text):
                    groups = {}
                    for w in text.split():
                        key = $key
                        $step
                    return groups
            ''', name=name, key=key, step=step),
            gold=code('''
                fn $name(text: str) -> dict[str, list]:
                    let groups = {:}
                    for w in text.split():
                        let key = $key
                        $step
                    return groups
            ''', name=name, key=key, step=step),
            tests=[[""], ["a"], ["ab ba abc"]] + [[" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 8)))]
                                                for _ in range(5)],
            params={"key": key, "value": val, "style": style},
        )


_TALLIES = {
    "c": ("each character", "text"),
    "c.lower()": ("each character, lower-cased", "text"),
    "w": ("each word", "text.split()"),
    "w[0]": ("the first letter of each word", "text.split()"),
    "len(w)": ("the length of each word, as a string key", "text.split()"),
}


@family("tally_dict", "dicts", ["P4-15"], difficulty=1)
def tally_dict(rng):
    """Count occurrences into a dict that starts empty."""
    while True:
        key, (desc, source) = choose(rng, _TALLIES)
        var = "c" if source == "text" else "w"
        key_expr = f"str({key})" if key.startswith("len(") else key
        skip = rng.choice(["", "space", "short"]) if var == "c" else rng.choice(["", "short"])
        cond = {"": "", "space": f"\n        if {var} == ' ':\n            continue",
                "short": f"\n        if len({var}) < 2:\n"
                         "            continue"}[skip] if var == "w" or skip != "short" else ""
        skip_text = {"": "", "space": " Spaces are not counted.",
                     "short": " Words shorter than 2 letters are not counted."}[skip]
        if var == "c" and skip == "short":
            skip_text = ""
        name = rng.choice(["tally", "count_occurrences", "frequency_table", "histogram"])
        yield Variant(
            title=f"Tally of {desc}",
            task=f"Return a dict mapping {desc} of text to the number of times it occurs.{skip_text}",
            entry_point=name,
            reference=code('''
                def $name(text):
                    counts = {}
                    for $var in $source:$cond
                        key = $key
                        counts[key] = counts.get(key, 0) + 1
                    return counts
            ''', name=name, var=var, source=source, cond=cond, key=key_expr),
            gold=code('''
                fn $name(text: str) -> dict[str, int]:
                    let counts = {:}
                    for $var in $source:$cond
                        let key = $key
                        counts[key] = counts.get(key, 0) + 1
                    return counts
            ''', name=name, var=var, source=source, cond=cond, key=key_expr),
            tests=[[""], ["aA a"], ["to be or not to be"]]
                  + [[" ".join(rng.choice(WORDS[:15]) for _ in range(rng.randint(1, 6)))]
                     for _ in range(4)],
            params={"key": key, "skip": skip},
        )


_KEY_FILTERS = {
    "n >= t": "occur at least t times",
    "n == t": "occur exactly t times",
    "n < t": "occur fewer than t times",
    "n > t": "occur more than t times",
}


@family("frequent_keys", "dicts", ["P4-16", "P4-15"], difficulty=2)
def frequent_keys(rng):
    """Build counts, then walk the dict to keep the keys that pass a threshold."""
    while True:
        cond, desc = choose(rng, _KEY_FILTERS)
        unit = rng.choice(["word", "letter"])
        order = rng.choice(["first-seen", "sorted"])
        name = rng.choice(["frequent_items", "keys_by_count", "threshold_keys", "select_counts"])
        source = "text.split()" if unit == "word" else "[c for c in text if c.isalpha()]"
        ret = "found" if order == "first-seen" else "sorted(found)"
        yield Variant(
            title=f"{unit.capitalize()}s that {desc} ({order})",
            task=f"Return the distinct {unit}s of text that {desc}, "
                 f"{'in the order they first appear' if order == 'first-seen' else 'sorted'}.",
            entry_point=name,
            reference=code('''
                def $name(text, t):
                    counts = {}
                    for item in $source:
                        counts[item] = counts.get(item, 0) + 1
                    found = []
                    for item in counts:
                        n = counts[item]
                        if $cond:
                            found.append(item)
                    return $ret
            ''', name=name, source=source, cond=cond, ret=ret),
            gold=code('''
                fn $name(text: str, t: int) -> list[str]:
                    let counts = {:}
                    for item in $source:
                        counts[item] = counts.get(item, 0) + 1
                    let found = []
                    for item, n in counts:
                        if $cond:
                            found.append(item)
                    return $ret
            ''', name=name, source=source, cond=cond, ret=ret),
            tests=[["", 1], ["b a b", 2], ["b a b", 1]]
                  + [[" ".join(rng.choice(WORDS[:8]) for _ in range(rng.randint(2, 9))),
                      rng.randint(1, 3)] for _ in range(5)],
            params={"cond": cond, "unit": unit, "order": order},
        )


@family("top_key", "dicts", ["P4-16", "P4-15"], difficulty=2)
def top_key(rng):
    """Find the key with the best total after summing values per key."""
    while True:
        pick = rng.choice(["largest", "smallest"])
        tie = rng.choice(["first", "last"])
        fallback = rng.choice(["''", "'none'", "None"])
        name = rng.choice(["best_key", "top_category", "leader", "winning_key"])
        better = (">" if pick == "largest" else "<") + ("" if tie == "first" else "=")
        yield Variant(
            title=f"Key with the {pick} total (ties: {tie} seen)",
            task=f"entries is a list of [key, amount]. Sum the amounts per key and return the key with the {pick} "
                 f"total; among equal totals the key seen {tie} (in first-appearance order) wins. "
                 f"Return {fallback} for no entries.",
            entry_point=name,
            reference=code('''
                def $name(entries):
                    totals = {}
                    for key, amount in entries:
                        totals[key] = totals.get(key, 0) + amount
                    best = $fallback
                    for key in totals:
                        if best $ref_is_fallback or totals[key] $better totals[best]:
                            best = key
                    return best
            ''', name=name, fallback=fallback, better=better,
                ref_is_fallback="is None" if fallback == "None" else f"== {fallback}"),
            gold=code('''
                fn $name(entries: list[list]) -> str | nil:
                    let totals = {:}
                    for key, amount in entries:
                        totals[key] = totals.get(key, 0) + amount
                    let best = $fallback
                    let best_total = 0
                    for key, total in totals:
                        if best $is_fallback or total $better best_total:
                            best = key
                            best_total = total
                    return best
            ''', name=name, fallback=fallback.replace("None", "nil"), better=better,
                      is_fallback="is nil" if fallback == "None" else f"== {fallback}"),
            tests=[[[]], [[["a", 1]]], [[["a", 2], ["b", 2]]], [[["x", -1], ["y", -3], ["x", -3]]]]
                  + [[[[rng.choice("pqrs"), rng.randint(-5, 9)] for _ in range(rng.randint(1, 7))]] for _ in range(4)],
            params={"pick": pick, "tie": tie, "fallback": fallback},
        )


_RENDER = {
    "f'{k}={v}'": ("i'{k}={v}'", "'key=total'"),
    "f'{k}:{v}'": ("i'{k}:{v}'", "'key:total'"),
    "k + ' ' + str(v)": ("k + ' ' + str(v)", "'key total'"),
    "f'{k}({v})'": ("i'{k}({v})'", "'key(total)'"),
}


@family("merge_totals", "dicts", ["P4-16", "P4-15", "P4-18"], difficulty=2)
def merge_totals(rng):
    """Merge [key, value] pairs into totals and render the dict as text."""
    while True:
        ref_fmt, (gold_fmt, desc) = choose(rng, _RENDER)
        sep = rng.choice([", ", ";", " | ", "\n"])
        order = rng.choice(["first-seen", "sorted"])
        name = rng.choice(["render_totals", "totals_text", "merge_and_show", "summarize_pairs"])
        rules = ("P4-16", "P4-15", "P4-18") + (("P4-08",) if ref_fmt.startswith("f") else ())
        ref_iter = "totals" if order == "first-seen" else "sorted(totals)"
        gold_head = ("for k, v in totals:" if order == "first-seen"
                     else "for k in sorted(totals.keys()):\n        let v = totals[k]")
        yield Variant(
            title=f"Merged totals rendered as {desc} ({order})",
            task=f"pairs is a list of [key, value] (integer values). Sum the values per key and return one string: "
                 f"each key rendered as {desc}, keys in {'first-appearance' if order == 'first-seen' else 'sorted'} "
                 f"order, joined by {sep!r}.",
            entry_point=name,
            reference=code('''
                def $name(pairs):
                    totals = {}
                    for k, v in pairs:
                        totals[k] = totals.get(k, 0) + v
                    parts = []
                    for k in $iter:
                        v = totals[k]
                        parts.append($fmt)
                    return $sep.join(parts)
            ''', name=name, iter=ref_iter, fmt=ref_fmt, sep=repr(sep)),
            gold=code('''
                fn $name(pairs: list[list]) -> str:
                    let totals = {:}
                    for k, v in pairs:
                        totals[k] = totals.get(k, 0) + v
                    let parts = []
                    $head
                        parts.append($fmt)
                    return parts.join($sep)
            ''', name=name, head=gold_head, fmt=gold_fmt, sep=repr(sep)),
            tests=[[[]], [[["a", 1], ["a", 2]]], [[["b", 1], ["a", 5]]]]
                  + [[[[rng.choice(["x", "y", "z", "w"]), rng.randint(-4, 9)] for _ in range(rng.randint(1, 6))]]
                     for _ in range(5)],
            rules=rules,
            params={"format": ref_fmt, "sep": sep, "order": order},
        )
