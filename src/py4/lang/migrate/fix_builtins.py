"""Builtins whose meaning changed: P4-19 `enumerate` counts from 1 (→ `start=0`),
P4-20 `zip` is strict (→ `zip_shortest`), P4-21 `sum` refuses bools (→ `count(...)`
over bools, `py3_sum` when items may be bools), P4-22 `round` rounds halves away from
zero (→ `py3_round` unless the argument is an int)."""

from __future__ import annotations

import ast

from py4.lang.migrate.context import Context
from py4.lang.migrate.infer import NUMBERS

RULES = ("P4-19", "P4-20", "P4-21", "P4-22")


def fix(ctx: Context) -> None:
    for node in ast.walk(ctx.tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and ctx.patches.has(node)):
            continue
        name = node.func.id
        if not ctx.types.is_builtin(node.func, name):
            continue
        if name == "enumerate" and ctx.enabled("P4-19"):
            _fix_enumerate(ctx, node)
        elif name == "zip" and ctx.enabled("P4-20"):
            _fix_zip(ctx, node)
        elif name == "sum" and ctx.enabled("P4-21"):
            _fix_sum(ctx, node)
        elif name == "round" and ctx.enabled("P4-22"):
            _fix_round(ctx, node)


def _append_argument(ctx: Context, node: ast.Call, text: str) -> None:
    end = ctx.src.span(node)[1] - 1  # the closing parenthesis
    last = max((ctx.patches.span(a)[1] for a in node.args + node.keywords), default=None)
    between = ctx.src.text[last:end] if last is not None else ""
    sep = "" if last is None else (" " if "," in between else ", ")
    ctx.patches.insert(node, end if last is None or "," in between else last, sep + text)


def _fix_enumerate(ctx: Context, node: ast.Call) -> None:
    if len(node.args) >= 2 or any(k.arg in ("start", None) for k in node.keywords):
        return
    if any(isinstance(a, ast.Starred) for a in node.args):
        ctx.cannot_convert(node, "enumerate(*args): cannot tell whether a start is given")
        return
    _append_argument(ctx, node, "start=0")
    ctx.hit("P4-19", node)


def _fix_zip(ctx: Context, node: ast.Call) -> None:
    strict = [k for k in node.keywords if k.arg == "strict"]
    if strict:
        value = strict[0].value
        if isinstance(value, ast.Constant) and value.value is True:
            return  # Python-4's zip is strict already and accepts strict=True
        ctx.cannot_convert(node, "zip(..., strict=<not True>)")
        return
    if any(k.arg is None for k in node.keywords):
        ctx.cannot_convert(node, "zip(**kwargs): cannot tell whether strict is given")
        return
    ctx.patches.replace(node.func, ["zip_shortest"])
    ctx.hit("P4-20", node)


def _item_type(ctx: Context, iterable: ast.AST) -> str:
    if isinstance(iterable, (ast.GeneratorExp, ast.ListComp, ast.SetComp)):
        return ctx.type_of(iterable.elt)
    if isinstance(iterable, (ast.List, ast.Tuple, ast.Set)) and iterable.elts:
        kinds = {ctx.type_of(e) for e in iterable.elts}
        if kinds <= {"nnint", "int"}:
            return "int"
        return kinds.pop() if len(kinds) == 1 else "unknown"
    scope = ctx.scopes.scope_at(iterable)
    return ctx.types.element_type(iterable, scope)


def _fix_sum(ctx: Context, node: ast.Call) -> None:
    if not node.args or isinstance(node.args[0], ast.Starred):
        return
    item = _item_type(ctx, node.args[0])
    if item in NUMBERS:
        return
    if item == "bool" and len(node.args) == 1 and not node.keywords:
        ctx.patches.replace(node.func, ["count"])
    else:
        ctx.patches.replace(node.func, ["py3_sum"])
    ctx.hit("P4-21", node)


def _fix_round(ctx: Context, node: ast.Call) -> None:
    if len(node.args) == 1 and not node.keywords and ctx.type_of(node.args[0]) in ("nnint", "int", "bool"):
        return
    ctx.patches.replace(node.func, ["py3_round"])
    ctx.hit("P4-22", node)
