"""Assorted families, one or two rules each: linked records (P4-27), dates (P4-28), matrix
checks (P4-07), aligned columns (P4-08), bisect/heapq (P4-10), triangles and intervals
(P4-11), titles (P4-24), type names (P4-30), nested tallies (P4-15), last words (P4-14)."""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import NAMES, WORDS


@family("follow_links", "dicts", ["P4-27"], difficulty=2)
def follow_links(rng):
    """Follow next-pointers stored in a dict until a None link (or a step limit)."""
    while True:
        limit = rng.choice([5, 10, 20])
        shape = rng.choice(["path", "length", "end"])
        name = rng.choice(["follow", "walk_chain", "trace_links", "chain_from"])
        init, step, ret, rtype = {
            "path": ("path = [node]", "path.append(node)", "path", "list[str]"),
            "length": ("steps = 0", "steps += 1", "steps", "int"),
            "end": ("", "", "node", "str"),
        }[shape]
        what = {"path": "the list of visited names, start included", "length": "how many links were followed",
                "end": "the name where the walk stops"}[shape]
        def links():
            names = rng.sample(NAMES, rng.randint(2, 6))
            return {n: rng.choice(names + [None]) for n in names}, rng.choice(names)
        samples = [links() for _ in range(5)]
        yield Variant(
            title=f"Follow links until None, at most {limit} steps ({shape})",
            task="nxt maps each name to the next name or to None. Starting at start, follow the links while the "
                 f"current name's link is not None, taking at most {limit} steps. Return {what}.",
            entry_point=name,
            reference=code('''
                def $name(nxt, start):
                    node = start
                    $init
                    for _ in range($limit):
                        if nxt[node] == None:
                            break
                        node = nxt[node]
                        $step
                    return $ret
            ''', name=name, init=init or "pass", limit=limit, step=step or "pass", ret=ret),
            gold=code('''
                fn $name(nxt: dict, start: str) -> $rtype:
                    let node = start
                    $init
                    for _ in range(1, $limit):
                        if nxt[node] is nil:
                            break
                        node = nxt[node]
                        $step
                    return $ret
            ''', name=name, init=("let " + init) if init else "pass", limit=limit, step=step or "pass", ret=ret,
                      rtype=rtype),
            tests=[[{"a": None}, "a"], [{"a": "b", "b": None}, "a"], [{"a": "b", "b": "a"}, "b"]]
                  + [list(s) for s in samples],
            rules=("P4-27", "P4-12"),
            params={"limit": limit, "shape": shape},
        )


_MONTHS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]


@family("date_to_day_of_year", "parsing", ["P4-28", "P4-06"], difficulty=2)
def date_to_day_of_year(rng):
    """Parse 'YYYY-MM-DD' strings; malformed ones fall back (bare except in the reference)."""
    while True:
        leap = rng.choice([True, False])
        fallback = rng.choice(["-1", "0", "None"])
        name = rng.choice(["day_of_year", "ordinal_days", "parse_dates", "julian_days"])
        leap_expr = "year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)" if leap else "False"
        def date():
            if rng.random() < 0.3:
                return rng.choice(["2024-13-01", "2023-02-x", "garbage", "2023-1", "", "2021-00-05"])
            return f"{rng.randint(1999, 2025)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        counting = "counting February 29 in leap years (Gregorian rule)" if leap else "treating every year as 365 days"
        yield Variant(
            title=f"Day of year from ISO dates ({'with' if leap else 'ignoring'} leap years), fallback {fallback}",
            task=f"Each string is 'YYYY-MM-DD'. Return the list of day-of-year numbers (January 1 is 1), {counting}. "
                 f"A string that does not split into three integers, or whose month is not 1..12, gives {fallback}.",
            entry_point=name,
            reference=code('''
                MONTHS = $months

                def $name(dates):
                    out = []
                    for d in dates:
                        try:
                            year, month, day = [int(p) for p in d.split("-")]
                            if month < 1 or month > 12:
                                raise ValueError(d)
                            extra = 1 if month > 2 and ($leap) else 0
                            out.append(sum(MONTHS[:month - 1]) + day + extra)
                        except:
                            out.append($fallback)
                    return out
            ''', months=_MONTHS, name=name, leap=leap_expr, fallback=fallback),
            gold=code('''
                let MONTHS = $months

                fn $name(dates: list[str]) -> list[int | nil]:
                    let out = []
                    for d in dates:
                        try:
                            let year, month, day = [int(p) for p in d.split("-")]
                            if month < 1 or month > 12:
                                throw ValueError(d)
                            let extra = 1 if month > 2 and ($leap) else 0
                            out.append(sum(MONTHS[i] for i in range(0, month - 2)) + day + extra)
                        catch ValueError:
                            out.append($fallback)
                    return out
            ''', months=_MONTHS, name=name, leap=leap_expr.replace("False", "false"),
                      fallback=fallback.replace("None", "nil")),
            tests=[[[]], [["2024-03-01", "2023-03-01"]], [["2000-12-31", "1900-03-01"]], [["x", "2023-13-01"]]]
                  + [[[date() for _ in range(rng.randint(1, 4))]] for _ in range(4)],
            rules=("P4-28", "P4-06"),
            params={"leap": leap, "fallback": fallback},
        )


