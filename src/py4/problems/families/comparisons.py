"""Families targeting P4-11: chained comparisons are gone (`a < b and b < c`)."""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import choose

_BANDS = [("<=", "<="), ("<=", "<"), ("<", "<="), ("<", "<")]
_BAND_RESULTS = {
    "count": ("int", "found = 0", "found += 1", "found", "let found = 0", "how many values"),
    "sum": ("int", "found = 0", "found += x", "found", "let found = 0", "the sum of the values"),
    "list": ("list[int]", "found = []", "found.append(x)", "found", "let found = []",
             "the list (in order) of the values"),
}


@family("band_filter", "lists", ["P4-11"], difficulty=1)
def band_filter(rng):
    """Select values inside a band lo (op) x (op) hi."""
    while True:
        op1, op2 = rng.choice(_BANDS)
        res, (rtype, init, step, ret, ginit, rdesc) = choose(rng, _BAND_RESULTS)
        name = rng.choice(["in_band", "within_bounds", "band_select", "between"])
        yield Variant(
            title=f"{res} of x with lo {op1} x {op2} hi",
            task=f"Return {rdesc} x of xs with lo {op1} x {op2} hi.",
            entry_point=name,
            reference=code('''
                def $name(xs, lo, hi):
                    $init
                    for x in xs:
                        if lo $op1 x $op2 hi:
                            $step
                    return $ret
            ''', name=name, init=init, op1=op1, op2=op2, step=step, ret=ret),
            gold=code('''
                fn $name(xs: list[int], lo: int, hi: int) -> $rtype:
                    $ginit
                    for x in xs:
                        if lo $op1 x and x $op2 hi:
                            $step
                    return $ret
            ''', name=name, ginit=ginit, op1=op1, op2=op2, step=step, ret=ret, rtype=rtype),
            tests=[[[], 0, 5], [[0, 5, 3], 0, 5], [[1, 2], 3, 1]]
                  + [[[rng.randint(-10, 10) for _ in range(rng.randint(1, 8))], *sorted(rng.sample(range(-8, 9), 2))]
                     for _ in range(5)],
            params={"ops": [op1, op2], "result": res},
        )


_GRADE_SCALES = [
    [(90, "A"), (80, "B"), (70, "C"), (60, "D")],
    [(85, "high"), (50, "mid"), (20, "low")],
    [(75, "gold"), (50, "silver"), (25, "bronze")],
    [(95, "excellent"), (75, "good"), (40, "fair")],
]


@family("grade_bands", "classification", ["P4-11"], difficulty=1)
def grade_bands(rng):
    """Map scores to labels through explicit interval checks."""
    while True:
        scale = rng.choice(_GRADE_SCALES)
        top = rng.choice([100, 120])
        bottom_label = rng.choice(["F", "none", "fail"])
        invalid = rng.choice(["invalid", "?", "error"])
        name = rng.choice(["grade", "label_score", "classify_score", "band_of"])
        bounds = [top] + [lo for lo, _ in scale]
        ref_lines, gold_lines, desc = [], [], []
        for i, (lo, label) in enumerate(scale):
            hi = bounds[i]
            kw = "if" if i == 0 else "elif"
            ref_lines.append(f"    {kw} {lo} <= s <= {hi}:\n        return {label!r}" if i == 0 else
                             f"    {kw} {lo} <= s < {hi}:\n        return {label!r}")
            gold_kw = "if" if i == 0 else "else if"
            gold_lines.append(f"    {gold_kw} {lo} <= s and s <= {hi}:\n        return {label!r}" if i == 0 else
                              f"    {gold_kw} {lo} <= s and s < {hi}:\n        return {label!r}")
            desc.append(f"{label!r} for {lo}..{hi}" + ("" if i == 0 else " (excluding " + str(hi) + ")"))
        last = scale[-1][0]
        ref_lines.append(f"    elif 0 <= s < {last}:\n        return {bottom_label!r}")
        gold_lines.append(f"    else if 0 <= s and s < {last}:\n        return {bottom_label!r}")
        yield Variant(
            title=f"Grade bands {'/'.join(l for _, l in scale)} up to {top}",
            task=f"Return the label of score s: {'; '.join(desc)}; {bottom_label!r} for 0 up to (excluding) {last}; "
                 f"{invalid!r} for anything below 0 or above {top}.",
            entry_point=name,
            reference=code('''
                def $name(s):
                $lines
                    return $invalid
            ''', name=name, lines="\n".join(ref_lines), invalid=repr(invalid)),
            gold=code('''
                fn $name(s: int) -> str:
                $lines
                    return $invalid
            ''', name=name, lines="\n".join(gold_lines), invalid=repr(invalid)),
            tests=[[top], [top + 1], [-1], [0], [scale[0][0]], [scale[-1][0] - 1]]
                  + [[rng.randint(-5, top + 5)] for _ in range(3)],
            params={"scale": [l for _, l in scale], "top": top},
        )


