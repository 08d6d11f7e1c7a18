"""Families targeting P4-30: test types with `isinstance`, not `type(x) == T`."""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import choose

_TYPES = {"int": "integers", "str": "strings", "float": "floats", "list": "lists"}


def _mixed(rng, n):
    pool = [lambda: rng.randint(-9, 9), lambda: rng.choice(["a", "bc", "7", ""]), lambda: rng.randint(-20, 20) / 4,
            lambda: [rng.randint(0, 3)] * rng.randint(0, 2), lambda: None]
    return [rng.choice(pool)() for _ in range(n)]


@family("typed_items", "types", ["P4-30"], difficulty=1)
def typed_items(rng):
    """Select items of one type from a mixed list (no bools in the inputs)."""
    while True:
        t, desc = choose(rng, _TYPES)
        shape = rng.choice(["count", "keep", "first"])
        op = rng.choice(["==", "!="])
        name = rng.choice(["of_type", "type_filter", "pick_typed", "select_kind"])
        neg = op == "!="
        cond_ref = f"type(x) {op} {t}"
        cond_gold = f"not isinstance(x, {t})" if neg else f"isinstance(x, {t})"
        what_items = f"items that are not {desc}" if neg else desc
        body, what, rtype = {
            "count": ("len([x for x in xs if COND])", f"how many items are {what_items}", "int"),
            "keep": ("[x for x in xs if COND]", f"the {what_items} of xs, in order", "list"),
            "first": ("next((x for x in xs if COND), None)", f"the first of the {what_items} (None if there is none)",
                      "object"),
        }[shape]
        yield Variant(
            title=f"{shape} of {what_items}",
            task=f"xs mixes integers, floats, strings, lists and None (never booleans). Return {what}.",
            entry_point=name,
            reference=code('''
                def $name(xs):
                    return $body
            ''', name=name, body=body.replace("COND", cond_ref)),
            gold=code('''
                fn $name(xs: list) -> $rtype:
                    return $body
            ''', name=name, body=body.replace("COND", cond_gold).replace("None", "nil"), rtype=rtype),
            tests=[[[]], [[1, "1", 1.0, [1], None]]] + [[_mixed(rng, rng.randint(1, 7))] for _ in range(6)],
            params={"type": t, "shape": shape, "op": op},
        )


@family("type_dispatch", "types", ["P4-30"], difficulty=2)
def type_dispatch(rng):
    """Convert each item by its type: numbers scaled, strings measured, lists summed."""
    while True:
        k = rng.choice([2, 3, 10])
        str_rule = rng.choice(["len(x)", "x.count('a')", "int(x) if x.isdigit() else 0"])
        other = rng.choice(["0", "-1"])
        name = rng.choice(["normalize", "to_numbers", "score_items", "convert_by_type"])
        yield Variant(
            title=f"Convert by type (int * {k}, str -> {str_rule})",
            task="xs mixes integers, floats, strings, lists of integers and None (never booleans). Map each item: an "
                 f"int or float x to x * {k}; a string x to {str_rule}; a list to the sum of its items; anything else "
                 f"to {other}. Return the list of results.",
            entry_point=name,
            reference=code('''
                def $name(xs):
                    out = []
                    for x in xs:
                        if type(x) == int or type(x) == float:
                            out.append(x * $k)
                        elif type(x) == str:
                            out.append($str_rule)
                        elif type(x) == list:
                            out.append(sum(x))
                        else:
                            out.append($other)
                    return out
            ''', name=name, k=k, str_rule=str_rule, other=other),
            gold=code('''
                fn $name(xs: list) -> list:
                    let out = []
                    for x in xs:
                        if isinstance(x, (int, float)):
                            out.append(x * $k)
                        else if isinstance(x, str):
                            out.append($str_rule)
                        else if isinstance(x, list):
                            out.append(sum(x))
                        else:
                            out.append($other)
                    return out
            ''', name=name, k=k, str_rule=str_rule, other=other),
            tests=[[[]], [[1, 2.5, "aa", [1, 2], None]]] + [[_mixed(rng, rng.randint(1, 7))] for _ in range(6)],
            tolerance=1e-9,
            params={"k": k, "str_rule": str_rule, "other": other},
        )


@family("flatten_nested", "types", ["P4-30"], difficulty=2)
def flatten_nested(rng):
    """Flatten nested lists recursively, recognising lists with a type test."""
    while True:
        post = rng.choice(["flat", "sum", "depth", "count"])
        name = rng.choice(["flatten", "deep_items", "nested_total", "unnest"])
        body_ref, body_gold, what, rtype = {
            "flat": ("out = []\n    for x in xs:\n        if type(x) == list:\n            out.extend(NAME(x))\n"
                     "        else:\n            out.append(x)\n    return out",
                     "let out = []\n    for x in xs:\n        if isinstance(x, list):\n"
                     "            out.extend(NAME(x))\n        else:\n            out.append(x)\n    return out",
                     "the flat list of all non-list items, in order", "list"),
            "sum": ("total = 0\n    for x in xs:\n        if type(x) == list:\n            total += NAME(x)\n"
                    "        else:\n            total += x\n    return total",
                    "let total = 0\n    for x in xs:\n        if isinstance(x, list):\n            total += NAME(x)\n"
                    "        else:\n            total += x\n    return total",
                    "the sum of all the integers at any depth", "int"),
            "depth": ("best = 1\n    for x in xs:\n        if type(x) == list:\n"
                      "            best = max(best, 1 + NAME(x))\n    return best",
                      "let best = 1\n    for x in xs:\n        if isinstance(x, list):\n"
                      "            best = max(best, 1 + NAME(x))\n    return best",
                      "the nesting depth (a flat list, even empty, has depth 1)", "int"),
            "count": ("n = 0\n    for x in xs:\n        if type(x) != list:\n            n += 1\n        else:\n"
                      "            n += NAME(x)\n    return n",
                      "let n = 0\n    for x in xs:\n        if not isinstance(x, list):\n            n += 1\n"
                      "        else:\n            n += NAME(x)\n    return n",
                      "how many non-list items there are at any depth", "int"),
        }[post]
        def nested(d=0):
            return [nested(d + 1) if d < 3 and rng.random() < 0.3 else rng.randint(-5, 9)
                    for _ in range(rng.randint(0, 3))]
        yield Variant(
            title=f"Nested lists of integers: {post}",
            task=f"xs is a list whose items are integers or (recursively) such lists. Return {what}.",
            entry_point=name,
            reference=f"def {name}(xs):\n    " + body_ref.replace("NAME", name) + "\n",
            gold=f"fn {name}(xs: list) -> {rtype}:\n    " + body_gold.replace("NAME", name) + "\n",
            tests=[[[]], [[1, [2, [3]]]], [[[], [[]]]]] + [[nested()] for _ in range(5)],
            params={"post": post},
        )