@family("matrix_shape_check", "validation", ["P4-07", "P4-06"], difficulty=2)
def matrix_shape_check(rng):
    """A validator throws on ragged or empty matrices; the caller reports a fallback."""
    while True:
        result = rng.choice(["shape", "total", "transpose_rows"])
        fallback = rng.choice(["None", "[]", "-1"]) if result != "shape" else rng.choice(["None", "[]"])
        name = rng.choice(["matrix_info", "checked_matrix", "safe_shape", "grid_summary"])
        ret, rtype = {"shape": ("[len(m), len(m[0])]", "list[int] | nil"),
                      "total": ("sum(sum(row) for row in m)", "int | nil"),
                      "transpose_rows": ("len(m[0])", "int | nil")}[result]
        what = {"shape": "[rows, columns]", "total": "the sum of all entries",
                "transpose_rows": "the number of columns"}[result]
        yield Variant(
            title=f"Checked matrix {result}, fallback {fallback}",
            task=f"m should be a non-empty list of non-empty rows, all of the same length. Return {what}; return "
                 f"{fallback} when m is not such a matrix.",
            entry_point=name,
            reference=code('''
                def check(m):
                    if not m or not m[0]:
                        raise ValueError("empty matrix")
                    for row in m:
                        if len(row) != len(m[0]):
                            raise ValueError("ragged matrix")

                def $name(m):
                    try:
                        check(m)
                    except ValueError:
                        return $fallback
                    return $ret
            ''', name=name, fallback=fallback, ret=ret),
            gold=code('''
                fn check(m: list[list[int]]) -> nil:
                    if not m or not m[0]:
                        throw ValueError("empty matrix")
                    for row in m:
                        if len(row) != len(m[0]):
                            throw ValueError("ragged matrix")

                fn $name(m: list[list[int]]) -> $rtype:
                    try:
                        check(m)
                    catch ValueError:
                        return $fallback
                    return $ret
            ''', name=name, fallback=fallback.replace("None", "nil"), ret=ret, rtype=rtype),
            tests=[[[]], [[[]]], [[[1, 2], [3]]], [[[1, 2], [3, 4]]]]
                  + [[[[rng.randint(-5, 9) for _ in range(rng.choice([2, 2, 3]))] for _ in range(rng.randint(1, 3))]]
                     for _ in range(4)],
            params={"result": result, "fallback": fallback},
        )


@family("aligned_numbers", "strings", ["P4-08", "P4-18"], difficulty=1)
def aligned_numbers(rng):
    """Right- or left-align numbers to the widest one with a nested format width."""
    while True:
        align = rng.choice([">", "<", "^"])
        fill = rng.choice(["", "0", "."])
        if fill == "0" and align != ">":
            fill = ""
        sep = rng.choice(["\n", "|", " "])
        name = rng.choice(["align_numbers", "column_text", "pad_numbers", "format_column"])
        spec = f"{fill}{align}" if fill else align
        yield Variant(
            title=f"Align numbers with {spec!r} to the widest, joined by {sep!r}",
            task=f"Render every integer of xs with the Python format spec '{spec}<w>', where w is the length of the "
                 f"longest decimal text among them, and join the pieces with {sep!r}.",
            entry_point=name,
            reference=code('''
                def $name(xs):
                    w = max((len(str(x)) for x in xs), default=0)
                    return $sep.join(f"{x:$spec{w}}" for x in xs)
            ''', name=name, sep=repr(sep), spec=spec),
            gold=code('''
                fn $name(xs: list[int]) -> str:
                    let w = max((len(str(x)) for x in xs), default=0)
                    return [i"{x:$spec{w}}" for x in xs].join($sep)
            ''', name=name, sep=repr(sep), spec=spec),
            tests=[[[]], [[5]], [[1, 22, 333]], [[-7, 100]]]
                  + [[[rng.randint(-999, 9999) for _ in range(rng.randint(1, 5))]] for _ in range(4)],
            params={"align": align, "fill": fill, "sep": sep},
        )


