"""Grid, sequence and geometry families: interleaving (P4-20), matrices and staircases
(P4-12), rounding to multiples (P4-22), circular access (P4-23), nearest points (P4-09),
last positions (P4-19), strided slices (P4-13), weighted scores (P4-26), vowel counts (P4-21)."""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import WORDS


@family("interleave_text", "strings", ["P4-20", "P4-18"], difficulty=1)
def interleave_text(rng):
    """Interleave the characters (or words) of two texts up to the shorter one."""
    while True:
        unit = rng.choice(["chars", "words"])
        glue = rng.choice(["", "-", " "]) if unit == "chars" else rng.choice([" ", "/", ","])
        name = rng.choice(["interleave", "weave", "zip_texts", "alternate_text"])
        a, b = ("s", "t") if unit == "chars" else ("s.split()", "t.split()")
        yield Variant(
            title=f"Interleave {unit} of two texts with {glue!r}",
            task=f"Pair the {'characters' if unit == 'chars' else 'words (split on whitespace)'} of s and t position "
                 "by position up to the shorter length; each pair contributes its s item then its t item. Return all "
                 f"contributed items joined by {glue!r}.",
            entry_point=name,
            reference=code('''
                def $name(s, t):
                    return $glue.join(x + $glue + y for x, y in zip($a, $b))
            ''', name=name, glue=repr(glue), a=a, b=b),
            gold=code('''
                fn $name(s: str, t: str) -> str:
                    return [x + $glue + y for x, y in zip_shortest($a, $b)].join($glue)
            ''', name=name, glue=repr(glue), a=a, b=b),
            tests=[["", "abc"], ["ab", "xyz"], ["one two", "1 2 3"]]
                  + [[" ".join(rng.sample(WORDS, rng.randint(1, 3))), " ".join(rng.sample(WORDS, rng.randint(1, 3)))]
                     for _ in range(5)],
            params={"unit": unit, "glue": glue},
        )


@family("matrix_turns", "grids", ["P4-12"], difficulty=2)
def matrix_turns(rng):
    """Rotate, transpose or read the diagonals of a square matrix with index loops."""
    while True:
        op = rng.choice(["rotate_cw", "rotate_ccw", "transpose", "diagonals"])
        name = rng.choice(["turn_matrix", "matrix_op", "square_transform", "grid_op"])
        expr_ref, expr_gold, what, rtype = {
            "rotate_cw": ("[[m[n - 1 - j][i] for j in range(n)] for i in range(n)]",
                          "[[m[n - 1 - j][i] for j in range(0, n - 1)] for i in range(0, n - 1)]",
                          "the matrix rotated a quarter turn clockwise", "list[list[int]]"),
            "rotate_ccw": ("[[m[j][n - 1 - i] for j in range(n)] for i in range(n)]",
                           "[[m[j][n - 1 - i] for j in range(0, n - 1)] for i in range(0, n - 1)]",
                           "the matrix rotated a quarter turn counter-clockwise", "list[list[int]]"),
            "transpose": ("[[m[j][i] for j in range(n)] for i in range(n)]",
                          "[[m[j][i] for j in range(0, n - 1)] for i in range(0, n - 1)]", "the transposed matrix",
                          "list[list[int]]"),
            "diagonals": ("[sum(m[i][i] for i in range(n)), sum(m[i][n - 1 - i] for i in range(n))]",
                          "[sum(m[i][i] for i in range(0, n - 1)), sum(m[i][n - 1 - i] for i in range(0, n - 1))]",
                          "[sum of the main diagonal, sum of the anti-diagonal]", "list[int]"),
        }[op]
        sq = lambda n: [[rng.randint(-5, 9) for _ in range(n)] for _ in range(n)]
        yield Variant(
            title=f"Square matrix: {op}",
            task=f"m is a square matrix (a list of n rows of n integers, n >= 0). Return {what}.",
            entry_point=name,
            reference=f"def {name}(m):\n    n = len(m)\n    return {expr_ref}\n",
            gold=f"fn {name}(m: list[list[int]]) -> {rtype}:\n    let n = len(m)\n    return {expr_gold}\n",
            tests=[[[]], [[[7]]], [sq(2)], [sq(3)], [sq(4)], [sq(3)]],
            params={"op": op},
        )


