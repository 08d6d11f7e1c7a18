"""Methods: P4-17 (`xs.pop()` takes the first item), P4-18 (`xs.join(sep)`), P4-24
(`str.strip/lstrip/rstrip` are `trim/trim_start/trim_end`).

Each rewrite needs the receiver's type: a known list / str gets the idiomatic form,
a known other type (dict, set, deque, bytes, module) is left alone, and an unknown
type gets a form that decides at run time (`py3_pop`, or a conditional on
`isinstance(x, str)`), or "cannot convert" when that would evaluate something twice.
"""

from __future__ import annotations

import ast

from py4.lang.migrate.context import Context
from py4.lang.migrate.fix_bounds import int_literal
from py4.lang.migrate.infer import PLAIN_ITERABLES

RULES = ("P4-17", "P4-18", "P4-24")
_STRIPS = {"strip": "trim", "lstrip": "trim_start", "rstrip": "trim_end"}
_NOT_LIST = frozenset({"dict", "mapping", "set", "deque", "str", "bytes", "tuple", "module"})
_ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.List, ast.Tuple,
          ast.ListComp, ast.GeneratorExp, ast.Dict, ast.Set, ast.DictComp, ast.SetComp,
          ast.Constant)


def fix(ctx: Context) -> None:
    for node in ast.walk(ctx.tree):
        if not ctx.patches.has(node):
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr = node.func.attr
            if attr == "pop" and ctx.enabled("P4-17"):
                _fix_pop(ctx, node)
            elif attr == "join" and ctx.enabled("P4-18"):
                _fix_join(ctx, node)
        if isinstance(node, ast.Attribute) and node.attr in _STRIPS and ctx.enabled("P4-24") \
                and isinstance(node.ctx, ast.Load):
            _fix_strip(ctx, node)


def _module_rooted(ctx: Context, node: ast.AST) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and ctx.type_of(node) == "module"


# -- P4-17 --------------------------------------------------------------------------
def _fix_pop(ctx: Context, node: ast.Call) -> None:
    assert isinstance(node.func, ast.Attribute)  # a `.pop(...)` call
    receiver = node.func.value
    kind = ctx.type_of(receiver)
    if node.keywords or len(node.args) > 1 or kind in _NOT_LIST or _module_rooted(ctx, receiver):
        return
    arg = node.args[0] if node.args else None
    if arg is not None:
        value = int_literal(arg)
        arg_type = ctx.type_of(arg)
        if (value is not None and value >= 0) or arg_type in ("nnint", "str", "tuple") \
                or isinstance(arg, ast.Constant):
            return
        if kind == "list" and value is not None and ctx.is_simple(receiver):
            ctx.patches.replace(arg, ["len(", receiver, f") - {-value}"])
        else:
            ctx.patches.replace(node, ["py3_pop(", receiver, ", ", arg, ")"])
    elif kind == "list" and ctx.is_simple(receiver):
        ctx.patches.replace(node, [receiver, ".pop(len(", receiver, ") - 1)"])
    else:
        ctx.patches.replace(node, ["py3_pop(", receiver, ")"])
    ctx.hit("P4-17", node)


# -- P4-18 --------------------------------------------------------------------------
def _iterable_template(ctx: Context, items: ast.AST) -> list:
    kind = ctx.type_of(items)
    if kind in ("str", "bytes"):
        return ["list(", items, ")"]
    if kind == "dict":
        return [items, ".keys()"] if isinstance(items, _ATOMS) else ["(", items, ").keys()"]
    if kind in PLAIN_ITERABLES or kind == "mapping":
        return [items] if isinstance(items, _ATOMS) else ["(", items, ")"]
    return ["py3_iter(", items, ")"]


def _fix_join(ctx: Context, node: ast.Call) -> None:
    assert isinstance(node.func, ast.Attribute)  # a `.join(...)` call
    sep = node.func.value
    if node.keywords or len(node.args) != 1 or isinstance(node.args[0], ast.Starred):
        return
    if _module_rooted(ctx, sep):
        return
    items = node.args[0]
    kind = ctx.type_of(sep)
    if kind in ("str", "bytes"):
        ctx.patches.replace(node, _iterable_template(ctx, items) + [".join(", sep, ")"])
        ctx.hit("P4-18", node)
        return
    if kind != "unknown":
        return  # a list, a thread, …: its own join
    once = ctx.evaluate_once(sep)
    if once is None:
        ctx.cannot_convert(node, "`x.join(y)` where x may be a str (Python 3 join) or "
                           "another object, and x cannot be evaluated twice")
        return
    first, later = once
    ctx.patches.replace(node, ["(", *_iterable_template(ctx, items), ".join(", *later,
                               ") if isinstance(", *first, ", (str, bytes)) else ",
                               *later, ".join(", items, "))"])
    ctx.hit("P4-18", node)


# -- P4-24 --------------------------------------------------------------------------
def _fix_strip(ctx: Context, node: ast.Attribute) -> None:
    receiver = node.value
    kind = ctx.type_of(receiver)
    new = _STRIPS[node.attr]
    if kind == "str" or ctx.types.is_builtin(receiver, "str"):
        end = ctx.src.span(node)[1]
        ctx.patches.local(node, end - len(node.attr), end, new)
        ctx.hit("P4-24", node)
        return
    if kind != "unknown":
        return  # bytes, a user object: Python 3's method, unchanged
    once = ctx.evaluate_once(receiver)
    if once is None:
        ctx.cannot_convert(node, f"`.{node.attr}` on a value that may or may not be a str "
                           "and cannot be evaluated twice")
        return
    first, later = once
    ctx.patches.replace(node, ["(", *later, f".{new} if isinstance(", *first, ", str) else ",
                               *later, f".{node.attr})"])
    ctx.hit("P4-24", node)
