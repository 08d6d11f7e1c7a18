"""P4-26: mutable default parameter values (`def f(xs=[])`).

Python 3 shares one default object between calls; rebuilding it per call (`xs=nil`
plus `if xs is nil: xs = []`) behaves the same only when the function never lets the
object change or escape. So the rewrite happens only when every use of the
parameter is a read that cannot mutate or leak it (iteration, `len`, `in`, indexing,
truth tests, non-mutating methods); anything else is reported as "cannot convert".
"""

from __future__ import annotations

import ast

from py4.lang.migrate.context import Context
from py4.lang.migrate.fix_annotations import is_mutable_default, parameters_with_defaults

RULES = ("P4-26",)
_READ_METHODS = frozenset({"copy", "count", "index", "get", "keys", "values", "items",
                           "issubset", "issuperset", "isdisjoint", "union", "intersection",
                           "difference", "symmetric_difference"})
_READ_BUILTINS = frozenset({"len", "list", "tuple", "set", "frozenset", "sorted", "sum", "min",
                            "max", "any", "all", "bool", "str", "repr", "print", "enumerate",
                            "reversed", "dict", "iter", "zip"})


def fix(ctx: Context) -> None:
    if not ctx.enabled("P4-26"):
        return
    for node in ast.walk(ctx.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for param, default in parameters_with_defaults(node.args):
                if default is not None and is_mutable_default(ctx, default):
                    _fix_default(ctx, node, param, default)
        elif isinstance(node, ast.Lambda):
            for _param, default in parameters_with_defaults(node.args):
                if default is not None and is_mutable_default(ctx, default):
                    ctx.cannot_convert(default, "mutable default of a `fun` (lambda)")


def _elements_immutable(default: ast.AST) -> bool:
    if isinstance(default, (ast.List, ast.Set)):
        return all(isinstance(e, ast.Constant) for e in default.elts)
    if isinstance(default, ast.Dict):
        return all(isinstance(v, ast.Constant) for v in default.values) and None not in default.keys
    if isinstance(default, ast.Call):
        return not default.args and not default.keywords
    return False


def _fix_default(ctx: Context, func: ast.FunctionDef | ast.AsyncFunctionDef, param: ast.arg,
                 default: ast.AST) -> None:
    problem = None if _elements_immutable(default) else "its elements are computed or mutable"
    problem = problem or _unsafe_use(ctx, func, param.arg)
    body = func.body
    index = 1 if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                  and isinstance(body[0].value.value, str)) else 0
    if problem is None and index < len(body):
        first = body[index]
        offset = ctx.patches.span(first)[0]
        if getattr(first, "decorator_list", None):
            offset = ctx.src.text.rindex("@", 0, offset)
        indent = ctx.src.indent_at(offset)
        if indent is None:
            problem = "the function body is on the `def` line"
        else:
            layers = len(ctx.patches.info[id(default)].layers)
            ctx.patches.insert_template(func, offset, [
                f"if {param.arg} is nil:\n{indent}    {param.arg} = ", (default, layers),
                f"\n{indent}"])
    if problem is not None:
        ctx.cannot_convert(default, f"mutable default of `{param.arg}` cannot be rebuilt per "
                           f"call: {problem}")
        return
    ctx.patches.replace(default, ["nil"], override=True)
    ctx.converted_defaults.add(id(default))
    ctx.hit("P4-26", default)


def _unsafe_use(ctx: Context, func: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> str | None:
    """Why using parameter `name` inside `func` could observe sharing, or None."""
    inner = ctx.scopes.owned_scope(func)
    for node in ast.walk(func):
        if node is func or not isinstance(node, ast.Name) or node.id != name:
            continue
        scope = ctx.scopes.scope_at(node)
        if ctx.scopes.resolve(scope, name) is not inner:
            continue
        if scope is not inner and scope.kind != "comprehension":
            return "a nested function uses it"
        if isinstance(node.ctx, ast.Store):
            return "it is reassigned"
        if isinstance(node.ctx, ast.Del) or not _read_only_use(ctx, node):
            return f"`{name}` may be mutated, returned or passed on"
    return None


def _read_only_use(ctx: Context, node: ast.Name) -> bool:
    parent = ctx.parent(node)
    if isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is node:
        return True
    if isinstance(parent, ast.Compare):
        return node is not parent.left or isinstance(parent.ops[0], (ast.Eq, ast.NotEq))
    if isinstance(parent, ast.Subscript) and parent.value is node:
        return isinstance(parent.ctx, ast.Load)
    if isinstance(parent, ast.Attribute) and parent.value is node:
        grand = ctx.parent(parent)
        return parent.attr in _READ_METHODS and isinstance(grand, ast.Call) and grand.func is parent
    if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and parent.test is node:
        return True
    if isinstance(parent, (ast.UnaryOp, ast.BoolOp)) and isinstance(ctx.parent(parent), (ast.If, ast.While)):
        return True
    if isinstance(parent, ast.Call) and node in parent.args and isinstance(parent.func, ast.Name) \
            and parent.func.id in _READ_BUILTINS and ctx.types.is_builtin(parent.func, parent.func.id):
        return True
    return False
