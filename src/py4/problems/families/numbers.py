"""Number-flavoured families: clocks (P4-23), percentages (P4-22), optional bounds (P4-27),
countdowns (P4-12), statistics (P4-10), accounts (P4-07)."""

from __future__ import annotations

from py4.problems.family import Variant, code, family

_DAY = 24 * 60


@family("wall_clock", "arithmetic", ["P4-23", "P4-08"], difficulty=2)
def wall_clock(rng):
    """Minutes from a reference midnight (possibly negative) -> wall-clock text."""
    while True:
        style = rng.choice(["HH:MM", "H:MM", "HHhMM", "HH.MM"])
        start = rng.choice([0, 60, 8 * 60, 12 * 60 + 30])
        shape = rng.choice(["each", "latest"])
        name = rng.choice(["clock_times", "wall_time", "to_clock", "format_offsets"])
        fmt = {"HH:MM": "{h:02d}:{m:02d}", "H:MM": "{h}:{m:02d}", "HHhMM": "{h:02d}h{m:02d}",
               "HH.MM": "{h:02d}.{m:02d}"}[style]
        ret_ref = "out" if shape == "each" else "max(out) if out else ''"
        returned = ("the list of times" if shape == "each"
                    else "the lexicographically largest text (empty text for no offsets)")
        yield Variant(
            title=f"Wall-clock {style} after minute offsets from {start // 60:02d}:{start % 60:02d} ({shape})",
            task=f"A clock shows {start // 60:02d}:{start % 60:02d} at offset 0. For each offset (in minutes, possibly "
                 f"negative or beyond a day) compute the time the clock shows, formatted as {style!r} (Python format "
                 f"{fmt!r} with h the hour 0..23 and m the minute). Return {returned}.",
            entry_point=name,
            reference=code('''
                def $name(offsets):
                    out = []
                    for d in offsets:
                        t = ($start + d) % $day
                        h, m = t // 60, t % 60
                        out.append(f"$fmt")
                    return $ret
            ''', name=name, start=start, day=_DAY, fmt=fmt, ret=ret_ref),
            gold=code('''
                fn $name(offsets: list[int]) -> $rtype:
                    let out = []
                    for d in offsets:
                        let t = (($start + d) % $day + $day) % $day
                        let h, m = t // 60, t % 60
                        out.append(i"$fmt")
                    return $ret
            ''', name=name, start=start, day=_DAY, fmt=fmt, ret=ret_ref,
                      rtype="list[str]" if shape == "each" else "str"),
            tests=[[[]], [[0, -1]], [[-_DAY - 61, _DAY + 5]], [[-start - 1]]]
                  + [[[rng.randint(-3 * _DAY, 3 * _DAY) for _ in range(rng.randint(1, 4))]]
                     for _ in range(4)],
            params={"style": style, "start": start, "shape": shape},
        )


# counts whose shares are exact ties with an even floor, the largest share among them
# (so that "max" bites too): Python 3 and Python-4 round these differently.
_TIES = {10: [[1, 3], [17, 3], [3, 17, 0]], 100: [[1, 7], [5, 3], [1, 39]], 1000: [[1, 15], [13, 3], [3, 13]]}


