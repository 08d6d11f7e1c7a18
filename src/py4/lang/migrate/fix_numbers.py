"""P4-23 (int `//`, `%` and `divmod` truncate toward zero) and P4-25 (`%`-formatting
of a str literal is deprecated).

`a // b` and `a % b` keep their form when both sides are provably non-negative ints or
either side is a float; `x % k` whose only use is its truth (`if x % 2:`,
`x % 3 == 0`) keeps it too, since truncation changes only the sign. Everything else
becomes `py3_floordiv` / `py3_mod` / `py3_divmod`. A `%`-format with a str literal on
the left becomes `.format(...)` when every specifier has an exact equivalent for the
argument types, else `py3_mod(fmt, args)`.
"""

from __future__ import annotations

import ast
import re

from py4.lang.migrate.context import Context
from py4.lang.migrate.fix_bounds import int_literal

RULES = ("P4-23", "P4-25")
_SAFE_LEFT = frozenset({"nnint", "bool"})
_FLOATISH = frozenset({"float"})
_HELPER = {ast.FloorDiv: "py3_floordiv", ast.Mod: "py3_mod"}
_SPEC = re.compile(r"%(?P<flags>[-+ 0#]*)(?P<width>\d*)(?:\.(?P<prec>\d+))?(?P<type>[sradifFeEgGxXoc%])")


def fix(ctx: Context) -> None:
    for node in ast.walk(ctx.tree):
        if not ctx.patches.has(node):
            continue
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            if _is_str_literal(node.left) and isinstance(node.op, ast.Mod):
                if ctx.enabled("P4-25"):
                    _fix_format(ctx, node)
            elif ctx.enabled("P4-23"):
                _fix_binop(ctx, node)
        elif isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.FloorDiv, ast.Mod)) \
                and ctx.enabled("P4-23"):
            _fix_augassign(ctx, node)
        elif isinstance(node, ast.Call) and ctx.enabled("P4-23") \
                and ctx.types.is_builtin(node.func, "divmod") and len(node.args) == 2:
            if not _same_in_both(ctx, node.args[0], node.args[1]):
                ctx.patches.replace(node.func, ["py3_divmod"])
                ctx.hit("P4-23", node)


def _is_str_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _same_in_both(ctx: Context, left: ast.AST, right: ast.AST) -> bool:
    lt, rt = ctx.type_of(left), ctx.type_of(right)
    if lt in _FLOATISH or rt in _FLOATISH:
        return True
    if lt == "str":  # str formatting: Python-4 keeps Python 3's
        return True
    return lt in _SAFE_LEFT and rt in _SAFE_LEFT


def _truth_only(ctx: Context, node: ast.BinOp) -> bool:
    """`node` (an int `%`) is used only for whether it is zero."""
    parent = ctx.parent(node)
    if isinstance(parent, ast.Compare) and len(parent.ops) == 1 \
            and isinstance(parent.ops[0], (ast.Eq, ast.NotEq)):
        other = parent.comparators[0] if parent.left is node else parent.left
        return int_literal(other) == 0
    if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and parent.test is node:
        return True
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
        return True
    if isinstance(parent, ast.comprehension) and node in parent.ifs:
        return True
    return False


def _fix_binop(ctx: Context, node: ast.BinOp) -> None:
    if _same_in_both(ctx, node.left, node.right):
        return
    if isinstance(node.op, ast.Mod) and _truth_only(ctx, node):
        return
    ctx.patches.replace(node, [_HELPER[type(node.op)] + "(", node.left, ", ", node.right, ")"])
    ctx.hit("P4-23", node)


def _fix_augassign(ctx: Context, node: ast.AugAssign) -> None:
    if _same_in_both(ctx, node.target, node.value):
        return
    target = node.target
    simple = ctx.is_simple(target) and not (isinstance(target, ast.Subscript)
                                             and isinstance(target.slice, ast.Slice))
    if not simple:
        ctx.cannot_convert(node, "augmented `//=` / `%=` on a target that cannot be "
                           "evaluated twice")
        return
    helper = _HELPER[type(node.op)]
    ctx.patches.replace(node, [target, f" = {helper}(", target, ", ", node.value, ")"])
    ctx.hit("P4-23", node)


# -- P4-25 --------------------------------------------------------------------------
def _fix_format(ctx: Context, node: ast.BinOp) -> None:
    converted = _to_format_call(ctx, node)
    if converted is None:
        ctx.patches.replace(node, ["py3_mod(", node.left, ", ", node.right, ")"])
    else:
        ctx.patches.replace(node, converted)
    ctx.hit("P4-25", node)


def _to_format_call(ctx: Context, node: ast.BinOp) -> list | None:
    token_text = ctx.text(node.left)
    prefix_len = 0
    while prefix_len < len(token_text) and token_text[prefix_len] not in "'\"":
        prefix_len += 1
    prefix = token_text[:prefix_len]
    if prefix.lower() not in ("", "r") or len(ctx.src.tokens_between(*ctx.src.span(node.left))) != 1:
        return None
    quote = 3 if token_text[prefix_len:prefix_len + 3] in ('"""', "'''") else 1
    body = token_text[prefix_len + quote:len(token_text) - quote]
    if isinstance(node.right, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in node.right.elts):
        args = list(node.right.elts)
    elif ctx.type_of(node.right) in ("str", "nnint", "int", "float", "bool", "list", "dict", "none"):
        args = [node.right]
    else:
        return None
    pieces, cursor, arg_index = [], 0, 0
    for match in _SPEC.finditer(body):
        pieces.append(body[cursor:match.start()].replace("{", "{{").replace("}", "}}"))
        cursor = match.end()
        if match["type"] == "%":
            if match.group(0) != "%%":
                return None
            pieces.append("%")
            continue
        if arg_index >= len(args):
            return None
        field = _field(match, ctx.type_of(args[arg_index]))
        if field is None:
            return None
        pieces.append(field)
        arg_index += 1
    rest = body[cursor:]
    if "%" in rest or arg_index != len(args):
        return None
    pieces.append(rest.replace("{", "{{").replace("}", "}}"))
    literal = token_text[:prefix_len + quote] + "".join(pieces) + token_text[len(token_text) - quote:]
    template: list = [literal, ".format("]
    for index, arg in enumerate(args):
        template += ([", "] if index else []) + [arg]
    return template + [")"]


def _field(match: re.Match, arg_type: str) -> str | None:
    flags, width, prec, kind = match["flags"], match["width"], match["prec"], match["type"]
    align = "<" if "-" in flags else ""
    sign = "+" if "+" in flags else (" " if " " in flags else "")
    alt = "#" if "#" in flags else ""
    zero = "0" if "0" in flags and not align else ""
    if kind in "sra":
        if sign or alt or zero:
            return None
        conv = "" if kind == "s" and arg_type in ("str", "nnint", "int", "float") else "!" + kind
        spec = (align or (">" if width else "")) + width + (f".{prec}" if prec else "")
        return "{" + conv + (":" + spec if spec else "") + "}"
    if kind in "di":
        if arg_type not in ("nnint", "int", "bool") or prec:
            return None
        return "{:" + align + sign + zero + width + "d}"
    if kind in "fFeEgG":
        if arg_type not in ("nnint", "int", "float", "num"):
            return None
        return "{:" + align + sign + alt + zero + width + (f".{prec}" if prec else "") + kind + "}"
    if kind in "xXo":
        if arg_type not in ("nnint", "int", "bool") or prec:
            return None
        return "{:" + align + sign + alt + zero + width + kind + "}"
    return None
