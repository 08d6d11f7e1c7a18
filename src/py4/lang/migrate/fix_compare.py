"""Comparisons: P4-11 (chained comparisons are gone: `a < b < c` → `a < b and b < c`,
the middle operand bound once with `:=` unless it is a plain name/attribute/constant),
P4-27 (`x == None` → `x is nil`) and P4-30 (`type(x) == T` → `type(x) is T`; identity
is what type equality means, so behaviour is kept where `isinstance` would not)."""

from __future__ import annotations

import ast

from py4.lang.migrate.context import Context

RULES = ("P4-11", "P4-27", "P4-30")
_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
        ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _identity_op(ctx: Context, left: ast.AST, op: ast.cmpop, right: ast.AST) -> tuple[str, str] | None:
    """(rule, new operator) when `left op right` should compare by identity."""
    if not isinstance(op, (ast.Eq, ast.NotEq)):
        return None
    new = "is" if isinstance(op, ast.Eq) else "is not"
    if (_is_none(left) or _is_none(right)) and ctx.enabled("P4-27"):
        return "P4-27", new
    is_type_call = [ctx.is_builtin_call(n, "type") and len(n.args) == 1 and not n.keywords
                    for n in (left, right)]
    if any(is_type_call) and ctx.enabled("P4-30"):
        return "P4-30", new
    return None


def fix(ctx: Context) -> None:
    for node in ast.walk(ctx.tree):
        if not (isinstance(node, ast.Compare) and ctx.patches.has(node)):
            continue
        if len(node.ops) > 1:
            if ctx.enabled("P4-11"):
                _unchain(ctx, node)
            else:
                _operators_in_place(ctx, node)
        else:
            _operators_in_place(ctx, node)


def _operators_in_place(ctx: Context, node: ast.Compare) -> None:
    operands = [node.left, *node.comparators]
    for left, op, right in zip(operands, node.ops, operands[1:], strict=False):  # operands: one more than ops
        change = _identity_op(ctx, left, op, right)
        if change is None:
            continue
        rule, new = change
        start, end = ctx.patches.span(left)[1], ctx.patches.span(right)[0]
        for tok in ctx.src.tokens_between(start, end):
            if tok.string in ("==", "!="):
                text = ctx.src.text
                # `x==None` has no spaces to keep `is` apart from its operands
                before = "" if text[tok.start - 1].isspace() else " "
                after = "" if text[tok.end].isspace() else " "
                ctx.patches.local(node, tok.start, tok.end, before + new + after)
                ctx.hit(rule, node)
                break


def _unchain(ctx: Context, node: ast.Compare) -> None:
    operands = [node.left, *node.comparators]
    uses = [([operands[0]], [operands[0]])]
    for index, operand in enumerate(operands[1:], start=1):
        if index == len(operands) - 1:
            uses.append(([operand], [operand]))
            continue
        once = ctx.evaluate_once(operand)
        if once is None:
            ctx.cannot_convert(node, "chained comparison whose middle operand cannot be "
                               "evaluated twice here")
            return
        uses.append(once)
    parts: list = []
    for index, op in enumerate(node.ops):
        left_use = uses[index][1] if index else uses[0][0]
        right_use = uses[index + 1][0]
        change = _identity_op(ctx, operands[index], op, operands[index + 1])
        op_text = _OPS[type(op)]
        if change is not None:
            ctx.hit(change[0], node)
            op_text = change[1]
        parts += ([" and "] if index else []) + [*left_use, f" {op_text} ", *right_use]
    parent = ctx.parent(node)
    if isinstance(parent, (ast.UnaryOp, ast.BinOp, ast.Compare, ast.Attribute, ast.Subscript,
                           ast.Await)):
        parts = ["(", *parts, ")"]
    ctx.patches.replace(node, parts)
    ctx.hit("P4-11", node)