@family("bisect_module", "searching", ["P4-10"], difficulty=1)
def bisect_module(rng):
    """Rank queries against a sorted list with the bisect module."""
    while True:
        fn = rng.choice(["bisect_left", "bisect_right"])
        shape = rng.choice(["ranks", "above", "between"])
        style = rng.choice(["module", "from"])
        name = rng.choice(["ranks", "count_below", "locate", "position_of"])
        call = (lambda a: f"bisect.{fn}(xs, {a})") if style == "module" else (lambda a: f"{fn}(xs, {a})")
        imp, use = (("import bisect", "use bisect") if style == "module"
                    else (f"from bisect import {fn}", f"from bisect use {fn}"))
        body, what = {
            "ranks": (f"[{call('q')} for q in queries]", f"for each query q, bisect.{fn}(xs, q)"),
            "above": (f"[len(xs) - {call('q')} for q in queries]", f"for each query q, len(xs) - bisect.{fn}(xs, q)"),
            "between": (f"[{call('b')} - {call('a')} for a, b in queries]",
                        f"for each query [a, b], bisect.{fn}(xs, b) - bisect.{fn}(xs, a)"),
        }[shape]
        pairs = shape == "between"
        mkq = (lambda: sorted([rng.randint(-2, 12), rng.randint(-2, 12)])) if pairs else (lambda: rng.randint(-2, 12))
        yield Variant(
            title=f"{fn} queries ({shape}, {style} import)",
            task=f"xs is sorted ascending. Return {what} (Python's bisect module).",
            entry_point=name,
            reference=f"{imp}\n\ndef {name}(xs, queries):\n    return {body}\n",
            gold=f"{use}\n\nfn {name}(xs: list[int], queries: list) -> list[int]:\n    return {body}\n",
            tests=[[[], [mkq()]], [[1, 2, 2, 3], [mkq(), mkq()]]]
                  + [[sorted(rng.randint(0, 10) for _ in range(rng.randint(1, 7))), [mkq() for _ in range(3)]]
                     for _ in range(5)],
            params={"fn": fn, "shape": shape, "style": style},
        )


@family("heapq_module", "searching", ["P4-10"], difficulty=1)
def heapq_module(rng):
    """k smallest / largest items with the heapq module."""
    while True:
        fn = rng.choice(["nsmallest", "nlargest"])
        k = rng.randint(1, 4)
        post = rng.choice(["list", "sum", "last"])
        style = rng.choice(["module", "from"])
        name = rng.choice(["top_k", "extremes", "best_few", "select_k"])
        call = f"heapq.{fn}({k}, xs)" if style == "module" else f"{fn}({k}, xs)"
        imp, use = (("import heapq", "use heapq") if style == "module"
                    else (f"from heapq import {fn}", f"from heapq use {fn}"))
        ref = {"list": call, "sum": f"sum({call})", "last": f"{call}[-1] if xs else None"}[post]
        gold = {"list": call, "sum": f"sum({call})", "last": f"last({call}) if xs else nil"}[post]
        rules = ("P4-10", "P4-14") if post == "last" else ("P4-10",)
        rtype = {"list": "list[int]", "sum": "int", "last": "int | nil"}[post]
        what = {"list": "them, in order", "sum": "their sum",
                "last": "the last of them in heapq's order (None for an empty list)"}[post]
        yield Variant(
            title=f"heapq.{fn}({k}) ({post}, {style} import)",
            task=f"Take the {k} {'smallest' if fn == 'nsmallest' else 'largest'} items of xs (Python's heapq.{fn}) and "
                 f"return {what}.",
            entry_point=name,
            reference=f"{imp}\n\ndef {name}(xs):\n    return {ref}\n",
            gold=f"{use}\n\nfn {name}(xs: list[int]) -> {rtype}:\n    return {gold}\n",
            tests=[[[]], [[3]], [[5, 1, 4, 1]]]
                  + [[[rng.randint(-20, 20) for _ in range(rng.randint(1, 8))]] for _ in range(5)],
            rules=rules,
            params={"fn": fn, "k": k, "post": post, "style": style},
        )


