"""More families over lists, dicts and text: cards (P4-17), groups (P4-28), inverted and
compared dicts (P4-16), strided picks (P4-19), string distance (P4-20/P4-21), padded text
(P4-24), typed records (P4-30)."""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import NAMES, WORDS


@family("deal_cards", "simulation", ["P4-17"], difficulty=2)
def deal_cards(rng):
    """Deal a deck from the top, round-robin, to k players (Python 3 pops the end of a reversed deck)."""
    while True:
        k = rng.randint(2, 4)
        limit = rng.choice([None, 2, 3])
        shape = rng.choice(["hands", "sums"])
        name = rng.choice(["deal", "deal_cards", "distribute", "hand_out"])
        stop = "" if limit is None else f"\n        if all(len(h) == {limit} for h in hands):\n            break"
        ret = {"hands": "hands", "sums": "[sum(h) for h in hands]"}[shape]
        rtype = {"hands": "list[list[int]]", "sums": "list[int]"}[shape]
        what = {"hands": "the hands", "sums": "the sum of each hand"}[shape]
        yield Variant(
            title=f"Deal to {k} players{'' if limit is None else f', {limit} cards each'}: {shape}",
            task=f"deck lists the cards from the top down. Deal them one at a time from the top to {k} players in turn "
                 f"(player 0 first){'' if limit is None else f', stopping once every player holds {limit} cards'}, "
                 f"and return {what}.",
            entry_point=name,
            reference=code('''
                def $name(deck):
                    pile = deck[::-1]
                    hands = [[] for _ in range($k)]
                    turn = 0
                    while pile:
                        hands[turn].append(pile.pop())
                        turn = (turn + 1) % $k$stop
                    return $ret
            ''', name=name, k=k, stop=stop, ret=ret),
            gold=code('''
                fn $name(deck: list[int]) -> $rtype:
                    let pile = list(deck)
                    let hands = [[] for _ in range(1, $k)]
                    let turn = 0
                    while pile:
                        hands[turn].append(pile.pop())
                        turn = (turn + 1) % $k$stop
                    return $ret
            ''', name=name, k=k, stop=stop, ret=ret, rtype=rtype),
            tests=[[[]], [[7]], [list(range(1, k + 2))]]
                  + [[[rng.randint(1, 13) for _ in range(rng.randint(2, 10))]] for _ in range(5)],
            rules=("P4-17", "P4-12"),
            params={"k": k, "limit": limit, "shape": shape},
        )


@family("group_averages", "statistics", ["P4-28", "P4-06"], difficulty=1)
def group_averages(rng):
    """Average each group, swallowing the empty-group error with a bare except in Python 3."""
    while True:
        stat = rng.choice(["mean", "max_over_min", "first_share"])
        default = rng.choice(["None", "0.0", "-1.0"])
        name = rng.choice(["group_means", "per_group", "average_groups", "group_ratio"])
        expr, desc, catches = {
            "mean": ("sum(g) / len(g)", "the mean of the group", "ZeroDivisionError"),
            "max_over_min": ("max(g) / min(g)", "its largest value divided by its smallest",
                             "(ValueError, ZeroDivisionError)"),
            "first_share": ("g[0] / sum(g)", "its first value divided by its sum", "(IndexError, ZeroDivisionError)"),
        }[stat]
        yield Variant(
            title=f"Per-group {stat} with fallback {default}",
            task=f"groups is a list of integer lists. For each group compute {desc}; when that fails (empty group, "
                 f"division by zero) use {default}. Return the list.",
            entry_point=name,
            reference=code('''
                def $name(groups):
                    out = []
                    for g in groups:
                        try:
                            out.append($expr)
                        except:
                            out.append($default)
                    return out
            ''', name=name, expr=expr, default=default),
            gold=code('''
                fn $name(groups: list[list[int]]) -> list[float | nil]:
                    let out = []
                    for g in groups:
                        try:
                            out.append($expr)
                        catch $catches:
                            out.append($default)
                    return out
            ''', name=name, expr=expr, default=default.replace("None", "nil"), catches=catches),
            tests=[[[]], [[[]]], [[[0, 0], [2, 4]]], [[[1], [-1, 1], [3, 0]]]]
                  + [[[[rng.randint(-3, 9) for _ in range(rng.randint(0, 4))] for _ in range(rng.randint(1, 4))]]
                     for _ in range(4)],
            tolerance=1e-9,
            params={"stat": stat, "default": default},
        )


