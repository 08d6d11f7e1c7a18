"""Small-algorithm families: prefix sums, Pascal rows, balance points (P4-12/P4-13),
two-sum (P4-19/P4-15), Euclid and durations with negative numbers (P4-23), anagram groups
(P4-15/16/18), quiz scoring (P4-21), rounded grades (P4-22)."""

from __future__ import annotations

from py4.problems.family import Variant, code, family

_FLOOR_HELPERS = '''
fn floor_div(a: int, b: int) -> int:
    let q = a // b
    if a % b != 0 and (a < 0) != (b < 0):
        q -= 1
    return q


fn floor_mod(a: int, b: int) -> int:
    return a - b * floor_div(a, b)
'''.strip("\n")


@family("prefix_sums", "lists", ["P4-12"], difficulty=2)
def prefix_sums(rng):
    """Answer range-sum queries with a prefix-sum table."""
    while True:
        inclusive = rng.choice([True, False])
        name = rng.choice(["range_sums", "query_sums", "interval_totals", "prefix_queries"])
        yield Variant(
            title=f"Range sums with prefix sums ({'inclusive' if inclusive else 'half-open'} queries)",
            task=f"queries is a list of [a, b] with 0 <= a <= b{' < len(xs)' if inclusive else ' <= len(xs)'}. Return, "
                 f"for each query, the sum of xs[{'a..b inclusive' if inclusive else 'a..b-1 (b excluded)'}], using a "
                 "table of prefix sums.",
            entry_point=name,
            reference=code('''
                def $name(xs, queries):
                    pre = [0]
                    for i in range(len(xs)):
                        pre.append(pre[i] + xs[i])
                    return [pre[b$plus] - pre[a] for a, b in queries]
            ''', name=name, plus=" + 1" if inclusive else ""),
            gold=code('''
                fn $name(xs: list[int], queries: list[list[int]]) -> list[int]:
                    let pre = [0]
                    for i in indices(xs):
                        pre.append(pre[i] + xs[i])
                    return [pre[b$plus] - pre[a] for a, b in queries]
            ''', name=name, plus=" + 1" if inclusive else ""),
            tests=[[[], []], [[5], [[0, 0]]], [[1, 2, 3], [[0, 2], [1, 1]]]]
                  + [[(xs := [rng.randint(-9, 9) for _ in range(rng.randint(1, 7))]),
                      [sorted([rng.randint(0, len(xs) - (1 if inclusive else 0)) for _ in range(2)]) for _ in range(3)]]
                     for _ in range(5)],
            params={"inclusive": inclusive},
        )


@family("pascal_rows", "arithmetic", ["P4-12"], difficulty=2)
def pascal_rows(rng):
    """Rows of Pascal's triangle (optionally modulo m) built from the previous row."""
    while True:
        mod = rng.choice([None, 2, 3, 10])
        shape = rng.choice(["row", "sum", "triangle"])
        name = rng.choice(["pascal", "binomial_row", "pascal_row", "triangle_row"])
        add = "row[i] + row[i + 1]" if mod is None else f"(row[i] + row[i + 1]) % {mod}"
        ret = {"row": "row", "sum": "sum(row)", "triangle": "rows"}[shape]
        rtype = {"row": "list[int]", "sum": "int", "triangle": "list[list[int]]"}[shape]
        what = {"row": "row n", "sum": "the sum of row n", "triangle": "rows 0 .. n"}[shape]
        yield Variant(
            title=f"Pascal triangle{'' if mod is None else f' mod {mod}'}: {shape}",
            task="Row 0 of Pascal's triangle is [1]; each next row is 1, the sums of neighbouring entries of the "
                 f"previous row{'' if mod is None else f' taken modulo {mod}'}, then 1. Return {what} (n >= 0).",
            entry_point=name,
            reference=code('''
                def $name(n):
                    row, rows = [1], [[1]]
                    for _ in range(n):
                        row = [1] + [$add for i in range(len(row) - 1)] + [1]
                        rows.append(row)
                    return $ret
            ''', name=name, add=add, ret=ret),
            gold=code('''
                fn $name(n: int) -> $rtype:
                    let row = [1]
                    let rows = [[1]]
                    for _ in range(1, n):
                        row = [1] + [$add for i in range(0, len(row) - 2)] + [1]
                        rows.append(row)
                    return $ret
            ''', name=name, add=add, ret=ret, rtype=rtype),
            tests=[[0], [1], [2], [5]] + [[rng.randint(3, 9)] for _ in range(3)],
            params={"mod": mod, "shape": shape},
        )