@family("triangle_kind", "classification", ["P4-11"], difficulty=2)
def triangle_kind(rng):
    """Classify triangles from their sides with range checks on the sorted sides."""
    while True:
        shape = rng.choice(["kind", "valid_count"])
        labels = rng.choice([("equilateral", "isosceles", "scalene", "invalid"), ("eq", "iso", "sca", "none")])
        name = rng.choice(["triangle_kind", "classify_triangle", "triangles", "side_check"])
        body_ref = ("a, b, c = sorted(sides)\n"
                    "    if not 0 < a <= b <= c or a + b <= c:\n"
                    f"        return {labels[3]!r}\n"
                    "    if a == b == c:\n"
                    f"        return {labels[0]!r}\n"
                    "    if a == b or b == c:\n"
                    f"        return {labels[1]!r}\n"
                    f"    return {labels[2]!r}")
        body_gold = ("let a, b, c = sorted(sides)\n"
                     "    if not (0 < a and a <= b and b <= c) or a + b <= c:\n"
                     f"        return {labels[3]!r}\n"
                     "    if a == b and b == c:\n"
                     f"        return {labels[0]!r}\n"
                     "    if a == b or b == c:\n"
                     f"        return {labels[1]!r}\n"
                     f"    return {labels[2]!r}")
        if shape == "valid_count":
            ref = (f"def kind(sides):\n    {body_ref}\n\ndef {name}(triangles):\n"
                   f"    return len([t for t in triangles if kind(t) != {labels[3]!r}])\n")
            gold = (f"fn kind(sides: list[int]) -> str:\n    {body_gold}\n\n"
                    f"fn {name}(triangles: list[list[int]]) -> int:\n"
                    f"    return len([t for t in triangles if kind(t) != {labels[3]!r}])\n")
            tests = [[[]], [[[1, 1, 1], [1, 2, 3]]]] + [[[[rng.randint(0, 6) for _ in range(3)]
                                                          for _ in range(rng.randint(1, 4))]] for _ in range(5)]
            what = "how many of the triangles are valid"
        else:
            ref = f"def {name}(sides):\n    {body_ref}\n"
            gold = f"fn {name}(sides: list[int]) -> str:\n    {body_gold}\n"
            tests = [[[2, 2, 2]], [[3, 4, 5]], [[2, 2, 3]], [[1, 2, 3]], [[0, 1, 1]], [[5, 3, 3]],
                     [[rng.randint(0, 6) for _ in range(3)]]]
            what = (f"the kind of the triangle: {labels[0]!r}, {labels[1]!r} (exactly two equal sides), {labels[2]!r} "
                    f"or {labels[3]!r}")
        yield Variant(
            title=f"Triangle classification ({shape}, labels {labels[0]}...)",
            task="Sides are three integers in any order; sorted as a <= b <= c, a triangle is valid when 0 < a and "
                 f"a + b > c. Return {what}.",
            entry_point=name,
            reference=ref,
            gold=gold,
            tests=tests,
            params={"shape": shape, "labels": labels},
        )


@family("interval_lookup", "searching", ["P4-11"], difficulty=2)
def interval_lookup(rng):
    """Find which half-open interval [lo, hi) contains each point."""
    while True:
        shape = rng.choice(["index", "label", "count"])
        closed = rng.choice([False, True])
        op2 = "<=" if closed else "<"
        name = rng.choice(["which_interval", "locate_points", "bucket_points", "interval_of"])
        found = {"index": "j", "label": "label", "count": "1"}[shape]
        miss = {"index": "-1", "label": "''", "count": "0"}[shape]
        post = "out" if shape != "count" else "sum(out)"
        rtype = {"index": "list[int]", "label": "list[str]", "count": "int"}[shape]
        what = {"index": "the 0-based index of the first interval containing it (-1 if none)",
                "label": "the label of the first interval containing it ('' if none)",
                "count": "1 if some interval contains it, else 0 — and return the total of these"}[shape]
        yield Variant(
            title=f"Interval lookup ({'closed' if closed else 'half-open'}, {shape})",
            task=f"intervals is a list of [lo, hi, label]; a point p is inside when lo <= p {op2} hi. For each point, "
                 f"take {what}{'' if shape == 'count' else '; return the list'}.",
            entry_point=name,
            reference=code('''
                def $name(intervals, points):
                    out = []
                    for p in points:
                        hit = $miss
                        for j in range(len(intervals)):
                            lo, hi, label = intervals[j]
                            if lo <= p $op2 hi:
                                hit = $found
                                break
                        out.append(hit)
                    return $post
            ''', name=name, miss=miss, op2=op2, found=found, post=post),
            gold=code('''
                fn $name(intervals: list[list], points: list[int]) -> $rtype:
                    let out = []
                    for p in points:
                        let hit = $miss
                        for j in indices(intervals):
                            let lo, hi, label = intervals[j]
                            if lo <= p and p $op2 hi:
                                hit = $found
                                break
                        out.append(hit)
                    return $post
            ''', name=name, miss=miss, op2=op2, found=found, post=post, rtype=rtype),
            tests=[[[], [1]], [[[0, 5, "a"], [5, 9, "b"]], [0, 5, 9, -1]]]
                  + [[[[lo, lo + rng.randint(0, 4), rng.choice("xyz")]
                       for lo in sorted(rng.sample(range(-5, 10), rng.randint(1, 3)))],
                      [rng.randint(-6, 12) for _ in range(4)]] for _ in range(5)],
            rules=("P4-11", "P4-12"),
            params={"shape": shape, "closed": closed},
        )


