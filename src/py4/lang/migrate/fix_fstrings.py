"""P4-08: `f"…{x}…"` → `i"…{x}…"` (`rf` → `ri`), with the expressions inside migrated too.

Python 3.11's tokenizer keeps an f-string as one STRING token, so the replacement
fields are found here and each expression is migrated as a fragment (spellings,
renames and helpers; types are unknown inside, so helpers are used where needed).
"""

from __future__ import annotations

import ast
import tokenize

from py4.lang.migrate.context import Context

RULES = ("P4-08",)
_BRACKETS = {"(": ")", "[": "]", "{": "}"}


def split_prefix(token_text: str) -> tuple[str, str]:
    index = 0
    while index < len(token_text) and token_text[index] not in "'\"":
        index += 1
    return token_text[:index], token_text[index:]


def new_prefix(prefix: str) -> str:
    letters = prefix.replace("f", "").replace("F", "")
    return ("r" if "r" in letters.lower() else "") + "i" + letters.replace("r", "").replace("R", "")


def find_fields(body: str, start: int = 0, end: int | None = None) -> list[tuple[int, int, bool]]:
    """(start, end, self_documenting) of every replacement-field expression in `body`.

    `body` is the f-string's text between its quotes. Nested fields inside format
    specs are included.
    """
    end = len(body) if end is None else end
    fields, i = [], start
    while i < end:
        ch = body[i]
        if ch in "{}" and i + 1 < end and body[i + 1] == ch:
            i += 2
            continue
        if ch == "{":
            expr_start = i + 1
            expr_end, stop = _scan_expression(body, expr_start, end)
            self_doc = body[expr_end - 1:expr_end] == "=" if expr_end > expr_start else False
            fields.append((expr_start, expr_end - (1 if self_doc else 0), self_doc))
            i = stop
            if i < end and body[i] == "!":
                i += 2
            if i < end and body[i] == ":":
                spec_end = _spec_end(body, i + 1, end)
                fields.extend(find_fields(body, i + 1, spec_end))
                i = spec_end
            i += 1  # the closing brace
            continue
        i += 1
    return fields


def _scan_expression(body: str, i: int, end: int) -> tuple[int, int]:
    """End of the expression starting at i: (end incl. a `=` specifier, stop position)."""
    depth, quote = 0, None
    while i < end:
        ch = body[i]
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in _BRACKETS:
            depth += 1
        elif ch in ")]" or (ch == "}" and depth):
            depth -= 1
        elif depth == 0 and ch == "}":
            return i, i
        elif depth == 0 and ch == "!" and body[i + 1:i + 2] != "=":
            return i, i
        elif depth == 0 and ch == ":":
            return i, i
        elif depth == 0 and ch == "=" and body[i + 1:i + 2] in ("}", "!", ":") \
                and body[i - 1:i] not in ("=", "!", "<", ">"):
            return i + 1, i + 1
        i += 1
    return i, i


def _spec_end(body: str, i: int, end: int) -> int:
    depth = 0
    while i < end:
        if body[i] == "{":
            depth += 1
        elif body[i] == "}":
            if depth == 0:
                return i
            depth -= 1
        i += 1
    return i


def fix(ctx: Context, migrate_fragment) -> None:
    """`migrate_fragment(expr_text, scope, ctx) -> (text, hits, cannots)` migrates one field."""
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.JoinedStr) and ctx.patches.has(node):
            _fix_joined(ctx, node, migrate_fragment)


def _fix_joined(ctx: Context, node: ast.JoinedStr, migrate_fragment) -> None:
    start, end = ctx.src.span(node)
    pieces, cursor, changed = [], start, False
    for tok in ctx.src.tokens_between(start, end):
        if tok.type != tokenize.STRING:
            continue
        prefix, rest = split_prefix(tok.string)
        if "f" not in prefix.lower():
            continue
        quote_len = 3 if rest[:3] in ('"""', "'''") else 1
        body = rest[quote_len:-quote_len]
        new_body, body_changed = _migrate_body(ctx, node, body, migrate_fragment, tok.start)
        new_pre = new_prefix(prefix) if ctx.enabled("P4-08") else prefix
        if ctx.enabled("P4-08"):
            ctx.hit("P4-08", tok.start)
        if new_pre != prefix or body_changed:
            pieces.append(ctx.src.text[cursor:tok.start])
            pieces.append(new_pre + rest[:quote_len] + new_body + rest[-quote_len:])
            cursor, changed = tok.end, True
    if changed:
        pieces.append(ctx.src.text[cursor:end])
        ctx.patches.replace(node, ["".join(pieces)])


def _migrate_body(ctx, node, body, migrate_fragment, token_start) -> tuple[str, bool]:
    out, cursor, changed = [], 0, False
    scope = ctx.scopes.scope_at(node)
    for expr_start, expr_end, self_doc in find_fields(body):
        text = body[expr_start:expr_end]
        if not text.strip():
            continue
        new_text, hits, cannots = migrate_fragment(text, scope, ctx)
        for hit in hits:
            ctx.hit(hit.rule, token_start)
        for item in cannots:
            ctx.cannot_convert(token_start, item.reason)
        if new_text == text:
            continue
        if self_doc:
            ctx.cannot_convert(token_start, "a self-documenting f-string field `{expr=}` "
                               "prints its own source, which migration would change")
            continue
        out.append(body[cursor:expr_start])
        out.append(new_text)
        cursor, changed = expr_end, True
    out.append(body[cursor:])
    return "".join(out), changed
