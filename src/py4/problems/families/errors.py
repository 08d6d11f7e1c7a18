"""Families targeting P4-06 (`catch`), P4-07 (`throw`) and P4-28 (no bare `catch:`)."""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import choose

_TOKENS = ["12", "7", "-3", "x", "", "4.5", "0", "abc", "100", "-0", "9", "2a", "ff", "101", "11"]

_BASES = {10: "decimal", 16: "hexadecimal", 2: "binary", 8: "octal"}

_ACCUM = {
    "sum": ("the sum of the parsed numbers", "total = 0", "total += value", "total",
            "let total = 0", "total += value", "int"),
    "list": ("the list of parsed numbers, in order", "total = []", "total.append(value)", "total",
             "let total = []", "total.append(value)", "list[int]"),
    "squares": ("the list of the squares of the parsed numbers, in order", "total = []",
                "total.append(value * value)", "total", "let total = []", "total.append(value * value)", "list[int]"),
    "max": ("the largest parsed number, or the fallback when none parses", "total = None",
            "total = value if total is None else max(total, value)", "total if total is not None else fallback",
            "let total = nil", "total = value if total is nil else max(total, value)", "int"),
}


@family("parse_numbers", "parsing", ["P4-06"], difficulty=1)
def parse_numbers(rng):
    """Parse numeric strings, handling the ValueError of the bad ones."""
    while True:
        base, base_name = choose(rng, _BASES)
        acc, (desc, init, step, result, g_init, g_step, rtype) = choose(rng, _ACCUM)
        on_error = rng.choice(["skip", "fallback"])
        name = rng.choice(["parse_numbers", "read_values", "collect_numbers", "parse_all"])
        error_ref = "continue" if on_error == "skip" else "value = fallback"
        rule = "Strings that are not valid are skipped." if on_error == "skip" else \
            "A string that is not valid counts as the number fallback."
        yield Variant(
            title=f"Parse {base_name} strings ({acc}, {on_error})",
            task=f"Each string in items is an integer written in {base_name} (as Python's int(s, {base}) "
                 f"reads it). Return {desc}. {rule}",
            entry_point=name,
            reference=code("""
                def $name(items, fallback):
                    $init
                    for s in items:
                        try:
                            value = int(s, $base)
                        except ValueError:
                            $error_ref
                        $step
                    return $result
            """, name=name, init=init, base=base, error_ref=error_ref, step=step, result=result),
            gold=code("""
                fn $name(items: list[str], fallback: int) -> $rtype:
                    $g_init
                    for s in items:
                        let value = 0
                        try:
                            value = int(s, $base)
                        catch ValueError:
                            $error_ref
                        $g_step
                    return $result
            """, name=name, g_init=g_init, base=base, error_ref=error_ref, g_step=g_step,
                      result=result.replace("None", "nil"), rtype=rtype),
            tests=[[[], 5], [["x"], -1]] + [[rng.sample(_TOKENS, rng.randint(2, 7)), rng.randint(-3, 3)]
                                             for _ in range(6)],
            params={"base": base, "accumulate": acc, "on_error": on_error},
        )


_RATIO_OPS = {
    "a / b": ("a / b", "float"),
    "100 * a / b": ("100 * a / b", "float"),
    "(a + b) / b": ("(a + b) / b", "float"),
    "a / (b * 2)": ("a / (b * 2)", "float"),
}


