"""Families targeting P4-17 (`xs.pop()` takes the FIRST item) and stack peeks (P4-14)."""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import choose

_DRAIN_STEPS = {
    "running": ("total += x\n        out.append(total)", "the running total after each item", "list[int]"),
    "doubles": ("out.append(x * 2)", "each item doubled", "list[int]"),
    "gaps": ("out.append(x - prev)\n        prev = x",
             "each item minus the previously processed one (the first minus 0)", "list[int]"),
    "positives": ("if x > 0:\n            out.append(x)", "the positive items", "list[int]"),
    "clamped": ("out.append(min(x, cap))", "each item capped at cap", "list[int]"),
}


@family("drain_in_order", "lists", ["P4-17"], difficulty=2)
def drain_in_order(rng):
    """Consume a work list front to back with pop() (Python 3 reverses first, then pops the end)."""
    while True:
        step, (body, desc, rtype) = choose(rng, _DRAIN_STEPS)
        name = rng.choice(["process_queue", "drain", "consume_in_order", "work_through"])
        limit = rng.choice([None, 2, 3, 4])
        stop_ref = "" if limit is None else f"\n        if len(out) == {limit}:\n            break"
        stop_text = "" if limit is None else f" Stop as soon as {limit} results have been produced."
        yield Variant(
            title=f"Drain a work list in order: {step}{'' if limit is None else f' (first {limit})'}",
            task=f"Process the items of xs from first to last, removing each from the work list as it is taken, and "
                 f"return the list of {desc}.{stop_text} (cap is an integer.)",
            entry_point=name,
            reference=code('''
                def $name(xs, cap):
                    work = list(xs)
                    work.reverse()
                    out = []
                    total = prev = 0
                    while work:
                        x = work.pop()
                        $body$stop
                    return out
            ''', name=name, body=body, stop=stop_ref),
            gold=code('''
                fn $name(xs: list[int], cap: int) -> $rtype:
                    let work = list(xs)
                    let out = []
                    let total = 0
                    let prev = 0
                    while work:
                        let x = work.pop()
                        $body$stop
                    return out
            ''', name=name, body=body, stop=stop_ref, rtype=rtype),
            tests=[[[], 3], [[5], 3], [[1, 2, 3], 2]]
                  + [[[rng.randint(-9, 9) for _ in range(rng.randint(2, 7))], rng.randint(0, 5)]
                     for _ in range(5)],
            params={"step": step, "limit": limit},
        )


_BRACKETS = [("()", "round"), ("()[]", "round and square"), ("()[]{}", "round, square and curly"),
             ("<>()", "angle and round")]


@family("bracket_depth", "parsing", ["P4-14", "P4-12"], difficulty=2)
def bracket_depth(rng):
    """Check brackets with a stack: peek at the top (`last`), pop it, report a property."""
    while True:
        pairs, desc = rng.choice(_BRACKETS)
        result = rng.choice(["balanced", "max_depth", "first_error"])
        name = rng.choice(["check_brackets", "bracket_report", "scan_brackets", "nesting"])
        opens, closes = pairs[0::2], pairs[1::2]
        match = {c: o for o, c in zip(opens, closes, strict=True)}
        what = {"balanced": "True when every bracket is closed by the matching kind in the right order, else False",
                "max_depth": "the deepest nesting reached, or -1 when the brackets do not balance",
                "first_error": "the position of the first closing bracket that does not match (or has nothing to "
                               "close), len(text) when something is left open, and -1 when all is balanced"}[result]
        ret_ok = {"balanced": "not stack", "max_depth": "depth if not stack else -1",
                  "first_error": "-1 if not stack else len(text)"}[result]
        ret_bad = {"balanced": "False", "max_depth": "-1", "first_error": "i"}[result]
        rtype = "bool" if result == "balanced" else "int"
        alphabet = pairs + "ab"
        yield Variant(
            title=f"Brackets ({desc}): {result}",
            task=f"text contains {desc} brackets ({pairs}) and other characters, which are ignored. Return {what}.",
            entry_point=name,
            reference=code('''
                def $name(text):
                    match = $match
                    stack = []
                    depth = 0
                    for i in range(len(text)):
                        c = text[i]
                        if c in $opens:
                            stack.append(c)
                            depth = max(depth, len(stack))
                        elif c in match:
                            if not stack or stack[-1] != match[c]:
                                return $bad
                            stack.pop()
                    return $ok
            ''', name=name, match=repr(match), opens=repr(opens), bad=ret_bad, ok=ret_ok),
            gold=code('''
                fn $name(text: str) -> $rtype:
                    let match = $match
                    let stack = []
                    let depth = 0
                    for i in indices(text):
                        let c = text[i]
                        if c in $opens:
                            stack.append(c)
                            depth = max(depth, len(stack))
                        else if c in match:
                            if not stack or last(stack) != match[c]:
                                return $bad
                            stack.pop(len(stack) - 1)
                    return $ok
            ''', name=name, match=repr(match), opens=repr(opens), bad=ret_bad.replace("False", "false"),
                      ok=ret_ok, rtype=rtype),
            tests=[[""], [pairs[0] + pairs[1]], [pairs[1]], [pairs[0] * 2 + pairs[1]],
                   [pairs[0] + pairs[0] + pairs[1] + pairs[1]]]
                  + [["".join(rng.choice(alphabet) for _ in range(rng.randint(2, 9)))] for _ in range(4)],
            params={"pairs": pairs, "result": result},
        )


