"""Spelling fixers: P4-01 def→fn, P4-03 elif→else if, P4-04 None/True/False→nil/true/false,
P4-06 except→catch, P4-07 raise→throw, P4-09 lambda→fun, P4-10 import→use,
P4-28 bare `except:` → `catch BaseException:` (same meaning, no lint)."""

from __future__ import annotations

import ast

from py4.lang.migrate.context import Context

RULES = ("P4-01", "P4-03", "P4-04", "P4-06", "P4-07", "P4-09", "P4-10", "P4-28")
_CONSTANTS = {None: "nil", True: "true", False: "false"}


def _keyword(ctx: Context, node: ast.AST, word: str, new: str, rule: str,
             search_end: int | None = None) -> None:
    start = ctx.src.span(node)[0]
    end = search_end if search_end is not None else ctx.patches.span(node)[1]
    token = ctx.src.find_name_token(word, start, end)
    if token is None:
        ctx.cannot_convert(node, f"could not find the `{word}` keyword")
        return
    ctx.patches.local(node, token.start, token.end, new)
    ctx.hit(rule, token.start)


def _first_child_start(ctx: Context, node: ast.AST) -> int:
    info = ctx.patches.info[id(node)]
    own_start = ctx.src.span(node)[0]
    starts = [ctx.patches.span(c)[0] for c in info.children if ctx.patches.span(c)[0] >= own_start]
    return min(starts) if starts else info.end


def fix(ctx: Context) -> None:
    for node in ast.walk(ctx.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and ctx.enabled("P4-01"):
            _keyword(ctx, node, "def", "fn", "P4-01", _first_child_start(ctx, node))
        elif isinstance(node, ast.If) and ctx.enabled("P4-03"):
            start = ctx.src.span(node)[0]
            if ctx.src.text.startswith("elif", start):
                ctx.patches.local(node, start, start + 4, "else if")
                ctx.hit("P4-03", start)
        elif isinstance(node, ast.Constant) and ctx.enabled("P4-04") and ctx.patches.has(node):
            if node.value is None or isinstance(node.value, bool):
                if ctx.text(node) in ("None", "True", "False"):
                    ctx.patches.replace(node, [_CONSTANTS[node.value]])
                    ctx.hit("P4-04", node)
        elif isinstance(node, ast.ExceptHandler):
            _fix_handler(ctx, node)
        elif isinstance(node, ast.Raise) and ctx.enabled("P4-07"):
            _keyword(ctx, node, "raise", "throw", "P4-07", _first_child_start(ctx, node))
        elif isinstance(node, ast.Lambda) and ctx.enabled("P4-09"):
            _keyword(ctx, node, "lambda", "fun", "P4-09", _first_child_start(ctx, node))
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and ctx.enabled("P4-10"):
            _keyword(ctx, node, "import", "use", "P4-10", _first_child_start(ctx, node))


def _fix_handler(ctx: Context, node: ast.ExceptHandler) -> None:
    start = ctx.src.span(node)[0]
    token = ctx.src.find_name_token("except", start, start + 6)
    if token is None:
        return
    new = "catch" if ctx.enabled("P4-06") else "except"
    if ctx.enabled("P4-06"):
        ctx.hit("P4-06", token.start)
    if node.type is None and ctx.enabled("P4-28"):
        new += " BaseException"
        ctx.hit("P4-28", token.start)
    if new != "except":
        ctx.patches.local(node, token.start, token.end, new)