@family("balance_point", "lists", ["P4-13"], difficulty=2)
def balance_point(rng):
    """Find where a list splits into two parts with equal (or closest) sums.

    The reference's `range(len(xs) + 1)` also breaks P4-12, but harmlessly (one more k
    with an empty tail): only P4-13 is targeted."""
    while True:
        shape = rng.choice(["first_equal", "all_equal", "min_gap"])
        name = rng.choice(["balance_point", "split_index", "equal_halves", "pivot"])
        ref_body, what, rtype = {
            "first_equal": ("for k in range(len(xs) + 1):\n        if sum(xs[:k]) == sum(xs[k:]):\n"
                            "            return k\n    return -1",
                            "the smallest k such that the first k items and the rest have equal sums (-1 if none)",
                            "int"),
            "all_equal": ("return [k for k in range(len(xs) + 1) if sum(xs[:k]) == sum(xs[k:])]",
                          "every k (ascending) such that the first k items and the rest have equal sums", "list[int]"),
            "min_gap": ("return min(abs(sum(xs[:k]) - sum(xs[k:])) for k in range(len(xs) + 1))",
                        "the smallest possible absolute difference between the sums of the first k items and the rest",
                        "int"),
        }[shape]
        gold_body = ref_body.replace("range(len(xs) + 1)", "range(0, len(xs))").replace("xs[:k]", "xs[0:k - 1]")
        yield Variant(
            title=f"Balance point of a list ({shape})",
            task=f"For k = 0 .. len(xs), split xs into its first k items and the rest. Return {what}.",
            entry_point=name,
            reference=f"def {name}(xs):\n    {ref_body}\n",
            gold=f"fn {name}(xs: list[int]) -> {rtype}:\n    {gold_body}\n",
            tests=[[[]], [[0]], [[1, 1]], [[2, 1, 1]], [[1, -1, 1, -1]]]
                  + [[[rng.randint(-3, 5) for _ in range(rng.randint(1, 6))]]
                     for _ in range(3)],
            params={"shape": shape},
        )


@family("two_sum", "dicts", ["P4-19", "P4-15"], difficulty=2)
def two_sum(rng):
    """Find index pairs summing to a target with a dict of positions seen so far."""
    while True:
        shape = rng.choice(["first", "all"])
        name = rng.choice(["two_sum", "pair_with_sum", "find_pair", "sum_pairs"])
        on_hit = {"first": "return [seen[target - x], i]", "all": "found.append([seen[target - x], i])",
                  "count": "found += 1"}[shape]
        on_hit_gold = on_hit.replace(", i]", ", n - 1]")
        init = {"first": "", "all": "found = []", "count": "found = 0"}[shape]
        ret = {"first": "[]", "all": "found", "count": "found"}[shape]
        rtype = {"first": "list[int]", "all": "list[list[int]]", "count": "int"}[shape]
        what = {"first": "the first pair [i, j] (i < j, smallest j, then the latest i) with xs[i] + xs[j] == target, "
                         "or [] if none",
                "all": "for each j, the pair [i, j] with the latest i < j such that xs[i] + xs[j] == target",
                "count": "for how many positions j some earlier i has xs[i] + xs[j] == target"}[shape]
        yield Variant(
            title=f"Two-sum with a position dict ({shape})",
            task=f"Scan xs left to right, remembering the latest 0-based position of each value. Return {what}.",
            entry_point=name,
            reference=code('''
                def $name(xs, target):
                    seen = {}
                    $init
                    for i, x in enumerate(xs):
                        if target - x in seen:
                            $hit
                        seen[x] = i
                    return $ret
            ''', name=name, init=init, hit=on_hit, ret=ret),
            gold=code('''
                fn $name(xs: list[int], target: int) -> $rtype:
                    let seen = {:}
                    $init
                    for n, x in enumerate(xs):
                        if target - x in seen:
                            $hit
                        seen[x] = n - 1
                    return $ret
            ''', name=name, init=("let " + init) if init else "", hit=on_hit_gold, ret=ret, rtype=rtype),
            tests=[[[], 0], [[1, 2], 3], [[3, 3, 3], 6]]
                  + [[[rng.randint(-5, 9) for _ in range(rng.randint(2, 8))], rng.randint(-3, 12)]
                     for _ in range(5)],
            params={"shape": shape},
        )