@family("clean_titles", "strings", ["P4-24"], difficulty=1)
def clean_titles(rng):
    """Normalise titles: trim spaces and trailing punctuation, then case them."""
    while True:
        punct = rng.choice(["?!.", ".", "!", ":;"])
        case = rng.choice(["title", "lower", "upper", "keep"])
        name = rng.choice(["clean_title", "tidy_titles", "normalize_titles", "headline"])
        conv = {"title": ".title()", "lower": ".lower()", "upper": ".upper()", "keep": ""}[case]
        yield Variant(
            title=f"Clean titles (strip spaces then {punct!r}, {case})",
            task=f"For each title, remove surrounding whitespace, then any trailing characters from {punct!r}, then "
                 "surrounding whitespace again, and apply "
                 f"{'str.' + conv.strip('.()') + '()' if conv else 'no case change'}. Return the list.",
            entry_point=name,
            reference=code('''
                def $name(titles):
                    return [t.strip().rstrip($punct).strip()$conv for t in titles]
            ''', name=name, punct=repr(punct), conv=conv),
            gold=code('''
                fn $name(titles: list[str]) -> list[str]:
                    return [t.trim().trim_end($punct).trim()$conv for t in titles]
            ''', name=name, punct=repr(punct), conv=conv),
            tests=[[[]], [["  hello world?! "]], [["a . ", "...", ""]]]
                  + [[[rng.choice(["", " "]) + " ".join(rng.sample(WORDS, 2)) + rng.choice(["", "?", "!!", ".", " :"])
                       + rng.choice(["", " "])
                       for _ in range(rng.randint(1, 4))]] for _ in range(5)],
            params={"punct": punct, "case": case},
        )


@family("type_names", "types", ["P4-30"], difficulty=1)
def type_names(rng):
    """Name each value's type through a chain of exact type tests."""
    while True:
        labels = rng.choice([("int", "float", "str", "list", "other"), ("I", "F", "S", "L", "?"),
                             ("number", "number", "text", "seq", "none")])
        shape = rng.choice(["names", "counts"])
        name = rng.choice(["type_names", "describe_types", "kinds", "classify_values"])
        ladder_ref = (f"    if type(x) == int:\n        return {labels[0]!r}\n    if type(x) == float:\n"
                      f"        return {labels[1]!r}\n    if type(x) == str:\n        return {labels[2]!r}\n"
                      f"    if type(x) == list:\n        return {labels[3]!r}\n    return {labels[4]!r}")
        ladder_gold = ladder_ref.replace("type(x) == int", "isinstance(x, int)") \
            .replace("type(x) == float", "isinstance(x, float)") \
            .replace("type(x) == str", "isinstance(x, str)").replace("type(x) == list", "isinstance(x, list)")
        main_body = "[kind(x) for x in xs]" if shape == "names" else "len(set(kind(x) for x in xs))"
        yield Variant(
            title=f"Type names {labels[:4]} ({shape})",
            task=f"xs mixes integers, floats, strings, lists and None (never booleans). Name each value: {labels[0]!r} "
                 f"for an int, {labels[1]!r} for a float, {labels[2]!r} for a str, {labels[3]!r} for a list, "
                 f"{labels[4]!r} otherwise. Return "
                 f"{'the list of names' if shape == 'names' else 'how many distinct names occur'}.",
            entry_point=name,
            reference=f"def kind(x):\n{ladder_ref}\n\ndef {name}(xs):\n    return {main_body}\n",
            gold=f"fn kind(x: object) -> str:\n{ladder_gold}\n\n"
                 f"fn {name}(xs: list) -> {'list[str]' if shape == 'names' else 'int'}:\n    return {main_body}\n",
            tests=[[[]], [[1, 1.5, "a", [1], None]]]
                  + [[[rng.choice([3, -2, 0.25, "x", "", [], [1, 2], None]) for _ in range(rng.randint(1, 6))]]
                     for _ in range(5)],
            params={"labels": labels, "shape": shape},
        )