@family("safe_ratios", "arithmetic", ["P4-06"], difficulty=1)
def safe_ratios(rng):
    """Divide pairs, catching ZeroDivisionError."""
    while True:
        op, (expr, _) = choose(rng, _RATIO_OPS)
        default = rng.choice([0.0, -1.0, 1.0])
        skip = rng.random() < 0.5
        name = rng.choice(["safe_ratios", "ratios", "divide_pairs", "pair_quotients"])
        handler = "continue" if skip else f"out.append({default})"
        rule = "pairs whose division fails are left out" if skip else f"a pair whose division fails gives {default}"
        pairs = lambda: [[rng.randint(-9, 9), rng.choice([0, 0, 1, 2, 3, -4, 5])] for _ in range(rng.randint(1, 6))]
        yield Variant(
            title=f"Ratios {op}, {'skip' if skip else 'default'} on zero",
            task=f"pairs is a list of [a, b] integer pairs. Return the list of the values {expr} for each pair, "
                 f"in order; {rule} (division by zero).",
            entry_point=name,
            reference=code("""
                def $name(pairs):
                    out = []
                    for a, b in pairs:
                        try:
                            out.append($expr)
                        except ZeroDivisionError:
                            $handler
                    return out
            """, name=name, expr=expr, handler=handler),
            gold=code("""
                fn $name(pairs: list[list[int]]) -> list[float]:
                    let out = []
                    for a, b in pairs:
                        try:
                            out.append($expr)
                        catch ZeroDivisionError:
                            $handler
                    return out
            """, name=name, expr=expr, handler=handler),
            tests=[[[]], [[[1, 0]]], [[[3, 2], [4, 0], [5, 5]]]] + [[pairs()] for _ in range(5)],
            tolerance=1e-9,
            params={"op": op, "skip": skip, "default": default},
        )


_CHECKS = [
    ("age < 0", "negative age"),
    ("age > $hi", "too old"),
    ("name == ''", "empty name"),
    ("len(name) > $maxlen", "name too long"),
    ("age % 2 != 0", "odd age"),
    ("name != name.lower()", "name not lowercase"),
]


@family("validate_records", "validation", ["P4-07", "P4-06"], difficulty=2)
def validate_records(rng):
    """A checker throws ValueError with a message; the caller catches and reports."""
    while True:
        checks = rng.sample(_CHECKS, rng.randint(2, 3))
        hi, maxlen = rng.choice([60, 90, 120]), rng.choice([4, 6, 8])
        report = rng.choice(["messages", "count"])
        name = rng.choice(["validate_records", "check_people", "audit_rows", "screen_entries"])
        conds = [(c.replace("$hi", str(hi)).replace("$maxlen", str(maxlen)), m) for c, m in checks]
        ref_checks = "\n".join(f"    if {c}:\n        raise ValueError({m!r})" for c, m in conds)
        gold_checks = "\n".join(f"    if {c}:\n        throw ValueError({m!r})" for c, m in conds)
        rules_text = "; ".join(f"{m!r} when {c}" for c, m in conds)
        keep = "problems.append(str(err))" if report == "messages" else "problems += 1"
        init, g_init, rtype = ("[]", "[]", "list[str]") if report == "messages" else ("0", "0", "int")
        what = "the list of error messages, one per invalid record, in order" if report == "messages" \
            else "the number of invalid records"
        yield Variant(
            title=f"Validate [name, age] records ({len(conds)} checks, {report})",
            task=f"records is a list of [name, age] pairs. A record is checked in this order and the first failing "
                 f"check gives its error message: {rules_text}. Return {what}.",
            entry_point=name,
            reference=code("""
                def check(name, age):
                $checks

                def $name(records):
                    problems = $init
                    for name, age in records:
                        try:
                            check(name, age)
                        except ValueError as err:
                            $keep
                    return problems
            """, checks=ref_checks, name=name, init=init, keep=keep),
            gold=code("""
                fn check(name: str, age: int) -> nil:
                $checks

                fn $name(records: list[list]) -> $rtype:
                    let problems = $init
                    for name, age in records:
                        try:
                            check(name, age)
                        catch ValueError as err:
                            $keep
                    return problems
            """, checks=gold_checks, name=name, init=g_init, keep=keep, rtype=rtype),
            tests=[[[]], [[["ann", 30]]], [[["", -1], ["BOB", 200]]]]
                  + [[[[rng.choice(["ann", "", "Bob", "carolina", "dee", "ed"]), rng.randint(-5, 150)]
                       for _ in range(rng.randint(1, 5))]] for _ in range(5)],
            params={"checks": [m for _, m in conds], "hi": hi, "maxlen": maxlen, "report": report},
        )


