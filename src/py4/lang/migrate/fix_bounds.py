"""Bounds: P4-12 (`range` is closed), P4-13 (slices include their end), P4-14 (no
counting from the end: negative literal indices are errors, negative run-time indices
on sequences raise).

- `range(n)` → `range(0, n - 1)` (`indices(xs)` when n is `len(xs)`); `range(a, b)` →
  `range(a, b - 1)`; with a literal step the end moves towards the start by one; an
  unknown step → `py3_range`.
- `xs[a:b]` → `xs[a:b - 1]` when every bound is provably >= 0 or a negative literal
  (`xs[-k:]` → `xs[len(xs) - k:]`); otherwise `py3_slice(xs, a, b, s)` (loads) or
  "cannot convert" (assignment targets).
- `xs[-1]` → `last(xs)`, `xs[-k]` → `xs[len(xs) - k]` on known sequences; an index
  that may be negative at run time on what may be a sequence → `py3_index(xs, i)`.
"""

from __future__ import annotations

import ast

from py4.lang.migrate.context import Context
from py4.lang.migrate.infer import MAPPINGS, SEQUENCES

RULES = ("P4-12", "P4-13", "P4-14")
_LOW_PRECEDENCE = (ast.BoolOp, ast.Compare, ast.IfExp, ast.Lambda, ast.NamedExpr)
_ADDITIVE_OK = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.MatMult, ast.Pow)