@family("euclid_steps", "arithmetic", ["P4-23"], difficulty=2)
def euclid_steps(rng):
    """Run Euclid's remainder sequence with Python 3's floor modulo on signed inputs."""
    while True:
        shape = rng.choice(["steps", "remainders", "last"])
        name = rng.choice(["euclid", "remainder_chain", "gcd_trace", "euclid_steps"])
        init, step, ret, rtype = {
            "steps": ("steps = 0", "steps += 1", "steps", "int"),
            "remainders": ("seq = []", "seq.append(b)", "seq", "list[int]"),
            "last": ("", "", "a", "int"),
        }[shape]
        what = {"steps": "how many replacements happen",
                "remainders": "the list of the successive remainders b (excluding the final 0)",
                "last": "the final value of a"}[shape]
        yield Variant(
            title=f"Euclid's algorithm on signed integers ({shape})",
            task="Starting from (a, b), repeat (a, b) = (b, a % b) while b != 0, where % is the floor modulo (the "
                 f"result has the sign of the divisor, as in Python 3). Return {what}.",
            entry_point=name,
            reference=code('''
                def $name(a, b):
                    $init
                    while b != 0:
                        a, b = b, a % b
                        $step
                    return $ret
            ''', name=name, init=init or "pass", step=step or "pass", ret=ret),
            gold=_FLOOR_HELPERS + "\n\n\n" + code('''
                fn $name(a: int, b: int) -> $rtype:
                    $init
                    while b != 0:
                        a, b = b, floor_mod(a, b)
                        $step
                    return $ret
            ''', name=name, init=("let " + init) if init else "pass", step=step or "pass", ret=ret, rtype=rtype),
            tests=[[12, 8], [-12, 8], [12, -8], [7, 0], [-21, -6]]
                  + [[rng.randint(-60, 60), rng.choice([-1, 1]) * rng.randint(1, 25)]
                     for _ in range(3)],
            params={"shape": shape},
        )


@family("split_duration", "arithmetic", ["P4-23"], difficulty=2)
def split_duration(rng):
    """Split a signed number of seconds into larger units with floor division (divmod)."""
    while True:
        units = rng.choice([["m", "s"], ["h", "m", "s"], ["d", "h", "m", "s"]])
        shape = rng.choice(["list", "text"])
        name = rng.choice(["split_seconds", "duration_parts", "to_units", "break_down"])
        # divisors from the smallest unit up: s -> m (60), m -> h (60), h -> d (24)
        divisors = [60, 60, 24][: len(units) - 1]
        ref_steps = "\n".join(f"    rest, part{i} = divmod(rest, {d})" for i, d in enumerate(divisors))
        gold_steps = "\n".join(f"    let part{i} = floor_mod(rest, {d})\n    rest = floor_div(rest, {d})"
                               for i, d in enumerate(divisors))
        parts = ["rest"] + [f"part{i}" for i in reversed(range(len(divisors)))]
        ret_list = "[" + ", ".join(parts) + "]"
        ret_text = " + ' ' + ".join(f"str({p}) + '{u}'" for p, u in zip(parts, units, strict=True))
        ret = ret_list if shape == "list" else ret_text
        returned = ("the list of parts, largest unit first" if shape == "list"
                    else "the text of the parts, each followed by its unit letter, separated by spaces")
        yield Variant(
            title=f"Split signed seconds into {'/'.join(units)} ({shape})",
            task=f"Write seconds (possibly negative) as {' '.join(units)} using floor division from the smallest unit "
                 "up (divmod semantics of Python 3: every part but the first lies in its normal range). Return "
                 f"{returned}.",
            entry_point=name,
            reference=f"def {name}(seconds):\n    rest = seconds\n{ref_steps}\n    return {ret}\n",
            gold=_FLOOR_HELPERS + "\n\n\n"
                 + f"fn {name}(seconds: int) -> {'list[int]' if shape == 'list' else 'str'}:\n"
                 f"    let rest = seconds\n{gold_steps}\n    return {ret}\n",
            tests=[[0], [59], [-1], [3661], [-3661], [-90000]] + [[rng.randint(-200000, 200000)] for _ in range(2)],
            params={"units": units, "shape": shape},
        )