_RPN_OPS = {"+": "a + b", "-": "a - b", "*": "a * b", "max": "max(a, b)", "min": "min(a, b)"}


@family("checked_rpn", "parsing", ["P4-07", "P4-06"], difficulty=3)
def checked_rpn(rng):
    """Evaluate postfix tokens with a stack; malformed input throws and gives nil."""
    while True:
        # "-" is always present: with only commutative operators a stack popped from the
        # wrong end could still give the right answer, and P4-17 would not be tested.
        others = [k for k in sorted(_RPN_OPS) if k != "-"]
        ops = {k: _RPN_OPS[k] for k in sorted(["-"] + rng.sample(others, rng.randint(1, 3)))}
        name = rng.choice(["eval_rpn", "postfix_value", "evaluate_postfix", "rpn"])
        fallback = rng.choice(["None", "0", "-1"])
        table = ", ".join(f"{k!r}: {v}" for k, v in ops.items())
        ref_branches = "\n".join(f"            {'if' if i == 0 else 'elif'} tok == {k!r}:\n"
                                 f"                stack.append({v})"
                                 for i, (k, v) in enumerate(ops.items()))
        gold_branches = ref_branches.replace("elif ", "else if ")
        def expr():
            toks = [str(rng.randint(0, 9)), str(rng.randint(0, 9))]
            for _ in range(rng.randint(0, 3)):
                toks += [str(rng.randint(0, 9)), rng.choice(sorted(ops))]
            toks.insert(2, rng.choice(sorted(ops)))
            if rng.random() < 0.3:
                toks.append(rng.choice(sorted(ops) + ["7"]))
            return toks
        yield Variant(
            title=f"Checked postfix evaluation with {', '.join(ops)}",
            task=f"tokens is a postfix (RPN) expression: integer literals and the operators {table} "
                 f"(a is the operand pushed first). Evaluate it with a stack. If an operator finds fewer than two "
                 f"operands, or the expression does not leave exactly one value, return {fallback}; "
                 f"otherwise return the value.",
            entry_point=name,
            reference=code("""
                def operands(stack):
                    if len(stack) < 2:
                        raise ValueError("stack underflow")
                    b = stack.pop()
                    a = stack.pop()
                    return a, b

                def $name(tokens):
                    stack = []
                    try:
                        for tok in tokens:
                            if tok.isdigit():
                                stack.append(int(tok))
                                continue
                            a, b = operands(stack)
                $ref_branches
                        if len(stack) != 1:
                            raise ValueError("leftover operands")
                    except ValueError:
                        return $fallback
                    return stack[0]
            """, name=name, ref_branches=ref_branches, fallback=fallback),
            gold=code("""
                fn operands(stack: list[int]) -> tuple[int, int]:
                    if len(stack) < 2:
                        throw ValueError("stack underflow")
                    let b = stack.pop(len(stack) - 1)
                    let a = stack.pop(len(stack) - 1)
                    return a, b

                fn $name(tokens: list[str]) -> int | nil:
                    let stack = []
                    try:
                        for tok in tokens:
                            if tok.isdigit():
                                stack.append(int(tok))
                                continue
                            let a, b = operands(stack)
                $gold_branches
                        if len(stack) != 1:
                            throw ValueError("leftover operands")
                    catch ValueError:
                        return $fallback
                    return stack[0]
            """, name=name, gold_branches=gold_branches, fallback=fallback.replace("None", "nil")),
            tests=[[["5"]], [["1", "-"]], [["2", "3"]], [["9", "4", "-"]], [["1", "2", "3", "-", "-"]]]
                  + [[expr()] for _ in range(5)],
            params={"ops": sorted(ops), "fallback": fallback},
        )