@family("valid_clock_times", "parsing", ["P4-11"], difficulty=2)
def valid_clock_times(rng):
    """Validate clock strings 'H:M' field by field with range checks."""
    while True:
        hours = rng.choice([24, 12])
        low_hour = 0 if hours == 24 else 1
        top_hour = 23 if hours == 24 else 12
        secs = rng.random() < 0.4
        result = rng.choice(["count", "list"])
        name = rng.choice(["valid_times", "check_clock", "good_timestamps", "time_filter"])
        parts = "h, m, s" if secs else "h, m"
        nfields = 3 if secs else 2
        extra_ref = " and 0 <= s <= 59" if secs else ""
        extra_gold = " and 0 <= s and s <= 59" if secs else ""
        init, step, rtype = ("0", "good += 1", "int") if result == "count" else ("[]", "good.append(t)", "list[str]")
        fmt = "H:M:S" if secs else "H:M"
        def stamp():
            vals = [rng.randint(-1, 25), rng.randint(-1, 61)] + ([rng.randint(0, 61)] if secs else [])
            if rng.random() < 0.15:
                vals = vals[:-1]
            return ":".join(str(v) for v in vals)
        yield Variant(
            title=f"Valid {hours}-hour {fmt} times ({result})",
            task=f"Each string in times should be '{fmt}' with integer fields: hour {low_hour}..{top_hour}, minute "
                 f"0..59{', second 0..59' if secs else ''}. Strings with the wrong number of ':'-separated fields are "
                 "invalid. Return "
                 f"{'how many strings are valid' if result == 'count' else 'the valid strings, in order'}.",
            entry_point=name,
            reference=code('''
                def $name(times):
                    good = $init
                    for t in times:
                        fields = [int(x) for x in t.split(":")]
                        if len(fields) != $nfields:
                            continue
                        $parts = fields
                        if $lo <= h <= $top and 0 <= m <= 59$extra:
                            $step
                    return good
            ''', name=name, init=init, nfields=nfields, parts=parts, lo=low_hour, top=top_hour, extra=extra_ref,
                           step=step),
            gold=code('''
                fn $name(times: list[str]) -> $rtype:
                    let good = $init
                    for t in times:
                        let fields = [int(x) for x in t.split(":")]
                        if len(fields) != $nfields:
                            continue
                        let $parts = fields
                        if $lo <= h and h <= $top and 0 <= m and m <= 59$extra:
                            $step
                    return good
            ''', name=name, init=init, nfields=nfields, parts=parts, lo=low_hour, top=top_hour, extra=extra_gold,
                      step=step, rtype=rtype),
            tests=[[[]], [["12:30" + (":00" if secs else "")]], [["0:0" + (":0" if secs else ""), "24:00"]]]
                  + [[[stamp() for _ in range(rng.randint(1, 6))]] for _ in range(5)],
            params={"hours": hours, "seconds": secs, "result": result},
        )


_RUN_SHAPES = {
    ("<", "<"): "strictly increasing",
    (">", ">"): "strictly decreasing",
    ("<=", "<="): "non-decreasing",
    ("<", ">"): "a peak (rises then falls)",
    (">", "<"): "a valley (falls then rises)",
    ("==", "=="): "constant",
}


def _satisfying(op: str) -> list[int]:
    return {"<": [1, 2], ">": [2, 1], "<=": [1, 1], "==": [3, 3], "!=": [1, 2]}[op]


@family("triple_patterns", "lists", ["P4-11", "P4-12"], difficulty=2)
def triple_patterns(rng):
    """Count consecutive triples with a shape, written as one chained comparison."""
    while True:
        (op1, op2), desc = choose(rng, _RUN_SHAPES)
        result = rng.choice(["count", "first"])
        name = rng.choice(["count_triples", "triple_shape", "find_pattern", "scan_triples"])
        body_ref = ("found += 1", "found = 0", "found") if result == "count" else ("return i", "", "-1")
        what = "how many positions i" if result == "count" else "the first position i (or -1 if none)"
        init_ref = "    found = 0\n" if result == "count" else ""
        init_gold = "    let found = 0\n" if result == "count" else ""
        yield Variant(
            title=f"{result} of {desc} triples",
            task=f"Return {what} such that xs[i], xs[i + 1], xs[i + 2] is {desc} "
                 f"(xs[i] {op1} xs[i + 1] {op2} xs[i + 2]).",
            entry_point=name,
            reference=code('''
                def $name(xs):
                $init    for i in range(len(xs) - 2):
                        if xs[i] $op1 xs[i + 1] $op2 xs[i + 2]:
                            $step
                    return $ret
            ''', name=name, init=init_ref, op1=op1, op2=op2, step=body_ref[0], ret=body_ref[2]),
            gold=code('''
                fn $name(xs: list[int]) -> int:
                $init    for i in range(0, len(xs) - 3):
                        if xs[i] $op1 xs[i + 1] and xs[i + 1] $op2 xs[i + 2]:
                            $step
                    return $ret
            ''', name=name, init=init_gold, op1=op1, op2=op2, step=body_ref[0], ret=body_ref[2]),
            # [a, b] with `a op1 b` true: a closed range visits one window too many and
            # reads past the end, so the P4-12 habit fails here.
            tests=[[[]], [_satisfying(op1)], [[1, 2, 3]], [[3, 3, 3]], [[1, 3, 2, 1, 2]], [[4, 4] + _satisfying(op1)]]
                  + [[[rng.randint(0, 4) for _ in range(rng.randint(3, 9))]] for _ in range(3)],
            params={"ops": [op1, op2], "result": result},
        )