@family("rounded_percentages", "statistics", ["P4-22"], difficulty=2)
def rounded_percentages(rng):
    """Integer percentages of a total, Python 3 rounding (ties to even)."""
    while True:
        scale = rng.choice([100, 1000, 10])
        shape = rng.choice(["list", "labels", "max"])
        name = rng.choice(["percentages", "shares", "as_percent", "proportions"])
        unit = {100: "percent", 1000: "per mille", 10: "tenths"}[scale]
        body_ref = {"list": f"[round({scale} * c / total) for c in counts]",
                    "labels": f"[str(round({scale} * c / total)) + '/{scale}' for c in counts]",
                    "max": f"max(round({scale} * c / total) for c in counts)"}[shape]
        body_gold = body_ref.replace("round(", "half_even(")
        rtype = {"list": "list[int]", "labels": "list[str]", "max": "int"}[shape]
        empty = {"list": "[]", "labels": "[]", "max": "0"}[shape]
        returned = ("the list" if shape == "list" else "the list of texts <share>/" + str(scale) if shape == "labels"
                    else "the largest share")
        yield Variant(
            title=f"Shares in {unit} ({shape})",
            task=f"counts are non-negative integers. Express each as a share of their total in {unit} "
                 f"({scale} * c / total), rounded to the nearest integer with exact ties going to the even neighbour. "
                 f"Return {returned}; return {empty} when the total is 0.",
            entry_point=name,
            reference=code('''
                def $name(counts):
                    total = sum(counts)
                    if total == 0:
                        return $empty
                    return $body
            ''', name=name, empty=empty, body=body_ref),
            gold=code('''
                fn half_even(x: float) -> int:
                    let r = round(x)
                    if abs(x - r) == 0.5 and r % 2 != 0:
                        r = r - 1 if r > 0 else r + 1
                    return r


                fn $name(counts: list[int]) -> $rtype:
                    let total = sum(counts)
                    if total == 0:
                        return $empty
                    return $body
            ''', name=name, empty=empty, body=body_gold, rtype=rtype),
            # 1 of 8 -> 12.5 %, 1 of 40 -> 2.5 %, 3 of 8 and 5 of 8 -> 37.5 / 62.5 ...: ties on purpose
            tests=[[[]], [[0, 0]], [[1, 1, 2]]] + [[ties] for ties in _TIES[scale]]
                  + [[[rng.randint(0, 9) for _ in range(rng.randint(1, 5))]] for _ in range(3)],
            params={"scale": scale, "shape": shape},
        )


@family("optional_bounds", "lists", ["P4-27"], difficulty=1)
def optional_bounds(rng):
    """Clamp or filter with optional bounds that default to None (compared with == None)."""
    while True:
        shape = rng.choice(["clamp", "sum", "spread"])
        name = rng.choice(["clip_values", "bounded", "limit", "within_limits"])
        # (no `low <= x and x <= high` in the gold: that pair exercises P4-11, a held-out rule)
        body_ref = body_gold = {"clamp": "[min(max(x, low), high) for x in xs]",
                                "sum": "sum(min(max(x, low), high) for x in xs)",
                                "spread": "max(min(max(x, low), high) for x in xs) - min(min(max(x, low), high) for x "
                                          "in xs)"}[shape]
        what = {"clamp": "xs with every value clamped into [lo, hi]",
                "sum": "the sum of the values of xs clamped into [lo, hi]",
                "spread": "the largest minus the smallest of the values of xs clamped into [lo, hi]"}[shape]
        yield Variant(
            title=f"Optional bounds: {shape}",
            task="lo and hi are optional (None when absent): a missing lo means the smallest value of xs, a missing "
                 f"hi the largest. Return {what}. xs is non-empty.",
            entry_point=name,
            reference=code('''
                def $name(xs, lo=None, hi=None):
                    low = min(xs) if lo == None else lo
                    high = max(xs) if hi == None else hi
                    return $body
            ''', name=name, body=body_ref),
            gold=code('''
                fn $name(xs: list[int], lo: int | nil = nil, hi: int | nil = nil) -> $rtype:
                    let low = min(xs) if lo is nil else lo
                    let high = max(xs) if hi is nil else hi
                    return $body
            ''', name=name, body=body_gold, rtype="list[int]" if shape == "clamp" else "int"),
            tests=[[[3]], [[5, -2, 9], 0], [[5, -2, 9], None, 4], [[1, 2, 3], 2, 2]]
                  + [[[rng.randint(-9, 9) for _ in range(rng.randint(1, 6))], rng.choice([None, rng.randint(-5, 0)]),
                      rng.choice([None, rng.randint(1, 6)])] for _ in range(4)],
            params={"shape": shape},
        )