_EDIT_OPS = ["add", "add", "undo", "add", "double"]


@family("undo_history", "simulation", ["P4-14"], difficulty=3)
def undo_history(rng):
    """Apply edits to a value while keeping an undo stack of previous values."""
    while True:
        start = rng.randint(-3, 3)
        double_op = rng.choice(["double", "negate", "square"])
        expr = {"double": "value * 2", "negate": "-value", "square": "value * value"}[double_op]
        report = rng.choice(["final", "history", "peak"])
        name = rng.choice(["apply_edits", "edit_session", "replay", "undoable"])
        what = {"final": "the final value", "history": "the list of values after every command",
                "peak": "the largest value ever held (including the start)"}[report]
        init = {"final": "", "history": "seen = []", "peak": "seen = [value]"}[report]
        track = {"final": "", "history": "seen.append(value)", "peak": "seen.append(value)"}[report]
        ret = {"final": "value", "history": "seen", "peak": "max(seen)"}[report]
        rtype = "list[int]" if report == "history" else "int"
        cmds = lambda: [rng.choice([["add", rng.randint(-5, 5)], ["undo"], ["undo"], [double_op]])
                        for _ in range(rng.randint(1, 7))]
        yield Variant(
            title=f"Undoable edits (add/{double_op}/undo): {report}",
            task=f"The value starts at {start}. commands is a list: ['add', n] adds n, ['{double_op}'] sets value to "
                 f"{expr}, ['undo'] restores the value before the most recent not-yet-undone edit (nothing happens "
                 f"when there is none). Return {what}.",
            entry_point=name,
            reference=code('''
                def $name(commands):
                    value = $start
                    undo = []
                    $init
                    for cmd in commands:
                        if cmd[0] == "undo":
                            if undo:
                                value = undo[-1]
                                undo.pop()
                        elif cmd[0] == "add":
                            undo.append(value)
                            value += cmd[1]
                        else:
                            undo.append(value)
                            value = $expr
                        $track
                    return $ret
            ''', name=name, start=start, init=init, expr=expr, track=track, ret=ret),
            gold=code('''
                fn $name(commands: list[list]) -> $rtype:
                    let value = $start
                    let undo = []
                    $init
                    for cmd in commands:
                        if cmd[0] == "undo":
                            if undo:
                                value = last(undo)
                                undo.pop(len(undo) - 1)
                        else if cmd[0] == "add":
                            undo.append(value)
                            value += cmd[1]
                        else:
                            undo.append(value)
                            value = $expr
                        $track
                    return $ret
            ''', name=name, start=start, init=("let " + init) if init else "", expr=expr, track=track, ret=ret,
                      rtype=rtype),
            tests=[[[]], [[["undo"]]], [[["add", 2], ["add", 3], ["undo"], ["undo"]]]] + [[cmds()] for _ in range(5)],
            params={"start": start, "op": double_op, "report": report},
        )


@family("alternate_merge", "lists", ["P4-17"], difficulty=2)
def alternate_merge(rng):
    """Interleave two work lists by taking items from their fronts with pop()."""
    while True:
        first = rng.choice(["a", "b"])
        leftover = rng.choice(["append", "drop"])
        transform = rng.choice(["x", "x * 10", "-x", "x + 1"])
        name = rng.choice(["interleave", "alternate", "merge_turns", "zipper_merge"])
        other = "b" if first == "a" else "a"
        what = "after the last round, the items left in either list follow in order (unchanged)" \
            if leftover == "append" else "items left over after the last round are dropped"
        extend = "    out.extend(rest)\n" if leftover == "append" else ""
        rest_ref = "    rest = left[::-1] + right[::-1]\n" if leftover == "append" else ""
        rest_gold = "    let rest = left + right\n" if leftover == "append" else ""
        yield Variant(
            title=f"Interleave starting with {first} ({leftover} leftovers), items as {transform}",
            task=f"Merge lists a and b in rounds: each round takes the front item of {first}, then the front item of "
                 f"{other}, recording each taken item{'' if transform == 'x' else f' x as {transform}'}; rounds "
                 f"continue while both lists still have items. {what[0].upper() + what[1:]}. Return the recorded list.",
            entry_point=name,
            reference=code('''
                def $name(a, b):
                    left, right = list($first)[::-1], list($other)[::-1]
                    out = []
                    while left and right:
                        x = left.pop()
                        out.append($t)
                        x = right.pop()
                        out.append($t)
                $rest$extend    return out
            ''', name=name, first=first, other=other, t=transform, rest=rest_ref, extend=extend),
            gold=code('''
                fn $name(a: list[int], b: list[int]) -> list[int]:
                    let left = list($first)
                    let right = list($other)
                    let out = []
                    while left and right:
                        let x = left.pop()
                        out.append($t)
                        x = right.pop()
                        out.append($t)
                $rest$extend    return out
            ''', name=name, first=first, other=other, t=transform, rest=rest_gold, extend=extend),
            tests=[[[], []], [[1], []], [[1, 2], [3]], [[1], [2, 3, 4]]]
                  + [[[rng.randint(0, 9) for _ in range(rng.randint(0, 5))],
                      [rng.randint(0, 9) for _ in range(rng.randint(0, 5))]]
                     for _ in range(4)],
            params={"first": first, "leftover": leftover, "transform": transform},
        )
