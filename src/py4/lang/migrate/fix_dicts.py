"""P4-15 (`{}` is the empty set: an empty dict is `{:}`) and P4-16 (iterating a
Python-4 dict yields `(key, value)` pairs).

Every place that iterates a value — `for`, comprehensions, `*x`, `yield from` and
the builtins that consume an iterable — is checked: a known Python-4 dict (a display,
comprehension or `dict(...)` call, or a name only ever bound to one) is iterated as
`d.keys()`; a value of unknown type goes through `py3_iter(x)`, which iterates like
Python 3 whatever it is; lists, strings, ranges, iterators and dicts made outside
Python-4 code (Counter, defaultdict, OrderedDict) are left alone.
"""

from __future__ import annotations

import ast

from py4.lang.migrate.context import Context
from py4.lang.migrate.infer import PLAIN_ITERABLES

RULES = ("P4-15", "P4-16")
# Builtins that iterate all their positional arguments / only some of them.
_ITERATE_ALL = frozenset({"list", "tuple", "set", "frozenset", "sorted", "reversed", "iter",
                          "enumerate", "zip", "sum", "any", "all"})
_ITERATE_FROM = {"map": 1, "filter": 1}
_ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Dict, ast.DictComp,
          ast.List, ast.Tuple, ast.Set, ast.ListComp, ast.SetComp, ast.Constant)


def fix(ctx: Context) -> None:
    for node in ast.walk(ctx.tree):
        if ctx.enabled("P4-15") and isinstance(node, ast.Dict) and not node.keys \
                and ctx.patches.has(node):
            ctx.patches.replace(node, ["{:}"])
            ctx.hit("P4-15", node)
    if not ctx.enabled("P4-16"):
        return
    for iterable in iterated_expressions(ctx):
        fix_iteration(ctx, iterable)


def iterated_expressions(ctx: Context) -> list[ast.AST]:
    """Expressions whose value the program iterates (dict iteration would differ)."""
    found = []
    for node in ast.walk(ctx.tree):
        if isinstance(node, (ast.For, ast.AsyncFor)):
            found.append(node.iter)
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            found.extend(gen.iter for gen in node.generators)
        elif isinstance(node, ast.Starred) and isinstance(node.ctx, ast.Load):
            found.append(node.value)
        elif isinstance(node, ast.YieldFrom):
            found.append(node.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            positional = [a for a in node.args if not isinstance(a, ast.Starred)]
            name = node.func.id
            if name in _ITERATE_ALL and ctx.types.is_builtin(node.func, name):
                found.extend(positional)
            elif name in ("min", "max") and len(node.args) == 1 \
                    and ctx.types.is_builtin(node.func, name):
                found.extend(positional)
            elif name in _ITERATE_FROM and ctx.types.is_builtin(node.func, name):
                found.extend(positional[_ITERATE_FROM[name]:])
    return [node for node in found if ctx.patches.has(node)]


def fix_iteration(ctx: Context, iterable: ast.AST) -> None:
    kind = ctx.type_of(iterable)
    if kind in PLAIN_ITERABLES or kind in ("mapping", "nnint", "int", "float", "bool", "none", "func", "class",
                                           "module"):
        return
    ctx.hit("P4-16", iterable)
    if kind == "dict":
        if isinstance(iterable, _ATOMS):
            ctx.patches.wrap(iterable, "", ".keys()")
        else:
            ctx.patches.wrap(iterable, "(", ").keys()")
    else:
        ctx.patches.wrap(iterable, "py3_iter(", ")")
