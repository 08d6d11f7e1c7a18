"""Families targeting the lints P4-26 (mutable defaults), P4-27 (`== nil`), P4-29 (shadowed builtins)."""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import WORDS, choose

_STOP_SETS = [["a", "the"], ["a", "an", "the", "of"], ["and", "or"], ["is", "it", "to"]]


@family("stopword_default", "strings", ["P4-26"], difficulty=1)
def stopword_default(rng):
    """A filter whose word list is a (read-only) mutable default in Python 3; nil default in the gold."""
    while True:
        stops = rng.choice(_STOP_SETS)
        post = rng.choice(["list", "count", "first"])
        name = rng.choice(["content_words", "drop_stopwords", "key_terms", "filter_words"])
        body = {"list": "kept", "count": "len(kept)", "first": "kept[0] if kept else ''"}[post]
        what = {"list": "the remaining words in order", "count": "how many words remain",
                "first": "the first remaining word ('' if none)"}[post]
        rtype = {"list": "list[str]", "count": "int", "first": "str"}[post]
        yield Variant(
            title=f"Drop stop words {stops} ({post})",
            task=f"Split text on whitespace and lower-case the words; drop every word found in stop (a list of words "
                 f"that defaults to {stops}); return {what}.",
            entry_point=name,
            reference=code('''
                def $name(text, stop=$stops):
                    kept = [w for w in text.lower().split() if w not in stop]
                    return $body
            ''', name=name, stops=repr(stops), body=body),
            gold=code('''
                fn $name(text: str, stop: list[str] | nil = nil) -> $rtype:
                    let skip = stop if stop is not nil else $stops
                    let kept = [w for w in text.lower().split() if w not in skip]
                    return $body
            ''', name=name, stops=repr(stops), body=body, rtype=rtype),
            tests=[[""], ["The cat"], [" ".join(stops + ["word"])], ["a b c", ["b"]]]
                  + [[" ".join(rng.sample(WORDS + stops * 2, rng.randint(2, 7)))] for _ in range(4)],
            params={"stops": stops, "post": post},
        )


@family("price_table_default", "dicts", ["P4-26"], difficulty=1)
def price_table_default(rng):
    """Look prices up in a default table passed as a dict default (read-only in the reference)."""
    while True:
        table = {w: rng.randint(1, 20) for w in rng.sample(["tea", "cake", "bun", "jam", "milk", "egg"], 4)}
        missing = rng.choice([0, -1])
        post = rng.choice(["total", "list", "max"])
        name = rng.choice(["bill", "price_items", "order_cost", "checkout"])
        body = {"total": "sum(costs)", "list": "costs", "max": "max(costs, default=0)"}[post]
        rtype = "list[int]" if post == "list" else "int"
        returned = ("the total cost" if post == "total" else "the list of costs" if post == "list"
                    else "the highest cost (0 if no items)")
        yield Variant(
            title=f"Prices from a default table ({post}, missing -> {missing})",
            task=f"items is a list of item names; prices is a dict from name to price that defaults to {table}. An "
                 f"item not in prices costs {missing}. Return {returned}.",
            entry_point=name,
            reference=code('''
                def $name(items, prices=$table):
                    costs = [prices.get(item, $missing) for item in items]
                    return $body
            ''', name=name, table=repr(table), missing=missing, body=body),
            gold=code('''
                fn $name(items: list[str], prices: dict[str, int] | nil = nil) -> $rtype:
                    let table = prices if prices is not nil else $table
                    let costs = [table.get(item, $missing) for item in items]
                    return $body
            ''', name=name, table=repr(table), missing=missing, body=body, rtype=rtype),
            tests=[[[]], [["tea", "nope"]], [sorted(table)], [["cake"], {"cake": 100}]]
                  + [[rng.sample(sorted(table) + ["soda", "pie"], rng.randint(1, 5))] for _ in range(4)],
            params={"table": table, "missing": missing, "post": post},
        )


_FILL = {"default": "replaced by fill", "previous": "replaced by the previous non-missing value (fill at the start)",
         "skip": "left out"}