@family("invert_pairs", "dicts", ["P4-16", "P4-15"], difficulty=2)
def invert_pairs(rng):
    """Build a dict from pairs, then invert it (value -> sorted keys)."""
    while True:
        key_of = rng.choice(["v", "str(v)", "str(v % 3)", "'big' if v > 5 else 'small'"])
        name = rng.choice(["invert", "by_value", "reverse_index", "owners_of"])
        desc = {"v": "its value (as text)", "str(v)": "its value (as text)",
                "str(v % 3)": "its value modulo 3 (as text)",
                "'big' if v > 5 else 'small'": "'big' when the value exceeds 5, else 'small'"}[key_of]
        key_expr = "str(v)" if key_of == "v" else key_of
        yield Variant(
            title=f"Invert a name -> value dict by {desc}",
            task="pairs is a list of [name, value] (non-negative integer values; a later pair for the same name "
                 f"replaces the earlier value). Return a dict mapping, for each name, {desc} to the sorted list of "
                 "names with it.",
            entry_point=name,
            reference=code('''
                def $name(pairs):
                    values = {}
                    for k, v in pairs:
                        values[k] = v
                    inverse = {}
                    for k in values:
                        v = values[k]
                        inverse.setdefault($key, []).append(k)
                    for key in inverse:
                        inverse[key].sort()
                    return inverse
            ''', name=name, key=key_expr),
            gold=code('''
                fn $name(pairs: list[list]) -> dict[str, list[str]]:
                    let values = {:}
                    for k, v in pairs:
                        values[k] = v
                    let inverse = {:}
                    for k, v in values:
                        inverse.setdefault($key, []).append(k)
                    for key, names in inverse:
                        names.sort()
                    return inverse
            ''', name=name, key=key_expr),
            tests=[[[]], [[["a", 1], ["b", 1]]], [[["a", 1], ["a", 7], ["c", 7]]]]
                  + [[[[rng.choice(NAMES), rng.randint(0, 9)] for _ in range(rng.randint(1, 6))]] for _ in range(5)],
            params={"key": key_of},
        )


@family("compare_inventories", "dicts", ["P4-16", "P4-15"], difficulty=2)
def compare_inventories(rng):
    """Tally two lists into dicts and compare them key by key."""
    while True:
        shape = rng.choice(["missing", "surplus", "changed"])
        name = rng.choice(["compare_stock", "inventory_diff", "reconcile", "audit_counts"])
        cond, what = {"missing": ("b.get(k, 0) == 0", "the items of old that never occur in new"),
                      "surplus": ("a[k] > b.get(k, 0)", "the items that occur more often in old than in new"),
                      "changed": ("a[k] != b.get(k, 0)",
                                  "the items of old whose counts differ between old and new")}[shape]
        order = rng.choice(["first-seen", "sorted"])
        yield Variant(
            title=f"Inventory comparison: {shape} ({order})",
            task=f"Count the items of the lists old and new. Return {what}, each once, "
                 f"{'in order of first appearance in old' if order == 'first-seen' else 'sorted'}.",
            entry_point=name,
            reference=code('''
                def tally(items):
                    counts = {}
                    for x in items:
                        counts[x] = counts.get(x, 0) + 1
                    return counts

                def $name(old, new):
                    a, b = tally(old), tally(new)
                    found = [k for k in a if $cond]
                    return $ret
            ''', name=name, cond=cond, ret="found" if order == "first-seen" else "sorted(found)"),
            gold=code('''
                fn tally(items: list[str]) -> dict[str, int]:
                    let counts = {:}
                    for x in items:
                        counts[x] = counts.get(x, 0) + 1
                    return counts

                fn $name(old: list[str], new: list[str]) -> list[str]:
                    let a, b = tally(old), tally(new)
                    let found = [k for k in a.keys() if $cond]
                    return $ret
            ''', name=name, cond=cond, ret="found" if order == "first-seen" else "sorted(found)"),
            tests=[[[], []], [["x"], []], [["b", "a", "b"], ["b"]]]
                  + [[[rng.choice("pqrst") for _ in range(rng.randint(0, 6))],
                      [rng.choice("pqrst") for _ in range(rng.randint(0, 6))]]
                     for _ in range(5)],
            params={"shape": shape, "order": order},
        )