def int_literal(node: ast.AST) -> int | None:
    """The value of an int literal (`3`, `-3`), else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
            and isinstance(node.operand, ast.Constant) and type(node.operand.value) is int:
        return -node.operand.value
    return None


def is_negative_literal(node: ast.AST | None) -> bool:
    return (node is not None and isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
            and isinstance(node.operand, ast.Constant)
            and type(node.operand.value) in (int, float, complex))


def shifted(ctx: Context, node: ast.AST, delta: int) -> list:
    """A template for `node + delta`, folded where the text allows (`n + 1` - 1 → `n`)."""
    value = int_literal(node)
    if value is not None:
        return [str(value + delta)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        k = int_literal(node.right)
        if k is not None and k >= 0 and not isinstance(node.right, ast.UnaryOp):
            total = (k if isinstance(node.op, ast.Add) else -k) + delta
            if total == 0:
                return [node.left]
            return [node.left, f" + {total}" if total > 0 else f" - {-total}"]
    operand: list = [node]
    needs_parens = isinstance(node, _LOW_PRECEDENCE) or (
        isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)) or (
        isinstance(node, ast.BinOp) and not isinstance(node.op, _ADDITIVE_OK))
    if needs_parens:
        operand = ["(", node, ")"]
    return operand + ([f" + {delta}"] if delta > 0 else [f" - {-delta}"])


def fix(ctx: Context) -> None:
    for node in ast.walk(ctx.tree):
        if not ctx.patches.has(node) or id(node) in ctx.in_annotation:
            continue
        if isinstance(node, ast.Call) and ctx.types.is_builtin(node.func, "range"):
            if ctx.enabled("P4-12"):
                _fix_range(ctx, node)
        elif isinstance(node, ast.Subscript):
            if isinstance(node.slice, ast.Slice):
                _fix_slice(ctx, node)
            elif not isinstance(node.slice, ast.Tuple):
                _fix_index(ctx, node)


# -- P4-12 -----------------------------------------------------------------------------
def _fix_range(ctx: Context, node: ast.Call) -> None:
    args = node.args
    if node.keywords or any(isinstance(a, ast.Starred) for a in args) or not 1 <= len(args) <= 3:
        ctx.patches.replace(node.func, ["py3_range"])
        ctx.hit("P4-12", node)
        return
    ctx.hit("P4-12", node)
    if len(args) == 1:
        (n,) = args
        if ctx.is_builtin_call(n, "len") and len(n.args) == 1 and not n.keywords \
                and not isinstance(n.args[0], ast.Starred):
            ctx.patches.replace(node, ["indices(", n.args[0], ")"])
        else:
            ctx.patches.replace(n, ["0, "] + shifted(ctx, n, -1))
        return
    if len(args) == 2:
        ctx.patches.replace(args[1], shifted(ctx, args[1], -1))
        return
    step = int_literal(args[2])
    if step is None:
        ctx.patches.replace(node.func, ["py3_range"])
    elif step > 0:
        ctx.patches.replace(args[1], shifted(ctx, args[1], -1))
    elif step < 0:
        ctx.patches.replace(args[1], shifted(ctx, args[1], +1))


# -- P4-13 / P4-14 slices ------------------------------------------------------------------
def _bound_kind(ctx: Context, node: ast.AST | None) -> str:
    if node is None:
        return "none"
    value = int_literal(node)
    if value is not None:
        return "negative" if value < 0 else "nonneg"
    return "nonneg" if ctx.type_of(node) in ("nnint",) else "unknown"


def _fix_slice(ctx: Context, node: ast.Subscript) -> None:
    sl = node.slice
    assert isinstance(sl, ast.Slice)  # fix() sends only slices here
    kinds = [_bound_kind(ctx, sl.lower), _bound_kind(ctx, sl.upper)]
    step = 1 if sl.step is None else int_literal(sl.step)
    has_negative = "negative" in kinds
    seq = node.value
    is_load = isinstance(node.ctx, ast.Load)
    if kinds == ["none", "none"] and step is not None:
        return  # `xs[:]`, `xs[::-1]`: the same in both languages
    if step == 0:
        return  # ValueError in both
    exact = step is not None and "unknown" not in kinds and (not has_negative or ctx.is_simple(seq))
    if not exact:
        if not ctx.enabled("P4-13"):
            if has_negative and ctx.enabled("P4-14"):
                _negative_bounds_only(ctx, node, is_load)
            return
        if is_load:
            parts = ["py3_slice(", seq]
            for bound in (sl.lower, sl.upper, sl.step):
                parts += [", ", bound] if bound is not None else [", nil"]
            ctx.patches.replace(node, parts + [")"])
            ctx.hit("P4-13", node)
            if has_negative:
                ctx.hit("P4-14", node)
        else:
            ctx.cannot_convert(node, "slice target whose bounds may be negative or whose "
                               "step is not a literal")
        return
    assert step is not None  # `exact` says so
    lower_delta, upper_delta = 0, (-1 if step > 0 else 1)
    for bound, kind, delta in ((sl.lower, kinds[0], lower_delta), (sl.upper, kinds[1], upper_delta)):
        if kind == "none" or bound is None:  # the same: "none" is the kind of an absent bound
            continue
        fix13 = ctx.enabled("P4-13") and delta != 0
        literal = int_literal(bound)
        if kind == "negative" and ctx.enabled("P4-14"):
            assert literal is not None  # "negative" is the kind of a negative literal
            k = -literal - (delta if fix13 else 0)
            ctx.patches.replace(bound, ["len(", seq, ")" + (f" - {k}" if k > 0 else (f" + {-k}" if k < 0 else ""))])
            ctx.hit("P4-14", bound)
        elif fix13 and literal is not None and literal + delta < 0:
            ctx.patches.replace(bound, [bound, f" - {-delta}"])  # `0 - 1`: no negative literal
        elif fix13:
            ctx.patches.replace(bound, shifted(ctx, bound, delta))
        if fix13:
            ctx.hit("P4-13", bound)


def _negative_bounds_only(ctx: Context, node: ast.Subscript, is_load: bool) -> None:
    """P4-14 without P4-13: spell negative literal bounds from the end, keep exclusivity."""
    sl = node.slice
    assert isinstance(sl, ast.Slice)  # called from _fix_slice
    if not ctx.is_simple(node.value):
        ctx.cannot_convert(node, "negative slice bound on an expression that cannot be "
                           "evaluated twice")
        return
    for bound in (sl.lower, sl.upper):
        value = int_literal(bound) if bound is not None else None
        if bound is not None and value is not None and value < 0:
            ctx.patches.replace(bound, ["len(", node.value, f") - {-value}"])
            ctx.hit("P4-14", bound)


# -- P4-14 indices ---------------------------------------------------------------------------
def _fix_index(ctx: Context, node: ast.Subscript) -> None:
    if not ctx.enabled("P4-14"):
        return
    seq, index = node.value, node.slice
    value = int_literal(index)
    receiver = ctx.type_of(seq)
    index_type = ctx.type_of(index)
    is_load = isinstance(node.ctx, ast.Load)
    if receiver in MAPPINGS or receiver in ("class", "module", "func"):
        if value is not None and value < 0:  # a key, not a position: spell it `0 - k`
            assert isinstance(index, ast.UnaryOp)  # a parsed negative literal is `-` applied to one
            ctx.hit("P4-14", index)
            ctx.patches.replace(index, ["0 - ", index.operand])
        return
    if value is not None and value >= 0:
        return
    if value is None and (index_type in ("nnint", "str", "bool", "tuple", "float", "none")
                          or isinstance(index, ast.Constant)):
        return
    if value is not None:  # a negative literal
        ctx.hit("P4-14", index)
        if receiver in SEQUENCES and value == -1 and is_load:
            ctx.patches.replace(node, ["last(", seq, ")"])  # evaluates seq once
        elif receiver in SEQUENCES and ctx.is_simple(seq):
            ctx.patches.replace(index, ["len(", seq, f") - {-value}"])
        elif is_load:
            ctx.patches.replace(node, ["py3_index(", seq, ", ", index, ")"])
        elif ctx.is_simple(seq):
            ctx.patches.replace(index, ["py3_position(", seq, ", ", index, ")"])
        else:
            ctx.cannot_convert(node, "negative literal index in an assignment target whose "
                               "receiver cannot be evaluated twice")
        return
    if is_load:  # may be negative at run time on a sequence
        ctx.patches.replace(node, ["py3_index(", seq, ", ", index, ")"])
        ctx.hit("P4-14", index)
    elif isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
        # `ys[-i] = v` counts from the end whenever `i` > 0: the negation says it means to
        if not ctx.is_simple(seq):
            ctx.cannot_convert(node, "negated index in an assignment target whose receiver "
                               "cannot be evaluated twice")
            return
        ctx.patches.replace(index, ["py3_position(", seq, ", ", index, ")"])
        ctx.hit("P4-14", index)