@family("anagram_groups", "dicts", ["P4-15", "P4-16", "P4-18"], difficulty=2)
def anagram_groups(rng):
    """Group words by their sorted letters and report the groups with several members."""
    while True:
        min_size = rng.choice([1, 2])
        shape = rng.choice(["groups", "count", "largest"])
        name = rng.choice(["anagram_groups", "group_anagrams", "same_letters", "anagram_sets"])
        ret = {"groups": "found", "count": "len(found)", "largest": "max(found, key=len, default=[])"}[shape]
        rtype = {"groups": "list[list[str]]", "count": "int", "largest": "list[str]"}[shape]
        what = {"groups": "those groups, in order of their first word", "count": "how many such groups there are",
                "largest": "the largest such group (the first on ties; [] if none)"}[shape]
        pool = ["listen", "silent", "enlist", "tea", "eat", "ate", "tan", "nat", "bat", "tab", "cat", "act", "dog"]
        yield Variant(
            title=f"Anagram groups of size >= {min_size} ({shape})",
            task="Group the words of text (split on whitespace, duplicates kept) by their letters sorted "
                 f"alphabetically; consider the groups with at least {min_size} words (words in order of appearance). "
                 f"Return {what}.",
            entry_point=name,
            reference=code('''
                def $name(text):
                    groups = {}
                    for w in text.split():
                        groups.setdefault("".join(sorted(w)), []).append(w)
                    found = [groups[k] for k in groups if len(groups[k]) >= $m]
                    return $ret
            ''', name=name, m=min_size, ret=ret),
            gold=code('''
                fn $name(text: str) -> $rtype:
                    let groups = {:}
                    for w in text.split():
                        groups.setdefault(sorted(w).join(""), []).append(w)
                    let found = [members for key, members in groups if len(members) >= $m]
                    return $ret
            ''', name=name, m=min_size, ret=ret, rtype=rtype),
            tests=[[""], ["tea"], ["tea eat dog ate"]]
                  + [[" ".join(rng.choice(pool) for _ in range(rng.randint(2, 8)))] for _ in range(5)],
            params={"min_size": min_size, "shape": shape},
        )


