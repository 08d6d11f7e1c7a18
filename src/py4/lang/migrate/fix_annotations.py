"""P4-05: every `fn` annotates its parameters and return type.

Types come from what the code shows: a parameter's default (`n=0` → `n: int = 0`)
and the function's `return` statements (all ints → `-> int`, no value → `-> nil`);
otherwise `object`. Annotations of builtins only, so evaluating them at definition
time cannot fail; they change nothing else a program can observe short of reading
`__annotations__`.
"""

from __future__ import annotations

import ast
import tokenize

from py4.lang.migrate.context import Context
from py4.lang.migrate.infer import own_nodes

RULES = ("P4-05",)
_NAMES = {"nnint": "int", "int": "int", "float": "float", "str": "str", "bool": "bool",
          "list": "list", "dict": "dict", "tuple": "tuple", "set": "set", "bytes": "bytes"}
MUTABLE_DEFAULT_CALLS = frozenset({"list", "dict", "set", "bytearray"})


def is_mutable_default(ctx: Context, node: ast.AST) -> bool:
    return isinstance(node, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)) \
        or (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in MUTABLE_DEFAULT_CALLS)


def parameters_with_defaults(args: ast.arguments) -> list[tuple[ast.arg, ast.AST | None]]:
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs: list[tuple[ast.arg, ast.AST | None]] = list(zip(positional, defaults, strict=True))
    pairs += list(zip(args.kwonlyargs, args.kw_defaults, strict=True))
    return pairs


def _type_name(ctx: Context, node: ast.AST | None) -> str:
    if node is None:
        return "object"
    return _NAMES.get(ctx.type_of(node), "object")


def fix(ctx: Context) -> None:
    if not ctx.enabled("P4-05"):
        return
    for node in ast.walk(ctx.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _annotate(ctx, node)


def _annotate(ctx: Context, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
    in_class = ctx.scopes.scope_at(node).kind == "class"
    positional = [*node.args.posonlyargs, *node.args.args]
    changed = False
    for param, default in parameters_with_defaults(node.args) + [
            (node.args.vararg, None), (node.args.kwarg, None)]:
        if param is None or param.annotation is not None:
            continue
        if in_class and positional and param is positional[0] and param.arg in ("self", "cls"):
            continue
        kind = _type_name(ctx, default)
        if default is not None and id(default) in ctx.converted_defaults:
            kind += " | nil"
        elif default is not None and isinstance(default, ast.Constant) and default.value is None:
            kind = "object"
        end = ctx.src.span(param)[1]
        ctx.patches.insert(param, end, f": {kind}")
        if default is not None:  # PEP 8: `x: int = 0`, not `x: int=0`
            default_start = ctx.patches.span(default)[0]
            if ctx.src.text[end:default_start] == "=":
                ctx.patches.local(node, end, default_start, " = ")
        changed = True
    if node.returns is None:
        offset = _signature_colon(ctx, node)
        if offset is not None:
            ctx.patches.insert(node, offset, f" -> {_return_type(ctx, node)}")
            changed = True
    if changed:
        ctx.hit("P4-05", node)


def _signature_colon(ctx: Context, node: ast.FunctionDef | ast.AsyncFunctionDef) -> int | None:
    """Offset just after the `)` that closes the parameter list."""
    start = ctx.src.span(node)[0]
    body_start = ctx.patches.span(node.body[0])[0]
    depth, seen_open = 0, False
    for tok in ctx.src.tokens_between(start, body_start):
        if tok.type != tokenize.OP:
            continue
        if tok.string == "(":
            depth += 1
            seen_open = True
        elif tok.string == ")":
            depth -= 1
            if depth == 0 and seen_open:
                return tok.end
    return None


def _return_type(ctx: Context, node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    if isinstance(node, ast.AsyncFunctionDef):
        return "object"
    returns, generator = [], False
    for inner in own_nodes(node):
        if isinstance(inner, (ast.Yield, ast.YieldFrom)):
            generator = True
        elif isinstance(inner, ast.Return) and inner.value is not None:
            returns.append(inner.value)
    if generator:
        return "object"
    if not returns:
        return "nil"
    names = {_type_name(ctx, value) if not (isinstance(value, ast.Constant) and value.value is None)
             else "nil" for value in returns}
    return names.pop() if len(names) == 1 and "nil" not in names else "object"