@family("countdown", "lists", ["P4-12"], difficulty=1)
def countdown(rng):
    """Count down from n with a negative step (a closed range stops at the end value)."""
    while True:
        stop, step = rng.choice([0, 1]), rng.choice([1, 2, 3])
        shape = rng.choice(["list", "text", "sum"])
        name = rng.choice(["countdown", "count_down", "descending", "launch_sequence"])
        # "sum" adds i * i + 1 per value: an extra value (even 0) always changes it
        body = {"list": "[i for i in RANGE]", "text": "' '.join(str(i) for i in RANGE)",
                "sum": "sum(i * i + 1 for i in RANGE)"}[shape]
        gold_body = {"list": "[i for i in RANGE]", "text": "[str(i) for i in RANGE].join(' ')",
                     "sum": "sum(i * i + 1 for i in RANGE)"}[shape]
        rules = ("P4-12", "P4-18") if shape == "text" else ("P4-12",)
        returned = ("the list of" if shape == "list" else "the space-separated text of" if shape == "text"
                    else "the sum of i * i + 1 over")
        yield Variant(
            title=f"Count down from n while above {stop}, step {step} ({shape})",
            task=f"Return {returned} n, n - {step}, n - {2 * step}, ... while the value is greater than {stop}.",
            entry_point=name,
            reference=code('''
                def $name(n):
                    return $body
            ''', name=name, body=body.replace("RANGE", f"range(n, {stop}, -{step})")),
            gold=code('''
                fn $name(n: int) -> $rtype:
                    return $body
            ''', name=name, body=gold_body.replace("RANGE", f"range(n, {stop + 1}, -{step})"),
                      rtype={"list": "list[int]", "text": "str", "sum": "int"}[shape]),
            tests=[[stop], [stop + 1], [stop + step], [stop + step + 1]] + [[rng.randint(2, 30)] for _ in range(4)],
            rules=rules,
            params={"stop": stop, "step": step, "shape": shape},
        )


_STATS = [("statistics.median(xs)", "the median", "float"), ("statistics.mean(xs)", "the mean", "float"),
          ("statistics.mode(xs)", "the most common value (the first one seen on ties)", "int"),
          ("statistics.pstdev(xs)", "the population standard deviation", "float"),
          ("statistics.median_low(xs)", "the low median", "int"),
          ("statistics.median_high(xs)", "the high median", "int")]


@family("statistics_module", "statistics", ["P4-10"], difficulty=1)
def statistics_module(rng):
    """Summaries with the statistics module (imported with `use statistics`)."""
    while True:
        expr, desc, rtype = rng.choice(_STATS)
        per_row = rng.random() < 0.5
        style = rng.choice(["module", "from"])
        name = rng.choice(["summary_stat", "central_value", "row_stats", "describe"])
        fn = expr.split("(")[0].split(".")[1]
        imp, use, call = ("import statistics", "use statistics", expr) if style == "module" else \
            (f"from statistics import {fn}", f"from statistics use {fn}", f"{fn}(xs)")
        body = f"[{call.replace('xs', 'row')} for row in rows]" if per_row else call
        yield Variant(
            title=f"{desc} ({'per row' if per_row else 'one list'}, {style} import)",
            task=(f"rows is a list of non-empty integer lists; return, for each row, {desc} (Python's statistics.{fn})."
                  if per_row else f"Return {desc} of the non-empty integer list xs (Python's statistics.{fn})."),
            entry_point=name,
            reference=code('''
                $imp

                def $name($arg):
                    return $body
            ''', imp=imp, name=name, arg="rows" if per_row else "xs", body=body),
            gold=code('''
                $use

                fn $name($arg: $atype) -> $rtype:
                    return $body
            ''', use=use, name=name, arg="rows" if per_row else "xs", body=body,
                      atype="list[list[int]]" if per_row else "list[int]",
                      rtype=f"list[{rtype}]" if per_row else rtype),
            tests=([[[[1], [1, 2], [3, 1, 2, 2]]]]
                   + [[[[rng.randint(0, 9) for _ in range(rng.randint(1, 5))] for _ in range(3)]]
                      for _ in range(5)]) if per_row else
                  ([[[4]], [[1, 2]], [[3, 1, 3, 2]]]
                   + [[[rng.randint(-5, 9) for _ in range(rng.randint(1, 7))]] for _ in range(5)]),
            tolerance=1e-9,
            params={"stat": fn, "per_row": per_row, "style": style},
        )