@family("every_kth", "lists", ["P4-19"], difficulty=1)
def every_kth(rng):
    """Keep the items whose 0-based position is (or is not) a multiple of k."""
    while True:
        k = rng.randint(2, 4)
        offset = rng.randint(0, k - 1)
        keep = rng.choice(["keep", "drop"])
        name = rng.choice(["every_kth", "stride", "sample_positions", "thin_out"])
        op_ref, op_gold = ("==", "==") if keep == "keep" else ("!=", "!=")
        yield Variant(
            title=f"{keep} positions i with i % {k} == {offset}",
            task=f"Return the items of xs whose 0-based position i has i % {k} {'==' if keep == 'keep' else '!='} "
                 f"{offset}, in order.",
            entry_point=name,
            reference=code('''
                def $name(xs):
                    return [x for i, x in enumerate(xs) if i % $k $op $offset]
            ''', name=name, k=k, op=op_ref, offset=offset),
            gold=code('''
                fn $name(xs: list) -> list:
                    return [x for n, x in enumerate(xs) if (n - 1) % $k $op $offset]
            ''', name=name, k=k, op=op_gold, offset=offset),
            tests=[[[]], [["a"]], [list(range(10))]]
                  + [[[rng.choice(WORDS[:6]) for _ in range(rng.randint(1, 9))]] for _ in range(4)],
            params={"k": k, "offset": offset, "keep": keep},
        )


@family("string_mismatches", "strings", ["P4-20", "P4-21"], difficulty=1)
def string_mismatches(rng):
    """Compare two strings position by position up to the shorter length."""
    while True:
        shape = rng.choice(["count_diff", "count_same", "first_diff", "ratio"])
        fold = rng.choice(["", ".lower()"])
        name = rng.choice(["mismatches", "compare_strings", "char_diff", "overlap_score"])
        ref, gold, what, rtype = {
            "count_diff": ("sum(a != b for a, b in zip(s, t))", "count(a != b for a, b in zip_shortest(s, t))",
                           "how many positions hold different characters", "int"),
            "count_same": ("sum(a == b for a, b in zip(s, t))", "count(a == b for a, b in zip_shortest(s, t))",
                           "how many positions hold the same character", "int"),
            "first_diff": ("next((i for i, (a, b) in enumerate(zip(s, t)) if a != b), -1)",
                           "next((n - 1 for n, (a, b) in enumerate(zip_shortest(s, t)) if a != b), -1)",
                           "the first position whose characters differ (-1 if none)", "int"),
            "ratio": ("sum(a == b for a, b in zip(s, t)) / max(len(s), len(t), 1)",
                      "count(a == b for a, b in zip_shortest(s, t)) / max(len(s), len(t), 1)",
                      "the number of equal positions divided by the longer length (at least 1)", "float"),
        }[shape]
        rules = ("P4-20", "P4-19") if shape == "first_diff" else ("P4-20", "P4-21")
        pre = "" if not fold else "    s, t = s.lower(), t.lower()\n"
        yield Variant(
            title=f"String comparison: {shape}{' ignoring case' if fold else ''}",
            task=f"Compare s and t position by position, up to the shorter length{', ignoring case' if fold else ''}, "
                 f"and return {what}.",
            entry_point=name,
            reference=code('''
                def $name(s, t):
                $pre    return $ref
            ''', name=name, pre=pre, ref=ref),
            gold=code('''
                fn $name(s: str, t: str) -> $rtype:
                $pre    return $gold
            ''', name=name, pre=pre, gold=gold, rtype=rtype),
            tests=[["", "abc"], ["abc", "abd"], ["Abc", "aBcdef"], ["xyz", "x"]]
                  + [["".join(rng.choice("abAB") for _ in range(rng.randint(1, 7))),
                      "".join(rng.choice("abAB") for _ in range(rng.randint(1, 7)))]
                     for _ in range(4)],
            tolerance=1e-9 if shape == "ratio" else None,
            rules=rules,
            params={"shape": shape, "fold": bool(fold)},
        )