@family("quiz_score", "counting", ["P4-21", "P4-12"], difficulty=1)
def quiz_score(rng):
    """Score answers against a key by summing comparisons (booleans) per position."""
    while True:
        shape = rng.choice(["score", "percent", "per_student"])
        fold = rng.choice([False, True])
        name = rng.choice(["score_quiz", "grade_answers", "count_correct", "mark"])
        cmp = "answers[i].lower() == key[i].lower()" if fold else "answers[i] == key[i]"
        body_ref = {"score": f"sum({cmp} for i in range(len(key)))",
                    "percent": f"100 * sum({cmp} for i in range(len(key))) // max(len(key), 1)",
                    "per_student": f"[sum({cmp.replace('answers', 'a')} for i in range(len(key))) for a in "
                                   "sheets]"}[shape]
        body_gold = body_ref.replace("sum(", "count(").replace("range(len(key))", "indices(key)")
        arg = "sheets" if shape == "per_student" else "answers"
        atype = "list[list[str]]" if shape == "per_student" else "list[str]"
        rtype = "list[int]" if shape == "per_student" else "int"
        what = {"score": "how many answers are correct", "percent": "100 * correct // len(key) (0 for an empty key)",
                "per_student": "for each answer sheet, how many answers are correct"}[shape]
        sheet = lambda n: [rng.choice("abcdABCD" if fold else "abcd") for _ in range(n)]
        yield Variant(
            title=f"Quiz scoring ({shape}{', any case' if fold else ''})",
            task="key lists the correct answers; answers at the same position are "
                 f"compared{' ignoring case' if fold else ''}. Every answer list is as long as key. Return {what}.",
            entry_point=name,
            reference=f"def {name}({arg}, key):\n    return {body_ref}\n",
            gold=f"fn {name}({arg}: {atype}, key: list[str]) -> {rtype}:\n    return {body_gold}\n",
            tests=([[[], []]] + [[[sheet(k) for _ in range(rng.randint(1, 3))], sheet(k)] for k in (1, 3, 4, 5, 2)])
                  if shape == "per_student"
                  else ([[[], []]] + [[sheet(k), sheet(k)] for k in (1, 3, 4, 5, 6, 2)]),
            params={"shape": shape, "fold": fold},
        )


@family("rounded_grades", "statistics", ["P4-22"], difficulty=2)
def rounded_grades(rng):
    """Average each student's marks, round (ties to even), then map to a label."""
    while True:
        cut = rng.choice([5, 7, 9])  # odd: a mean of cut - 0.5 rounds to different sides of the cut
        labels = rng.choice([("pass", "fail"), ("ok", "retake"), ("P", "F")])
        shape = rng.choice(["labels", "rounded", "passes"])
        name = rng.choice(["final_grades", "round_marks", "grade_students", "report_cards"])
        ref_body = {"labels": f"[{labels[0]!r} if round(sum(m) / len(m)) >= {cut} else {labels[1]!r} for m in marks]",
                    "rounded": "[round(sum(m) / len(m)) for m in marks]",
                    "passes": f"len([m for m in marks if round(sum(m) / len(m)) >= {cut}])"}[shape]
        gold_body = ref_body.replace("round(", "half_even(")
        rtype = {"labels": "list[str]", "rounded": "list[int]", "passes": "int"}[shape]
        what = {"labels": f"for each student {labels[0]!r} when the rounded mean is at least {cut}, else {labels[1]!r}",
                "rounded": "the list of rounded means",
                "passes": f"how many students have a rounded mean of at least {cut}"}[shape]
        yield Variant(
            title=f"Rounded mean marks, cut {cut} ({shape})",
            task="marks holds one non-empty list of integer marks per student. A student's mark is the mean rounded to "
                 f"the nearest integer, exact ties going to the even neighbour (4.5 -> 4, 5.5 -> 6). Return {what}.",
            entry_point=name,
            reference=f"def {name}(marks):\n    return {ref_body}\n",
            gold=code('''
                fn half_even(x: float) -> int:
                    let r = round(x)
                    if abs(x - r) == 0.5 and r % 2 != 0:
                        r = r - 1 if r > 0 else r + 1
                    return r
            ''') + f"\n\nfn {name}(marks: list[list[int]]) -> {rtype}:\n    return {gold_body}\n",
            # means 4.5 / 6.5 / 2.5 tie on an even floor: 4 vs 5, 6 vs 7, 2 vs 3
            tests=[[[]], [[[4, 5]]], [[[6, 7], [cut - 1, cut]]], [[[2, 3], [9], [cut, cut - 1]]]]
                  + [[[[rng.randint(0, 10) for _ in range(rng.randint(1, 4))] for _ in range(rng.randint(1, 4))]]
                     for _ in range(4)],
            params={"cut": cut, "labels": labels, "shape": shape},
        )