_BARE_PARSERS = {
    "int(s)": ("int(s)", "the string as an integer (int(s))", "int"),
    "float(s)": ("float(s)", "the string as a float (float(s))", "float"),
    "int(s) * 2": ("int(s) * 2", "twice the integer int(s)", "int"),
    "len(s) // int(s)": ("len(s) // int(s)", "len(s) // int(s) (both non-negative here)", "int"),
}


@family("bare_except_parse", "parsing", ["P4-28", "P4-06"], difficulty=1)
def bare_except_parse(rng):
    """Reference swallows errors with a bare except; gold names the exceptions."""
    while True:
        key, (expr, desc, vtype) = choose(rng, _BARE_PARSERS)
        default = rng.choice(["None", "0", "-1"])
        name = rng.choice(["to_numbers", "convert_all", "parse_each", "safe_convert"])
        catches = "(ValueError, ZeroDivisionError)" if "//" in expr else "ValueError"
        pool = ["3", "12", "x", "", "0", "4.25", "1e3", "-", "7", "15", "nan?"]
        yield Variant(
            title=f"Convert strings ({key}) with a fallback of {default}",
            task=f"Return a list with, for each string s in items, {desc}; when that conversion fails "
                 f"(ValueError or ZeroDivisionError) the entry is {default}.",
            entry_point=name,
            reference=code("""
                def $name(items):
                    out = []
                    for s in items:
                        try:
                            out.append($expr)
                        except:
                            out.append($default)
                    return out
            """, name=name, expr=expr, default=default),
            gold=code("""
                fn $name(items: list[str]) -> list[$vtype | nil]:
                    let out = []
                    for s in items:
                        try:
                            out.append($expr)
                        catch $catches:
                            out.append($default)
                    return out
            """, name=name, expr=expr, default=default.replace("None", "nil"), catches=catches, vtype=vtype),
            tests=[[[]], [["x"]], [["0", "5"]]] + [[rng.sample(pool, rng.randint(2, 6))] for _ in range(5)],
            params={"expr": key, "default": default},
        )


@family("bare_except_lookup", "dicts", ["P4-28", "P4-06"], difficulty=2)
def bare_except_lookup(rng):
    """Nested lookups that fall back on missing keys or positions via a bare except."""
    while True:
        default = rng.choice(["'?'", "'missing'", "''", "'n/a'"])
        name = rng.choice(["lookup_all", "resolve_paths", "fetch_fields", "get_each"])
        fields = ["name", "city", "tags", "age"]
        def record():
            return {f: (rng.choice(["ann", "bo", "cy"]) if f != "tags"
                        else rng.sample(["a", "b", "c", "d"], rng.randint(0, 3)))
                    for f in rng.sample(fields[:3], rng.randint(1, 3))}
        yield Variant(
            title=f"Look up field/position paths with fallback {default}",
            task=f"data is a list of records (dicts). Each query is [row, field, position]: return, for each query, "
                 f"str(data[row][field][position]) — the character or item at that position — or {default} when the "
                 "row, field or position does not exist (IndexError or KeyError). Rows and positions are "
                 "non-negative.",
            entry_point=name,
            reference=code("""
                def $name(data, queries):
                    out = []
                    for row, field, pos in queries:
                        try:
                            out.append(str(data[row][field][pos]))
                        except:
                            out.append($default)
                    return out
            """, name=name, default=default),
            gold=code("""
                fn $name(data: list[dict], queries: list[list]) -> list[str]:
                    let out = []
                    for row, field, pos in queries:
                        try:
                            out.append(str(data[row][field][pos]))
                        catch (IndexError, KeyError):
                            out.append($default)
                    return out
            """, name=name, default=default),
            tests=[[[], [[0, "name", 0]]]] + [[[record() for _ in range(3)],
                                                [[rng.randint(0, 3), rng.choice(fields), rng.randint(0, 3)]
                                                 for _ in range(4)]]
                                               for _ in range(6)],
            params={"default": default},
        )