@family("fill_missing", "lists", ["P4-27"], difficulty=1)
def fill_missing(rng):
    """Handle missing (None) entries compared with `== None` in the reference."""
    while True:
        how, desc = choose(rng, _FILL)
        post = rng.choice(["list", "sum"])
        op = rng.choice(["==", "!="])
        name = rng.choice(["fill_gaps", "complete", "patch_missing", "impute"])
        if op == "==":
            ref_loop = {"default": "out.append(fill if x == None else x)",
                        "previous": "if x == None:\n            out.append(prev)\n        else:\n"
                                    "            out.append(x)\n            prev = x",
                        "skip": "if x == None:\n            continue\n        out.append(x)"}[how]
        else:
            ref_loop = {"default": "out.append(x if x != None else fill)",
                        "previous": "if x != None:\n            prev = x\n        out.append(prev)",
                        "skip": "if x != None:\n            out.append(x)"}[how]
        gold_loop = ref_loop.replace("== None", "is nil").replace("!= None", "is not nil")
        ret = "out" if post == "list" else "sum(out)"
        rtype = "list[int]" if post == "list" else "int"
        yield Variant(
            title=f"Missing values {how} ({post}, `{op} None`)",
            task=f"xs is a list of integers and None (missing). Missing entries are {desc}; return "
                 f"{'the resulting list' if post == 'list' else 'the sum of the resulting values'}.",
            entry_point=name,
            reference=code('''
                def $name(xs, fill):
                    out = []
                    prev = fill
                    for x in xs:
                        $loop
                    return $ret
            ''', name=name, loop=ref_loop, ret=ret),
            gold=code('''
                fn $name(xs: list[int | nil], fill: int) -> $rtype:
                    let out = []
                    let prev = fill
                    for x in xs:
                        $loop
                    return $ret
            ''', name=name, loop=gold_loop, ret=ret, rtype=rtype),
            tests=[[[], 0], [[None], 5], [[1, None, None, 4], -1], [[0, None, 0], 9]]
                  + [[[rng.choice([None, rng.randint(-5, 9)]) for _ in range(rng.randint(1, 7))], rng.randint(-3, 3)]
                     for _ in range(4)],
            params={"how": how, "post": post, "op": op},
        )


@family("first_present", "dicts", ["P4-27"], difficulty=1)
def first_present(rng):
    """Find the first key whose looked-up value is not None."""
    while True:
        fallback = rng.choice(["''", "'none'", "'?'"])
        style = rng.choice(["get", "index"])
        name = rng.choice(["first_available", "resolve", "pick_present", "coalesce_keys"])
        lookup = "record.get(k)" if style == "get" else "record[k] if k in record else None"
        yield Variant(
            title=f"First key with a value ({style})",
            task=f"record maps names to values that may be None. Return the first key of keys whose value is present "
                 f"(in record and not None), or {fallback} when there is none.",
            entry_point=name,
            reference=code('''
                def $name(record, keys):
                    for k in keys:
                        value = $lookup
                        if value != None:
                            return k
                    return $fallback
            ''', name=name, lookup=lookup, fallback=fallback),
            gold=code('''
                fn $name(record: dict, keys: list[str]) -> str:
                    for k in keys:
                        let value = $lookup
                        if value is not nil:
                            return k
                    return $fallback
            ''', name=name, lookup=lookup.replace("None", "nil"), fallback=fallback),
            tests=[[{}, []], [{"a": None}, ["a"]], [{"a": 0, "b": 1}, ["c", "a"]]]
                  + [[{k: rng.choice([None, 0, 1, "x"]) for k in rng.sample("abcde", 3)},
                      rng.sample("abcde", rng.randint(1, 4))]
                     for _ in range(5)],
            params={"fallback": fallback, "style": style},
        )


# (shadowing name, its role in the reference, replacement name in the gold)
_SHADOWS = [("max", "best"), ("min", "smallest"), ("sum", "total"), ("list", "items"), ("len", "size"),
            ("str", "text"), ("input", "values"), ("id", "ident"), ("next", "following"), ("all", "everything")]