@family("nested_tally", "dicts", ["P4-15"], difficulty=2)
def nested_tally(rng):
    """Count items per category into a dict of dicts."""
    while True:
        value = rng.choice(["count", "total"])
        name = rng.choice(["nested_counts", "tally_by_group", "group_totals", "two_level_counts"])
        step = "inner[item] = inner.get(item, 0) + 1" if value == "count" else "inner[item] = inner.get(item, 0) + qty"
        yield Variant(
            title=f"Two-level tally by category and item ({value})",
            task="records is a list of [category, item, qty]. Return a dict mapping each category to a dict mapping "
                 f"each of its items to {'how many records name it' if value == 'count' else 'the sum of its qty'}.",
            entry_point=name,
            reference=code('''
                def $name(records):
                    table = {}
                    for category, item, qty in records:
                        if category not in table:
                            table[category] = {}
                        inner = table[category]
                        $step
                    return table
            ''', name=name, step=step),
            gold=code('''
                fn $name(records: list[list]) -> dict[str, dict[str, int]]:
                    let table = {:}
                    for category, item, qty in records:
                        if category not in table:
                            table[category] = {:}
                        let inner = table[category]
                        $step
                    return table
            ''', name=name, step=step),
            tests=[[[]], [[["fruit", "apple", 2]]], [[["a", "x", 1], ["a", "x", 2], ["b", "y", 3]]]]
                  + [[[[rng.choice(["tools", "food"]), rng.choice(WORDS[:5]), rng.randint(1, 5)]
                       for _ in range(rng.randint(1, 6))]]
                     for _ in range(5)],
            params={"value": value},
        )


@family("last_words", "strings", ["P4-14"], difficulty=1)
def last_words(rng):
    """Use the last word (or character) of each sentence."""
    while True:
        ref, gold, desc, rtype = rng.choice([
            ("s.split()[-1]", "last(s.split())", "the last word", "str"),
            ("len(s.split()[-1])", "len(last(s.split()))", "the length of the last word", "int"),
            ("s.split()[-1][-1]", "last(last(s.split()))", "the last character of the last word", "str"),
            ("s.split()[-1].upper()", "last(s.split()).upper()", "the last word in upper case", "str"),
            ("s.split()[-2] if len(s.split()) > 1 else ''",
             "s.split()[len(s.split()) - 2] if len(s.split()) > 1 else ''",
             "the second-to-last word ('' when there is only one)", "str"),
        ])
        skip_empty = rng.choice([True, False])
        name = rng.choice(["last_words", "sentence_ends", "final_words", "tail_words"])
        filt = " if s.split()" if skip_empty else ""
        default = "" if skip_empty else (" if s.split() else " + ("0" if rtype == "int" else "''"))
        empties = ("sentences without words are left out" if skip_empty
                   else "a sentence without words gives " + ("0" if rtype == "int" else repr("")))
        yield Variant(
            title=f"{desc.capitalize()} of each sentence",
            task=f"For each sentence (split on whitespace) compute {desc}; {empties}. "
                 f"Return the list.",
            entry_point=name,
            reference=f"def {name}(sentences):\n    return [{ref}{default} for s in sentences{filt}]\n",
            gold=f"fn {name}(sentences: list[str]) -> list[{rtype}]:\n"
                 f"    return [{gold}{default} for s in sentences{filt}]\n",
            tests=[[[]], [["hello world", ""]], [["one", "a b c"]]]
                  + [[[" ".join(rng.sample(WORDS, rng.randint(0, 4))) for _ in range(rng.randint(1, 4))]]
                     for _ in range(5)],
            params={"expr": ref, "skip_empty": skip_empty},
        )
