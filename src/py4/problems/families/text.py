"""Text-processing families: wrapping and run-length encoding (P4-18, P4-08), histograms
(P4-15/16), separated values (P4-24, P4-06), tables (P4-25), parameters named after
builtins (P4-29), separators as mutable defaults (P4-26)."""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import WORDS


@family("word_wrap", "strings", ["P4-18"], difficulty=2)
def word_wrap(rng):
    """Greedy word wrapping to a width; lines are joined words."""
    while True:
        width = rng.randint(8, 20)
        out = rng.choice(["lines", "text", "count"])
        name = rng.choice(["wrap", "wrap_text", "fill_lines", "reflow"])
        ret = {"lines": "lines", "text": "'\\n'.join(lines)", "count": "len(lines)"}[out]
        gret = {"lines": "lines", "text": "lines.join('\\n')", "count": "len(lines)"}[out]
        rtype = {"lines": "list[str]", "text": "str", "count": "int"}[out]
        returned = ("the list of lines" if out == "lines" else "the lines joined by newlines" if out == "text"
                    else "the number of lines")
        yield Variant(
            title=f"Greedy wrap at width {width} ({out})",
            task=f"Wrap the words of text (split on whitespace) greedily into lines of at most {width} characters, "
                 f"words separated by one space (a longer word gets a line of its own). Return {returned}.",
            entry_point=name,
            reference=code('''
                def $name(text):
                    lines, current = [], []
                    for w in text.split():
                        if current and len(" ".join(current + [w])) > $width:
                            lines.append(" ".join(current))
                            current = []
                        current.append(w)
                    if current:
                        lines.append(" ".join(current))
                    return $ret
            ''', name=name, width=width, ret=ret),
            gold=code('''
                fn $name(text: str) -> $rtype:
                    let lines = []
                    let current = []
                    for w in text.split():
                        if current and len((current + [w]).join(" ")) > $width:
                            lines.append(current.join(" "))
                            current = []
                        current.append(w)
                    if current:
                        lines.append(current.join(" "))
                    return $ret
            ''', name=name, width=width, ret=gret, rtype=rtype),
            tests=[[""], ["a"], ["x" * (width + 3) + " b"]]
                  + [[" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 12)))]
                     for _ in range(5)],
            params={"width": width, "out": out},
        )


@family("run_length", "strings", ["P4-08", "P4-18"], difficulty=2)
def run_length(rng):
    """Run-length encode a string with interpolated pieces."""
    while True:
        fmt = rng.choice(["{ch}{n}", "{n}{ch}", "{ch}x{n}", "({ch},{n})", "{ch}{n if n > 1 else ''}"])
        sep = rng.choice(["", " ", ","])
        name = rng.choice(["rle", "encode_runs", "compress", "run_length"])
        yield Variant(
            title=f"Run-length encoding as {fmt!r} joined by {sep!r}",
            task=f"Split s into maximal runs of one repeated character; render each run with the Python format {fmt!r} "
                 f"(ch the character, n the run length) and join the pieces with {sep!r}.",
            entry_point=name,
            reference=code('''
                def $name(s):
                    pieces = []
                    i = 0
                    while i < len(s):
                        j = i
                        while j < len(s) and s[j] == s[i]:
                            j += 1
                        ch, n = s[i], j - i
                        pieces.append(f"$fmt")
                        i = j
                    return $sep.join(pieces)
            ''', name=name, fmt=fmt, sep=repr(sep)),
            gold=code('''
                fn $name(s: str) -> str:
                    let pieces = []
                    let i = 0
                    while i < len(s):
                        let j = i
                        while j < len(s) and s[j] == s[i]:
                            j += 1
                        let ch, n = s[i], j - i
                        pieces.append(i"$fmt")
                        i = j
                    return pieces.join($sep)
            ''', name=name, fmt=fmt, sep=repr(sep)),
            tests=[[""], ["a"], ["aaab"], ["abba"]]
                  + [["".join(rng.choice("aab") * rng.randint(1, 3) for _ in range(rng.randint(1, 6)))]
                     for _ in range(4)],
            params={"format": fmt, "sep": sep},
        )


@family("histogram_bars", "dicts", ["P4-15", "P4-16", "P4-08"], difficulty=2)
def histogram_bars(rng):
    """Count items into a dict, then draw one text bar per key in sorted order."""
    while True:
        bar = rng.choice(["#", "*", "="])
        unit = rng.choice(["word", "letter", "length"])
        name = rng.choice(["histogram", "bar_chart", "draw_counts", "text_histogram"])
        item = {"word": "w", "letter": "c", "length": "str(len(w))"}[unit]
        source = {"word": "text.split()", "letter": "[c for c in text if c.isalpha()]", "length": "text.split()"}[unit]
        var = "c" if unit == "letter" else "w"
        yield Variant(
            title=f"Histogram of {unit}s with {bar!r} bars",
            task=f"Count the {unit + 's' if unit != 'length' else 'word lengths (as text keys)'} of text and return "
                 f"one line per distinct key in sorted key order: '<key>: ' followed by the count repeated as {bar!r} "
                 "characters.",
            entry_point=name,
            reference=code('''
                def $name(text):
                    counts = {}
                    for $var in $source:
                        key = $item
                        counts[key] = counts.get(key, 0) + 1
                    return [f"{k}: {'$bar' * counts[k]}" for k in sorted(counts)]
            ''', name=name, var=var, source=source, item=item, bar=bar),
            gold=code('''
                fn $name(text: str) -> list[str]:
                    let counts = {:}
                    for $var in $source:
                        let key = $item
                        counts[key] = counts.get(key, 0) + 1
                    return [i"{k}: {'$bar' * counts[k]}" for k in sorted(counts.keys())]
            ''', name=name, var=var, source=source, item=item, bar=bar),
            tests=[[""], ["b a b"], ["aa bb aa c"]]
                  + [[" ".join(rng.choice(WORDS[:9]) for _ in range(rng.randint(1, 8)))] for _ in range(5)],
            params={"bar": bar, "unit": unit},
        )


@family("separated_values", "parsing", ["P4-24", "P4-06"], difficulty=2)
def separated_values(rng):
    """Parse delimiter-separated numbers with stray spaces, skipping the bad fields."""
    while True:
        sep = rng.choice([",", ";", "|"])
        agg = rng.choice(["sum", "list", "bad_count"])
        name = rng.choice(["parse_fields", "read_row", "sum_fields", "field_values"])
        init, step, bad, ret, rtype = {
            "sum": ("0", "result += int(field)", "pass", "result", "int"),
            "list": ("[]", "result.append(int(field))", "pass", "result", "list[int]"),
            "bad_count": ("0", "int(field)", "result += 1", "result", "int"),
        }[agg]
        what = {"sum": "the sum of the valid integers", "list": "the valid integers in order",
                "bad_count": "how many fields are not valid integers"}[agg]
        def row():
            fields = [rng.choice([" ", "", "  "]) + rng.choice([str(rng.randint(-9, 99)), "x", "", "4.5", "7"])
                      + rng.choice(["", " "])
                      for _ in range(rng.randint(1, 6))]
            return sep.join(fields)
        yield Variant(
            title=f"{sep!r}-separated integers: {agg}",
            task=f"line holds fields separated by {sep!r}; each field may have spaces around it. A field is valid "
                 f"when, with the surrounding spaces removed, int() accepts it. Return {what}.",
            entry_point=name,
            reference=code('''
                def $name(line):
                    result = $init
                    for field in line.split($sep):
                        field = field.strip()
                        try:
                            $step
                        except ValueError:
                            $bad
                    return $ret
            ''', name=name, sep=repr(sep), init=init, step=step, bad=bad, ret=ret),
            gold=code('''
                fn $name(line: str) -> $rtype:
                    let result = $init
                    for field in line.split($sep):
                        field = field.trim()
                        try:
                            $step
                        catch ValueError:
                            $bad
                    return $ret
            ''', name=name, sep=repr(sep), init=init, step=step, bad=bad, ret=ret, rtype=rtype),
            tests=[[""], [f" 1{sep} 2 "], [f"x{sep}{sep} 3"]] + [[row()] for _ in range(5)],
            params={"sep": sep, "agg": agg},
        )


_COLUMNS = [("%-8s%4d", "{name:<8}{n:4d}"), ("%8s|%-4d|", "{name:>8}|{n:<4d}|"), ("%s..%03d", "{name}..{n:03d}"),
            ("%-6s %+d", "{name:<6} {n:+d}"), ("[%5s] %d", "[{name:>5}] {n}")]


@family("percent_table", "strings", ["P4-25", "P4-18"], difficulty=1)
def percent_table(rng):
    """Render rows as fixed-width text with %-formatting (reference) vs an i-string (gold)."""
    while True:
        pfmt, ibody = rng.choice(_COLUMNS)
        header = rng.choice([None, "NAME", "ITEM"])
        order = rng.choice(["input", "by_count"])
        name = rng.choice(["render_table", "table_text", "format_rows", "report"])
        head_ref = "" if header is None else f"    lines.append({header!r})\n"
        rows_expr = "rows" if order == "input" else "sorted(rows, key=by_count)"
        helper_ref = "" if order == "input" else "def by_count(row):\n    return -row[1]\n\n"
        helper_gold = "" if order == "input" else "fn by_count(row: list) -> int:\n    return -row[1]\n\n"
        yield Variant(
            title=f"Fixed-width rows {pfmt!r} ({order}{', header' if header else ''})",
            task=f"rows is a list of [name, n]. Return one text with one line per row"
                 f"{' (largest n first, stable)' if order == 'by_count' else ''}, formatted like Python's {pfmt!r} % "
                 f"(name, n), lines joined by newlines{f', after a first line {header!r}' if header else ''}.",
            entry_point=name,
            reference=helper_ref + code('''
                def $name(rows):
                    lines = []
                $head    for name, n in $rows:
                        lines.append("$pfmt" % (name, n))
                    return "\\n".join(lines)
            ''', name=name, head=head_ref, rows=rows_expr, pfmt=pfmt),
            gold=helper_gold + code('''
                fn $name(rows: list[list]) -> str:
                    let lines = []
                $head    for name, n in $rows:
                        lines.append(i"$ibody")
                    return lines.join("\\n")
            ''', name=name, head=head_ref, rows=rows_expr, ibody=ibody),
            tests=[[[]], [[["tea", 3]]], [[["a", 1], ["bb", 22]]]]
                  + [[[[rng.choice(WORDS), rng.randint(-9, 120)] for _ in range(rng.randint(1, 4))]]
                     for _ in range(5)],
            params={"format": pfmt, "header": header, "order": order},
        )


_PARAM_SHADOWS = [("str", "text"), ("input", "text"), ("list", "items"), ("iter", "items"), ("format", "pattern"),
                  ("hash", "digest")]


@family("builtin_named_params", "strings", ["P4-29"], difficulty=1)
def builtin_named_params(rng):
    """The reference names a parameter after a builtin (str, input, list, ...)."""
    while True:
        bad, good = rng.choice(_PARAM_SHADOWS)
        is_text = good in ("text", "pattern", "digest")
        shape = (rng.choice(["vowels", "upper", "reverse_words"]) if is_text
                 else rng.choice(["evens", "total", "maxabs"]))
        name = rng.choice(["analyse", "process", "inspect", "compute"])
        body, rtype, what = {
            "vowels": ("len([c for c in ARG.lower() if c in 'aeiou'])", "int",
                       "how many vowels (aeiou, any case) the text has"),
            "upper": ("ARG.upper().replace(' ', '_')", "str", "the text upper-cased with spaces replaced by '_'"),
            "reverse_words": ("ARG.split()[::-1]", "list[str]", "the words of the text in reverse order"),
            "evens": ("[x for x in ARG if x % 2 == 0]", "list[int]", "the even numbers of the list"),
            "total": ("sum(ARG) if ARG else 0", "int", "the sum of the list"),
            "maxabs": ("max((abs(x) for x in ARG), default=0)", "int",
                       "the largest absolute value in the list (0 if empty)"),
        }[shape]
        ptype = "str" if is_text else "list[int]"
        yield Variant(
            title=f"{shape} (reference parameter named {bad!r})",
            task=f"Return {what}.",
            entry_point=name,
            reference=code('''
                def $name($bad):
                    return $body
            ''', name=name, bad=bad, body=body.replace("ARG", bad)),
            gold=code('''
                fn $name($good: $ptype) -> $rtype:
                    return $body
            ''', name=name, good=good, ptype=ptype, body=body.replace("ARG", good), rtype=rtype),
            tests=([[""], ["Hello World"], ["a e i"]]
                   + [[" ".join(rng.sample(WORDS, rng.randint(1, 4)))] for _ in range(4)]) if is_text else
                  ([[[]], [[1, -2, 3]], [[-8]]]
                   + [[[rng.randint(-9, 9) for _ in range(rng.randint(1, 6))]] for _ in range(4)]),
            params={"shadow": bad, "shape": shape},
        )


@family("separator_default", "parsing", ["P4-26"], difficulty=2)
def separator_default(rng):
    """Split text on several separators given as a list default (read-only) in the reference."""
    while True:
        seps = rng.choice([[",", ";"], ["|", "/"], [",", " ", ";"], ["-", "+"]])
        post = rng.choice(["tokens", "count", "longest"])
        name = rng.choice(["tokenize", "split_all", "pieces", "split_on_any"])
        ret = {"tokens": "tokens", "count": "len(tokens)", "longest": "max(tokens, key=len, default='')"}[post]
        rtype = {"tokens": "list[str]", "count": "int", "longest": "str"}[post]
        what = {"tokens": "the non-empty pieces in order", "count": "how many non-empty pieces there are",
                "longest": "the longest non-empty piece (first on ties; '' if none)"}[post]
        yield Variant(
            title=f"Split on any of {seps} ({post})",
            task="Split text on every occurrence of any separator in separators (a list of single characters that "
                 f"defaults to {seps}) and return {what}.",
            entry_point=name,
            reference=code('''
                def $name(text, separators=$seps):
                    tokens, current = [], ""
                    for ch in text:
                        if ch in separators:
                            if current:
                                tokens.append(current)
                            current = ""
                        else:
                            current += ch
                    if current:
                        tokens.append(current)
                    return $ret
            ''', name=name, seps=repr(seps), ret=ret),
            gold=code('''
                fn $name(text: str, separators: list[str] | nil = nil) -> $rtype:
                    let seps = separators if separators is not nil else $seps
                    let tokens = []
                    let current = ""
                    for ch in text:
                        if ch in seps:
                            if current:
                                tokens.append(current)
                            current = ""
                        else:
                            current += ch
                    if current:
                        tokens.append(current)
                    return $ret
            ''', name=name, seps=repr(seps), ret=ret, rtype=rtype),
            tests=[[""], ["".join(seps) + "ab"], ["a,b;c|d/e f-g+h"], ["x.y", ["."]]]
                  + [["".join(rng.choice(["ab", "c", "dd"] + seps) for _ in range(rng.randint(2, 8)))]
                     for _ in range(4)],
            params={"separators": seps, "post": post},
        )


@family("ragged_columns", "lists", ["P4-20"], difficulty=2)
def ragged_columns(rng):
    """Transpose ragged rows up to the shortest row and summarise each column."""
    while True:
        agg = rng.choice(["columns", "sums", "maxes"])
        name = rng.choice(["columns", "transpose", "column_stats", "by_column"])
        body = {"columns": "[list(c) for c in ZIP(*rows)]", "sums": "[sum(c) for c in ZIP(*rows)]",
                "maxes": "[max(c) for c in ZIP(*rows)]"}[agg]
        rtype = "list[list[int]]" if agg == "columns" else "list[int]"
        returned = ("them (as lists)" if agg == "columns" else "the sum of each column" if agg == "sums"
                    else "the largest value of each column")
        yield Variant(
            title=f"Ragged rows to columns ({agg})",
            task=f"rows is a non-empty list of integer lists of possibly different lengths. Form the columns up to the "
                 f"length of the shortest row and return {returned}.",
            entry_point=name,
            reference=code('''
                def $name(rows):
                    return $body
            ''', name=name, body=body.replace("ZIP", "zip")),
            gold=code('''
                fn $name(rows: list[list[int]]) -> $rtype:
                    return $body
            ''', name=name, body=body.replace("ZIP", "zip_shortest"), rtype=rtype),
            tests=[[[[1, 2]]], [[[1, 2, 3], [4, 5]]], [[[1], [2, 3], [4, 5, 6]]], [[[], [1]]]]
                  + [[[[rng.randint(-5, 9) for _ in range(rng.randint(1, 4))] for _ in range(rng.randint(2, 4))]]
                     for _ in range(4)],
            params={"agg": agg},
        )


@family("argbest_index", "lists", ["P4-19"], difficulty=1)
def argbest_index(rng):
    """The 0-based position of the best item, found with enumerate."""
    while True:
        better = rng.choice([">", "<", ">=", "<="])
        key = rng.choice(["x", "abs(x)", "x * x - x", "-x % 5"])
        name = rng.choice(["argbest", "best_position", "index_of_best", "locate_extreme"])
        desc = {">": "largest (first on ties)", "<": "smallest (first on ties)", ">=": "largest (last on ties)",
                "<=": "smallest (last on ties)"}[better]
        key_gold = "(-x % 5 + 5) % 5" if key == "-x % 5" else key
        rules = ("P4-19", "P4-23") if key == "-x % 5" else ("P4-19",)
        yield Variant(
            title=f"Position of the {desc} by {key}",
            task=f"Return the 0-based position of the item of xs whose value of {key} (Python 3 arithmetic) is the "
                 f"{desc}; -1 for an empty list.",
            entry_point=name,
            reference=code('''
                def $name(xs):
                    best, best_i = None, -1
                    for i, x in enumerate(xs):
                        v = $key
                        if best is None or v $better best:
                            best, best_i = v, i
                    return best_i
            ''', name=name, key=key, better=better),
            gold=code('''
                fn $name(xs: list[int]) -> int:
                    let best, best_i = nil, -1
                    for n, x in enumerate(xs):
                        let v = $key
                        if best is nil or v $better best:
                            best, best_i = v, n - 1
                    return best_i
            ''', name=name, key=key_gold, better=better),
            tests=[[[]], [[4]], [[1, 3, 3, 2]], [[-7, 2, 7]]]
                  + [[[rng.randint(-9, 9) for _ in range(rng.randint(2, 7))]] for _ in range(4)],
            rules=rules,
            params={"better": better, "key": key},
        )