@family("staircase", "strings", ["P4-12", "P4-18"], difficulty=1)
def staircase(rng):
    """Draw a text staircase/pyramid of n rows."""
    while True:
        char = rng.choice(["#", "*", "+"])
        kind = rng.choice(["left", "right", "pyramid"])
        name = rng.choice(["staircase", "draw_steps", "pyramid", "text_stairs"])
        row = {"left": f"'{char}' * i", "right": f"' ' * (n - i) + '{char}' * i",
               "pyramid": f"' ' * (n - i) + '{char}' * (2 * i - 1)"}[kind]
        yield Variant(
            title=f"{kind} staircase of {char!r}",
            task="Return n rows (i = 1 .. n) joined by newlines, row i being "
                 f"{row.replace('i', 'i').replace('n', 'n')} (a Python expression); an empty string for n <= 0.",
            entry_point=name,
            reference=f"def {name}(n):\n    return '\\n'.join({row} for i in range(1, n + 1))\n",
            gold=f"fn {name}(n: int) -> str:\n    return [{row} for i in range(1, n)].join('\\n')\n",
            tests=[[0], [1], [2], [-3], [rng.randint(3, 6)]],
            params={"char": char, "kind": kind},
        )


@family("round_to_step", "arithmetic", ["P4-22"], difficulty=2)
def round_to_step(rng):
    """Round values to the nearest multiple of a step (ties to the even multiple)."""
    while True:
        step = rng.choice([2, 4, 6, 10])  # even: x = step * (2k + 0.5) is an integer tie
        shape = rng.choice(["list", "sum", "distinct"])
        name = rng.choice(["snap", "round_to_step", "quantize", "to_multiple"])
        ref = {"list": f"[round(x / {step}) * {step} for x in xs]",
               "sum": f"sum(round(x / {step}) * {step} for x in xs)",
               "distinct": f"sorted(set(round(x / {step}) * {step} for x in xs))"}[shape]
        gold = ref.replace("round(", "half_even(")
        rtype = "int" if shape == "sum" else "list[int]"
        ties = [step // 2 + k * 2 * step for k in range(-2, 3)]  # x / step = k*2 + 0.5: an even floor
        returned = "the list" if shape == "list" else "the sum" if shape == "sum" else "the sorted distinct results"
        yield Variant(
            title=f"Snap integers to multiples of {step} ({shape})",
            task=f"Replace every integer x of xs by the nearest multiple of {step}, exact ties going to the multiple "
                 f"m*{step} with m even (Python 3's round(x / {step}) * {step}). Return {returned}.",
            entry_point=name,
            reference=f"def {name}(xs):\n    return {ref}\n",
            gold=code('''
                fn half_even(x: float) -> int:
                    let r = round(x)
                    if abs(x - r) == 0.5 and r % 2 != 0:
                        r = r - 1 if r > 0 else r + 1
                    return r
            ''') + f"\n\nfn {name}(xs: list[int]) -> {rtype}:\n    return {gold}\n",
            tests=[[[]], [ties[2:3]], [ties]]
                  + [[[rng.randint(-30, 30) for _ in range(rng.randint(1, 6))]] for _ in range(4)],
            params={"step": step, "shape": shape},
        )


@family("circular_positions", "lists", ["P4-23"], difficulty=1)
def circular_positions(rng):
    """Positions on a circle of n slots after signed moves (returned as positions, not items)."""
    while True:
        shape = rng.choice(["positions", "pairs", "spread"])
        name = rng.choice(["ring_positions", "circular", "wrap_positions", "seat_after"])
        ref, gold, what, rtype = {
            "positions": ("[(start + d) % n for d in offsets]", "[((start + d) % n + n) % n for d in offsets]",
                          "the positions start + d wrapped into 0 .. n-1, one per offset d", "list[int]"),
            "pairs": ("[[(start + d) % n, seats[(start + d) % n]] for d in offsets]",
                      "[[((start + d) % n + n) % n, seats[((start + d) % n + n) % n]] for d in offsets]",
                      "for each offset d, [position, seats[position]] where position is start + d wrapped into 0 .. "
                      "n-1", "list[list]"),
            "spread": ("max((start + d) % n for d in offsets) - min((start + d) % n for d in offsets)",
                       "max(((start + d) % n + n) % n for d in offsets) - min(((start + d) % n + n) % n for d in "
                       "offsets)",
                       "the largest minus the smallest wrapped position over the offsets (offsets non-empty)", "int"),
        }[shape]
        yield Variant(
            title=f"Positions on a circle after signed moves ({shape})",
            task="seats lists n >= 1 names around a circle (position n is position 0 again). start and the offsets may "
                 f"be negative or larger than n. Return {what}.",
            entry_point=name,
            reference=f"def {name}(seats, start, offsets):\n    n = len(seats)\n    return {ref}\n",
            gold=f"fn {name}(seats: list[str], start: int, offsets: list[int]) -> {rtype}:\n    let n = len(seats)\n"
                 f"    return {gold}\n",
            tests=[[["a"], 0, [0]], [["a", "b", "c"], -1, [0, -4]], [["a", "b", "c", "d"], 2, [-3, 9]]]
                  + [[WORDS[:rng.randint(1, 6)], rng.randint(-8, 8), [rng.randint(-12, 12) for _ in range(3)]]
                     for _ in range(4)],
            params={"shape": shape},
        )


@family("nearest_point", "geometry", ["P4-09"], difficulty=2)
def nearest_point(rng):
    """Choose the nearest / farthest point with a key function."""
    while True:
        metric = rng.choice(["abs(p[0] - x) + abs(p[1] - y)", "(p[0] - x) ** 2 + (p[1] - y) ** 2",
                             "max(abs(p[0] - x), abs(p[1] - y))"])
        pick = rng.choice(["min", "max"])
        name = rng.choice(["nearest", "closest_point", "pick_point", "extreme_point"])
        mdesc = {"abs(p[0] - x) + abs(p[1] - y)": "Manhattan distance",
                 "(p[0] - x) ** 2 + (p[1] - y) ** 2": "squared Euclidean distance",
                 "max(abs(p[0] - x), abs(p[1] - y))": "Chebyshev distance"}[metric]
        yield Variant(
            title=f"{'Nearest' if pick == 'min' else 'Farthest'} point by {mdesc}",
            task="points is a non-empty list of [px, py]. Return the point with the "
                 f"{'smallest' if pick == 'min' else 'largest'} {mdesc} to (x, y); the first such point wins ties.",
            entry_point=name,
            reference=f"def {name}(points, x, y):\n    return {pick}(points, key=lambda p: {metric})\n",
            gold=f"fn {name}(points: list[list[int]], x: int, y: int) -> list[int]:\n"
                 f"    return {pick}(points, key=fun p: {metric})\n",
            tests=[[[[0, 0]], 5, 5], [[[1, 1], [-1, -1]], 0, 0]]
                  + [[[[rng.randint(-5, 5), rng.randint(-5, 5)] for _ in range(rng.randint(1, 5))],
                                                                    rng.randint(-3, 3), rng.randint(-3, 3)]
                     for _ in range(5)],
            params={"metric": metric, "pick": pick},
        )


@family("last_positions", "dicts", ["P4-19"], difficulty=1)
def last_positions(rng):
    """Map each character (or word) to its last / first 0-based position."""
    while True:
        unit = rng.choice(["chars", "words"])
        which = rng.choice(["last", "first"])
        name = rng.choice(["positions_of", "index_map", "where_is", "position_table"])
        seq = "s" if unit == "chars" else "s.split()"
        ref = (f"{{c: i for i, c in enumerate({seq})}}" if which == "last" else
               f"{{c: i for i, c in reversed(list(enumerate({seq})))}}")
        gold = (f"{{c: n - 1 for n, c in enumerate({seq})}}" if which == "last" else
                f"{{c: n - 1 for n, c in reversed(list(enumerate({seq})))}}")
        yield Variant(
            title=f"{which} position of each {unit[:-1]}",
            task="Return a dict mapping each "
                 f"{'character of s' if unit == 'chars' else 'word of s (split on whitespace)'} to its {which} 0-based "
                 "position.",
            entry_point=name,
            reference=f"def {name}(s):\n    return {ref}\n",
            gold=f"fn {name}(s: str) -> dict[str, int]:\n    return {gold}\n",
            tests=[[""], ["abca"], ["to be or not to be"]]
                  + [[" ".join(rng.choice(WORDS[:6]) for _ in range(rng.randint(1, 6)))] for _ in range(4)],
            params={"unit": unit, "which": which},
        )


@family("strided_slices", "strings", ["P4-13"], difficulty=1)
def strided_slices(rng):
    """Take every k-th character inside a window [a, b) of a string."""
    while True:
        k = rng.randint(2, 3)
        a = rng.randint(0, 2)
        shape = rng.choice(["text", "upper", "count_vowels"])
        name = rng.choice(["stride", "every_kth_char", "sample_text", "pick_chars"])
        ref = {"text": f"s[{a}:b:{k}]", "upper": f"s[{a}:b:{k}].upper()",
               "count_vowels": f"len([c for c in s[{a}:b:{k}] if c in 'aeiou'])"}[shape]
        gold = ref.replace(f"s[{a}:b:{k}]", f"s[{a}:b - 1:{k}]")
        returned = ("them as a string" if shape == "text" else "them upper-cased" if shape == "upper"
                    else "how many are lower-case vowels")
        yield Variant(
            title=f"Every {k}th character of s[{a}:b] ({shape})",
            task=f"Consider the characters of s at positions {a}, {a + k}, {a + 2 * k}, ... that are below b (b >= 0). "
                 f"Return {returned}.",
            entry_point=name,
            reference=f"def {name}(s, b):\n    return {ref}\n",
            gold=f"fn {name}(s: str, b: int) -> {'int' if shape == 'count_vowels' else 'str'}:\n    return {gold}\n",
            tests=[["", 3], ["abcdefghij", 10], ["abcdefghij", a + k], ["aeiouaeiou", a + k], ["hello world", 0]]
                  + [["".join(rng.choice("abcdeiou") for _ in range(rng.randint(3, 12))), rng.randint(0, 12)]
                     for _ in range(3)],
            params={"k": k, "a": a, "shape": shape},
        )


@family("weighted_score_default", "dicts", ["P4-26"], difficulty=1)
def weighted_score_default(rng):
    """Score letters with a weight table that is a dict default (read-only) in the reference."""
    while True:
        weights = {c: rng.randint(1, 5) for c in rng.sample("aeiourst", 4)}
        other = rng.choice([0, 1])
        shape = rng.choice(["total", "per_word", "best"])
        name = rng.choice(["letter_score", "word_value", "score_text", "weigh_letters"])
        score = f"sum(table.get(c, {other}) for c in w)"
        body = {"total": f"sum({score} for w in text.split())", "per_word": f"[{score} for w in text.split()]",
                "best": f"max(text.split(), key=lambda w: {score}, default='')"}[shape]
        rtype = {"total": "int", "per_word": "list[int]", "best": "str"}[shape]
        rules = ("P4-26", "P4-09") if shape == "best" else ("P4-26",)
        returned = ("the total score of the words of text" if shape == "total"
                    else "the score of each word of text" if shape == "per_word"
                    else "the first highest-scoring word of text (empty text: empty string)")
        yield Variant(
            title=f"Letter scores with a default weight table ({shape})",
            task=f"A word's score is the sum over its letters of weights[letter] (weights defaults to {weights}; a "
                 f"letter not in it scores {other}). Return {returned}.",
            entry_point=name,
            reference=f"def {name}(text, weights={weights!r}):\n"
                      f"    return {body.replace('table.get', 'weights.get')}\n",
            gold=(f"fn {name}(text: str, weights: dict[str, int] | nil = nil) -> {rtype}:\n"
                  f"    let table = weights if weights is not nil else {weights!r}\n"
                  f"    return {body.replace('lambda', 'fun')}\n"),
            tests=[[""], ["a"], ["tea set"], ["zzz", {"z": 9}]]
                  + [[" ".join(rng.sample(WORDS, rng.randint(1, 4)))] for _ in range(4)],
            rules=rules,
            params={"weights": weights, "other": other, "shape": shape},
        )


@family("vowel_words", "counting", ["P4-21"], difficulty=1)
def vowel_words(rng):
    """Count words by a letter property by summing booleans."""
    while True:
        cond, desc = rng.choice([("w[0] in 'aeiou'", "start with a vowel"), ("w[-1] in 'aeiou'", "end with a vowel"),
                                 ("len(set(w)) == len(w)", "have no repeated letter"),
                                 ("w == w[::-1]", "are palindromes"),
                                 ("'e' in w and 'a' in w", "contain both 'a' and 'e'")])
        shape = rng.choice(["count", "per_line"])
        name = rng.choice(["count_words", "word_census", "tally_words", "words_matching"])
        gold_cond = cond.replace("w[-1]", "last(w)")
        rules = ("P4-21", "P4-14") if "w[-1]" in cond else ("P4-21",)
        body = (f"sum({cond} for w in text.split())" if shape == "count"
                else f"[sum({cond} for w in line.split()) for line in text.split('\\n')]")
        gbody = body.replace(cond, gold_cond).replace("sum(", "count(")
        yield Variant(
            title=f"Count words that {desc} ({shape})",
            task=f"Return how many words of text (split on whitespace) {desc}" +
                 ("." if shape == "count" else ", for each line of text (split on '\\n'), as a list."),
            entry_point=name,
            reference=f"def {name}(text):\n    return {body}\n",
            gold=f"fn {name}(text: str) -> {'int' if shape == 'count' else 'list[int]'}:\n    return {gbody}\n",
            tests=[[""], ["area idea level"], ["a\nbb cc\n"]]
                  + [["\n".join(" ".join(rng.sample(WORDS, rng.randint(1, 3))) for _ in range(rng.randint(1, 3)))]
                     for _ in range(4)],
            rules=rules,
            params={"cond": cond, "shape": shape},
        )