@family("account_ledger", "simulation", ["P4-07", "P4-06"], difficulty=2)
def account_ledger(rng):
    """Apply transactions; an invalid one throws inside a helper and is rejected by the caller."""
    while True:
        overdraft = rng.choice([0, 10, 50])
        fee = rng.choice([0, 1, 2])
        cost = "amount" if fee == 0 else f"amount - {fee}"  # what a withdrawal takes off
        report = rng.choice(["balance", "rejected", "both"])
        name = rng.choice(["run_ledger", "apply_transactions", "bank_day", "settle"])
        ret = {"balance": "balance", "rejected": "rejected", "both": "[balance, rejected]"}[report]
        rtype = {"balance": "int", "rejected": "int", "both": "list[int]"}[report]
        what = {"balance": "the final balance", "rejected": "how many transactions were rejected",
                "both": "[final balance, number of rejected transactions]"}[report]
        txs = lambda: [[rng.choice(["deposit", "withdraw", "withdraw", "bogus"]), rng.randint(-5, 60)]
                       for _ in range(rng.randint(1, 6))]
        yield Variant(
            title=f"Ledger with overdraft {overdraft}, fee {fee}: {report}",
            task="The balance starts at 0. Each transaction is [kind, amount]. 'deposit' adds amount; 'withdraw' "
                 f"subtracts {'amount' if fee == 0 else f'amount + {fee} (a fee)'} unless that would take the balance "
                 f"below {-overdraft}; any other kind, or a negative amount, is invalid. Invalid or refused "
                 f"transactions are rejected and change nothing. Return {what}.",
            entry_point=name,
            reference=code('''
                def apply(balance, kind, amount):
                    if amount < 0:
                        raise ValueError("negative amount")
                    if kind == "deposit":
                        return balance + amount
                    if kind == "withdraw":
                        if balance - $cost < -$overdraft:
                            raise ValueError("insufficient funds")
                        return balance - $cost
                    raise ValueError("unknown kind")

                def $name(transactions):
                    balance, rejected = 0, 0
                    for kind, amount in transactions:
                        try:
                            balance = apply(balance, kind, amount)
                        except ValueError:
                            rejected += 1
                    return $ret
            ''', cost=cost, overdraft=overdraft, name=name, ret=ret),
            gold=code('''
                fn apply(balance: int, kind: str, amount: int) -> int:
                    if amount < 0:
                        throw ValueError("negative amount")
                    if kind == "deposit":
                        return balance + amount
                    if kind == "withdraw":
                        if balance - $cost < -$overdraft:
                            throw ValueError("insufficient funds")
                        return balance - $cost
                    throw ValueError("unknown kind")

                fn $name(transactions: list[list]) -> $rtype:
                    let balance, rejected = 0, 0
                    for kind, amount in transactions:
                        try:
                            balance = apply(balance, kind, amount)
                        catch ValueError:
                            rejected += 1
                    return $ret
            ''', cost=cost, overdraft=overdraft, name=name, ret=ret, rtype=rtype),
            tests=[[[]], [[["deposit", 5], ["withdraw", 100]]], [[["bogus", 1], ["deposit", -3]]]]
                  + [[txs()] for _ in range(5)],
            params={"overdraft": overdraft, "fee": fee, "report": report},
        )