@family("padded_matches", "strings", ["P4-24"], difficulty=1)
def padded_matches(rng):
    """Match user entries against a target after removing padding and case."""
    while True:
        meth = rng.choice(["strip", "lstrip", "rstrip"])
        shape = rng.choice(["count", "positions", "any"])
        name = rng.choice(["matches", "find_entries", "match_padded", "lookup_answers"])
        body, what, rtype = {
            "count": ("len([e for e in entries if norm(e) == norm(target)])", "how many entries match", "int"),
            "positions": ("[i for i in range(len(entries)) if norm(entries[i]) == norm(target)]",
                          "the 0-based positions of the matching entries", "list[int]"),
            "any": ("any(norm(e) == norm(target) for e in entries)", "whether any entry matches", "bool"),
        }[shape]
        gold_body = body.replace("range(len(entries))", "indices(entries)")
        new = {"strip": "trim", "lstrip": "trim_start", "rstrip": "trim_end"}[meth]
        side = {"strip": "both ends", "lstrip": "the start", "rstrip": "the end"}[meth]
        pad = lambda w: (rng.choice(["", " ", "  ", "\t"]) + rng.choice([w, w.upper(), w.capitalize()])
                         + rng.choice(["", " ", "\n"]))
        target = rng.choice(WORDS)
        rules = ("P4-24", "P4-12") if shape == "positions" else ("P4-24",)
        yield Variant(
            title=f"Padded entries matching a target ({meth}, {shape})",
            task=f"Two texts match when they are equal after removing whitespace from {side} (str.{meth}()) and "
                 f"lower-casing. Return {what} among entries for target.",
            entry_point=name,
            reference=code('''
                def norm(text):
                    return text.$meth().lower()

                def $name(entries, target):
                    return $body
            ''', meth=meth, name=name, body=body),
            gold=code('''
                fn norm(text: str) -> str:
                    return text.$new().lower()

                fn $name(entries: list[str], target: str) -> $rtype:
                    return $body
            ''', new=new, name=name, body=gold_body, rtype=rtype),
            tests=[[[], "x"], [[" apple ", "Apple", "apple\n"], "apple"], [["a"], " a "]]
                  + [[[pad(rng.choice([target, rng.choice(WORDS)])) for _ in range(rng.randint(1, 5))], pad(target)]
                     for _ in range(4)],
            rules=rules,
            params={"method": meth, "shape": shape},
        )


@family("typed_record_values", "types", ["P4-30"], difficulty=1)
def typed_record_values(rng):
    """Aggregate the values of a record by their exact type."""
    while True:
        t = rng.choice(["int", "str", "list"])
        shape = rng.choice(["keys", "count"])
        name = rng.choice(["fields_of_type", "typed_fields", "select_fields", "field_census"])
        body_ref = {"keys": f"sorted(k for k, v in record.items() if type(v) == {t})",
                    "count": f"len([v for v in record.values() if type(v) == {t}])"}[shape]
        body_gold = body_ref.replace(f"type(v) == {t}", f"isinstance(v, {t})")
        what = {"keys": "the sorted keys whose values", "count": "how many values"}[shape]
        desc = {"int": "integers", "str": "strings", "list": "lists"}[t]
        yield Variant(
            title=f"Record fields holding {desc} ({shape})",
            task=f"record maps field names to values (integers, floats, strings, lists or None; never booleans). "
                 f"Return {what} are {desc}.",
            entry_point=name,
            reference=code('''
                def $name(record):
                    return $body
            ''', name=name, body=body_ref),
            gold=code('''
                fn $name(record: dict) -> $rtype:
                    return $body
            ''', name=name, body=body_gold, rtype="list[str]" if shape == "keys" else "int"),
            tests=[[{}], [{"a": 1, "b": "x", "c": [1], "d": None, "e": 2.5}]]
                  + [[{k: rng.choice([1, -4, "s", "", [2], [], None, 0.5])
                       for k in rng.sample("pqrstuv", rng.randint(1, 5))}]
                     for _ in range(5)],
            params={"type": t, "shape": shape},
        )
