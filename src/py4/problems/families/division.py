"""Families targeting P4-23: integer `//` and `%` truncate toward zero in Python-4.

References rely on Python 3's floor semantics with negative operands; the tasks state
the floor/wrap-around behaviour and the gold restores it explicitly.
"""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import choose

_CYCLES = {24: ("hour", "hours"), 7: ("weekday", "days"), 12: ("month index", "months"), 60: ("minute", "minutes"),
           26: ("letter index", "steps"), 360: ("compass heading", "degrees")}


@family("wrap_around", "arithmetic", ["P4-23"], difficulty=1)
def wrap_around(rng):
    """Move around a cycle by possibly negative offsets; positions stay in 0 .. m-1."""
    while True:
        m, (unit, steps) = choose(rng, _CYCLES)
        shape = rng.choice(["final", "trail", "peak"])
        name = rng.choice(["wrap", "cycle_position", "rotate_dial", "clock_walk"])
        what = {"final": "the final position", "trail": "the list of positions after each move",
                "peak": "the largest position held at any time (start included)"}[shape]
        init = {"final": "", "trail": "trail = []", "peak": "peak = pos"}[shape]
        track = {"final": "", "trail": "trail.append(pos)", "peak": "peak = max(peak, pos)"}[shape]
        ret = {"final": "pos", "trail": "trail", "peak": "peak"}[shape]
        rtype = "list[int]" if shape == "trail" else "int"
        yield Variant(
            title=f"Walk a {m}-cycle of {unit}s: {shape}",
            task=f"A {unit} runs over 0 .. {m - 1} and wraps around. Starting at start, apply each offset of moves "
                 f"(negative offsets go backwards, possibly by more than {m} {steps}) and return {what}. Positions are "
                 f"always in 0 .. {m - 1}.",
            entry_point=name,
            reference=code('''
                def $name(start, moves):
                    pos = start % $m
                    $init
                    for d in moves:
                        pos = (pos + d) % $m
                        $track
                    return $ret
            ''', name=name, m=m, init=init, track=track, ret=ret),
            gold=code('''
                fn $name(start: int, moves: list[int]) -> $rtype:
                    let pos = (start % $m + $m) % $m
                    $init
                    for d in moves:
                        pos = ((pos + d) % $m + $m) % $m
                        $track
                    return $ret
            ''', name=name, m=m, init=("let " + init) if init else "", track=track, ret=ret, rtype=rtype),
            tests=[[0, []], [-1, [0]], [3, [-5, -m - 2]], [m - 1, [1, -1, -m]]]
                  + [[rng.randint(-m, m), [rng.randint(-2 * m, 2 * m) for _ in range(rng.randint(1, 5))]]
                     for _ in range(4)],
            params={"m": m, "shape": shape},
        )


@family("floor_buckets", "arithmetic", ["P4-23"], difficulty=2)
def floor_buckets(rng):
    """Assign values (including negatives) to buckets of a fixed width by floor division."""
    while True:
        width = rng.choice([2, 3, 5, 10, 4])
        shape = rng.choice(["labels", "counts", "offsets"])
        name = rng.choice(["bucket", "bin_values", "histogram_bins", "band_index"])
        what = {"labels": "the list of bucket numbers, one per value",
                "counts": "a dict mapping each bucket number (as a string) to how many values fall in it",
                "offsets": "the list of each value's offset inside its bucket (value - bucket * width, in 0 .. "
                           "width-1)"}[shape]
        body_ref = {"labels": f"[x // {width} for x in xs]",
                    "counts": None, "offsets": f"[x % {width} for x in xs]"}[shape]
        body_gold = {"labels": f"[floor_div(x, {width}) for x in xs]", "counts": None,
                     "offsets": f"[x - floor_div(x, {width}) * {width} for x in xs]"}[shape]
        if shape == "counts":
            ref = code(f'''
                def {name}(xs):
                    counts = {{}}
                    for x in xs:
                        key = str(x // {width})
                        counts[key] = counts.get(key, 0) + 1
                    return counts
            ''')
            gold_main = code(f'''
                fn {name}(xs: list[int]) -> dict[str, int]:
                    let counts = {{:}}
                    for x in xs:
                        let key = str(floor_div(x, {width}))
                        counts[key] = counts.get(key, 0) + 1
                    return counts
            ''')
        else:
            ref = code(f"def {name}(xs):\n    return {body_ref}\n")
            gold_main = code(f"fn {name}(xs: list[int]) -> list[int]:\n    return {body_gold}\n")
        helper = code('''
            fn floor_div(a: int, b: int) -> int:
                let q = a // b
                if a % b != 0 and (a < 0) != (b < 0):
                    q -= 1
                return q
        ''')
        yield Variant(
            title=f"Buckets of width {width}: {shape}",
            task=f"Bucket number of a value x is the floor of x / {width} (so -1 is in bucket -1 and -{width} in "
                 f"bucket -1). Return {what}.",
            entry_point=name,
            reference=ref,
            gold=helper + "\n\n" + gold_main,
            tests=[[[]], [[0, -1, 1]], [[-width, width, -width - 1]]]
                  + [[[rng.randint(-25, 25) for _ in range(rng.randint(1, 7))]] for _ in range(5)],
            rules=("P4-23", "P4-15") if shape == "counts" else ("P4-23",),
            params={"width": width, "shape": shape},
        )


@family("caesar_shift", "strings", ["P4-23", "P4-18"], difficulty=2)
def caesar_shift(rng):
    """Shift letters around the alphabet by a possibly negative amount."""
    while True:
        case = rng.choice(["lower", "both"])
        extra = rng.choice(["keep", "drop"])
        name = rng.choice(["caesar", "shift_letters", "rotate_text", "cipher"])
        up = ("\n        elif c.isupper():\n            out.append(chr((ord(c) - 65 + k) % 26 + 65))"
              if case == "both" else "")
        up_gold = ("\n        else if c.isupper():\n"
                   "            out.append(chr(((ord(c) - 65 + k) % 26 + 26) % 26 + 65))" if case == "both" else "")
        other = "out.append(c)" if extra == "keep" else "pass"
        yield Variant(
            title=f"Caesar shift ({case} case, {extra} others)",
            task=f"Shift every {'lower-case' if case == 'lower' else 'lower- and upper-case'} ASCII letter of text by "
                 "k places around its alphabet (k may be negative or larger than 26); "
                 f"{'keep' if extra == 'keep' else 'remove'} every other character. Return the result.",
            entry_point=name,
            reference=code('''
                def $name(text, k):
                    out = []
                    for c in text:
                        if c.islower():
                            out.append(chr((ord(c) - 97 + k) % 26 + 97))$up
                        else:
                            $other
                    return "".join(out)
            ''', name=name, up=up, other=other),
            gold=code('''
                fn $name(text: str, k: int) -> str:
                    let out = []
                    for c in text:
                        if c.islower():
                            out.append(chr(((ord(c) - 97 + k) % 26 + 26) % 26 + 97))$up
                        else:
                            $other
                    return out.join("")
            ''', name=name, up=up_gold, other=other),
            tests=[["", 3], ["abc", -1], ["Hello, World", -29], ["xyz", 3]]
                  + [[rng.choice(["attack at dawn", "Zebra-42", "python four", "Mixed CASE text"]),
                      rng.randint(-60, 60)]
                     for _ in range(4)],
            params={"case": case, "extra": extra},
        )
