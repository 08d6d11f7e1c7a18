"""Families targeting P4-24: `str.strip/lstrip/rstrip` are `trim/trim_start/trim_end`."""

from __future__ import annotations

from py4.problems.family import Variant, code, family
from py4.problems.families._inputs import WORDS

_STRIPS = {"strip": "trim", "lstrip": "trim_start", "rstrip": "trim_end"}
_SIDES = {"strip": "both ends", "lstrip": "the start", "rstrip": "the end"}


@family("clean_lines", "strings", ["P4-24"], difficulty=1)
def clean_lines(rng):
    """Trim lines and drop the blank ones."""
    while True:
        meth = rng.choice(list(_STRIPS))
        chars = rng.choice([None, "*", "-=", ".# "])
        post = rng.choice(["list", "count", "longest"])
        name = rng.choice(["clean_lines", "tidy", "normalize_lines", "strip_all"])
        arg = "" if chars is None else repr(chars)
        what_chars = "whitespace" if chars is None else f"the characters {chars!r}"
        body = {"list": "cleaned", "count": "len(cleaned)", "longest": "max(cleaned, key=len, default='')"}[post]
        what = {"list": "the remaining lines in order", "count": "how many lines remain",
                "longest": "the longest remaining line (the first one on ties; '' if none)"}[post]
        rtype = {"list": "list[str]", "count": "int", "longest": "str"}[post]
        pad = lambda w: rng.choice(["", " ", "  ", "*", "-", "=", ".", "# "]) + w + rng.choice(["", " ", "\t", "*",
                                                                                                "-=", "."])
        yield Variant(
            title=f"{meth} {what_chars} from lines: {post}",
            task=f"Remove {what_chars} from {_SIDES[meth]} of every line (Python's str.{meth}({arg})), drop the lines "
                 f"that become empty, and return {what}.",
            entry_point=name,
            reference=code('''
                def $name(lines):
                    cleaned = [line.$meth($arg) for line in lines if line.$meth($arg)]
                    return $body
            ''', name=name, meth=meth, arg=arg, body=body),
            gold=code('''
                fn $name(lines: list[str]) -> $rtype:
                    let cleaned = [line.$meth($arg) for line in lines if line.$meth($arg)]
                    return $body
            ''', name=name, meth=_STRIPS[meth], arg=arg, body=body, rtype=rtype),
            tests=[[[]], [["  ", ""]], [[" a ", "b  ", "  c"]], [["*x*", "-=y=-", ". #"]]]
                  + [[[pad(rng.choice(WORDS)) for _ in range(rng.randint(1, 5))] + [rng.choice(["  ", "\t", "--"])]]
                     for _ in range(4)],
            params={"method": meth, "chars": chars, "post": post},
        )


@family("parse_settings", "parsing", ["P4-24", "P4-15"], difficulty=2)
def parse_settings(rng):
    """Parse 'key = value' lines with stray spaces into a dict."""
    while True:
        sep = rng.choice(["=", ":", "->"])
        comment = rng.choice(["#", ";", "//"])
        value_kind = rng.choice(["str", "int", "upper"])
        name = rng.choice(["parse_config", "read_settings", "load_pairs", "settings_dict"])
        conv = {"str": "value", "int": "int(value)", "upper": "value.upper()"}[value_kind]
        def line():
            k = rng.choice(["host", "port", "mode", "user"])
            v = str(rng.randint(0, 99)) if value_kind == "int" else rng.choice(WORDS)
            kind = rng.random()
            if kind < 0.15:
                return rng.choice(["", "   "])
            if kind < 0.3:
                return f"  {comment} note {v}"
            return (rng.choice(["", " ", "  "]) + k + rng.choice(["", " "]) + sep + rng.choice(["", " ", "  "]) + v
                    + rng.choice(["", " "]))
        returned = "value" if value_kind == "str" else "int(value)" if value_kind == "int" else "value in upper case"
        yield Variant(
            title=f"Parse 'key {sep} value' settings ({value_kind} values, {comment!r} comments)",
            task=f"Each line of lines is 'key {sep} value' with optional spaces around key, separator and value; blank "
                 f"lines and lines whose first non-space text starts with {comment!r} are skipped. Return a dict from "
                 f"key to {returned} (a later line wins). Values contain no {sep!r}.",
            entry_point=name,
            reference=code('''
                def $name(lines):
                    settings = {}
                    for line in lines:
                        line = line.strip()
                        if not line or line.startswith($comment):
                            continue
                        key, value = line.split($sep, 1)
                        key, value = key.strip(), value.strip()
                        settings[key] = $conv
                    return settings
            ''', name=name, comment=repr(comment), sep=repr(sep), conv=conv),
            gold=code('''
                fn $name(lines: list[str]) -> dict:
                    let settings = {:}
                    for line in lines:
                        line = line.trim()
                        if not line or line.startswith($comment):
                            continue
                        let key, value = line.split($sep, 1)
                        key, value = key.trim(), value.trim()
                        settings[key] = $conv
                    return settings
            ''', name=name, comment=repr(comment), sep=repr(sep), conv=conv),
            tests=[[[]], [["  "]], [[f"a{sep}1", f" a {sep} 2 "]]]
                  + [[[line() for _ in range(rng.randint(1, 6))]] for _ in range(5)],
            params={"sep": sep, "comment": comment, "value_kind": value_kind},
        )


@family("strip_number_text", "parsing", ["P4-24"], difficulty=1)
def strip_number_text(rng):
    """Read numbers padded with noise characters (leading zeros, currency signs, spaces)."""
    while True:
        noise, meth = rng.choice([("$ ", "lstrip"), ("0", "lstrip"), (" %", "rstrip"), ("*", "strip"), ("# ", "strip")])
        agg = rng.choice(["sum", "max", "list"])
        name = rng.choice(["read_amounts", "parse_padded", "clean_numbers", "unpad"])
        body = {"sum": "sum(values)", "max": "max(values, default=0)", "list": "values"}[agg]
        rtype = "list[int]" if agg == "list" else "int"
        def item():
            n = str(rng.randint(1, 999))
            pre = "".join(rng.choice(noise) for _ in range(rng.randint(0, 3))) if meth in ("lstrip", "strip") else ""
            post = "".join(rng.choice(noise) for _ in range(rng.randint(0, 3))) if meth in ("rstrip", "strip") else ""
            return pre + n + post
        yield Variant(
            title=f"Numbers padded with {noise!r} ({meth}): {agg}",
            task=f"Each string of items is a positive integer padded with characters from {noise!r} at "
                 f"{_SIDES[meth]} (remove them with str.{meth}({noise!r})). Return "
                 f"{'the sum' if agg == 'sum' else 'the largest (0 if none)' if agg == 'max' else 'the list'} of the "
                 "numbers.",
            entry_point=name,
            reference=code('''
                def $name(items):
                    values = [int(s.$meth($noise)) for s in items]
                    return $body
            ''', name=name, meth=meth, noise=repr(noise), body=body),
            gold=code('''
                fn $name(items: list[str]) -> $rtype:
                    let values = [int(s.$meth($noise)) for s in items]
                    return $body
            ''', name=name, meth=_STRIPS[meth], noise=repr(noise), body=body, rtype=rtype),
            tests=[[[]], [[item()]]] + [[[item() for _ in range(rng.randint(1, 5))]] for _ in range(5)],
            params={"noise": noise, "method": meth, "agg": agg},
        )