@family("shadowed_builtins", "lists", ["P4-29"], difficulty=1)
def shadowed_builtins(rng):
    """A loop whose accumulator is named after a builtin in the reference."""
    while True:
        task_kind = rng.choice(["max", "min", "sum", "product", "longest"])
        bad, good = rng.choice([s for s in _SHADOWS
                                if s[0] in {"max": ("max", "id", "next"), "min": ("min", "id", "next"),
                                            "sum": ("sum", "all", "next"), "product": ("sum", "all", "id"),
                                            "longest": ("max", "str", "next")}[task_kind]])
        name = rng.choice(["scan", "accumulate", "fold_values", "reduce_list"])
        init, step, what, rtype = {
            "max": ("xs[0]", "if x > ACC:\n            ACC = x", "the largest item", "int"),
            "min": ("xs[0]", "if x < ACC:\n            ACC = x", "the smallest item", "int"),
            "sum": ("0", "ACC += x", "the sum of the items", "int"),
            "product": ("1", "ACC *= x", "the product of the items", "int"),
            "longest": ("''", "if len(str(x)) > len(ACC):\n            ACC = str(x)",
                        "the longest decimal text of an item (first on ties)", "str"),
        }[task_kind]
        empty = {"max": "0", "min": "0", "sum": "0", "product": "1", "longest": "''"}[task_kind]
        if bad == "str" and task_kind == "longest":
            step = "if len(repr(x)) > len(ACC):\n            ACC = repr(x)"
        yield Variant(
            title=f"{task_kind} of a list (reference names a variable {bad!r})",
            task=f"Return {what} of xs ({empty} for an empty list).",
            entry_point=name,
            reference=code('''
                def $name(xs):
                    if not xs:
                        return $empty
                    $bad = $init
                    for x in xs:
                        $step
                    return $bad
            ''', name=name, empty=empty, bad=bad, init=init, step=step.replace("ACC", bad)),
            gold=code('''
                fn $name(xs: list[int]) -> $rtype:
                    if not xs:
                        return $empty
                    let $good = $init
                    for x in xs:
                        $step
                    return $good
            ''', name=name, empty=empty, good=good, init=init, step=step.replace("ACC", good), rtype=rtype),
            tests=[[[]], [[7]], [[3, -2, 9]], [[-5, -5, 120]]]
                  + [[[rng.randint(-50, 200) for _ in range(rng.randint(1, 6))]] for _ in range(4)],
            params={"task": task_kind, "shadow": bad},
        )


_SHADOW_VARS = [("list", "words"), ("dict", "counts"), ("set", "seen"), ("str", "line"), ("type", "kind"),
                ("filter", "wanted")]


@family("shadowed_collections", "strings", ["P4-29"], difficulty=1)
def shadowed_collections(rng):
    """Collect words into a variable named after a builtin type (list/dict/str/...) in the reference."""
    while True:
        bad, good = rng.choice(_SHADOW_VARS)
        shape = rng.choice(["unique", "long", "caps"])
        name = rng.choice(["gather", "collect_words", "unique_words", "word_pick"])
        step, what = {"unique": ("if w not in ACC:\n            ACC.append(w)",
                                 "the distinct words in first-seen order"),
                      "long": ("if len(w) > 4:\n            ACC.append(w)", "the words longer than 4 letters"),
                      "caps": ("ACC.append(w.capitalize())", "the capitalized words")}[shape]
        yield Variant(
            title=f"{shape} words (reference variable {bad!r})",
            task=f"Split text on whitespace and return {what}, as a list.",
            entry_point=name,
            reference=code('''
                def $name(text):
                    $bad = []
                    for w in text.split():
                        $step
                    return $bad
            ''', name=name, bad=bad, step=step.replace("ACC", bad)),
            gold=code('''
                fn $name(text: str) -> list[str]:
                    let $good = []
                    for w in text.split():
                        $step
                    return $good
            ''', name=name, good=good, step=step.replace("ACC", good)),
            tests=[[""], ["a a b"], ["Apple apple APPLE"]]
                  + [[" ".join(rng.choice(WORDS[:10]) for _ in range(rng.randint(2, 7)))]
                     for _ in range(4)],
            params={"shadow": bad, "shape": shape},
        )
