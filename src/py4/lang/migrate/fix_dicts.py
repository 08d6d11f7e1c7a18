"""P4-15 (`{}` is the empty set: an empty dict is `{:}`) and P4-16 (iterating a
Python-4 dict yields `(key, value)` pairs).

Every place that iterates a value — `for`, comprehensions, `*x`, `yield from` and
the builtins that consume an iterable — is checked: a known Python-4 dict (a display,
comprehension or `dict(...)` call, or a name only ever bound to one) is iterated as
`d.keys()`; a value of unknown type goes through `py3_iter(x)`, which iterates like
Python 3 whatever it is (`reversed(x)` becomes `py3_reversed(x)`: an iterator cannot be
reversed); lists, strings, ranges, iterators and dicts made outside
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
# Library functions that iterate their arguments as Python 3 would (a dict: its keys),
# and from which argument on.
_LIBRARY_ITERATE_FROM = {
    "itertools": {"chain": 0, "cycle": 0, "permutations": 0, "combinations": 0,
                  "combinations_with_replacement": 0, "product": 0, "zip_longest": 0,
                  "accumulate": 0, "groupby": 0, "islice": 0, "tee": 0, "pairwise": 0,
                  "batched": 0, "compress": 0, "dropwhile": 1, "takewhile": 1,
                  "filterfalse": 1, "starmap": 1},
    "functools": {"reduce": 1},
    "statistics": {"mean": 0, "fmean": 0, "median": 0, "mode": 0, "multimode": 0,
                   "stdev": 0, "pstdev": 0, "variance": 0, "pvariance": 0},
}
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
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Call) and ctx.patches.has(node) and _library_name(ctx, node) == (
                "collections", "ChainMap"):
            _check_chain_map(ctx, node)


def _library_name(ctx: Context, call: ast.Call) -> tuple[str, str] | None:
    """(module, function) of a call to `module.function` or to a name imported from it.

    A bare name counts when the program binds it only by an import and the name belongs
    to exactly one of the modules this fixer knows (the same test `infer` uses for
    `Counter`/`defaultdict`).
    """
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        if ctx.types.var_type(ctx.scopes.scope_at(func), func.value.id) == "module":
            return func.value.id, func.attr
        return None
    if isinstance(func, ast.Name) and ctx.types.var_type(ctx.scopes.scope_at(func), func.id) == "module":
        if func.id == "ChainMap":
            return "collections", "ChainMap"
        owners = [module for module, names in _LIBRARY_ITERATE_FROM.items() if func.id in names]
        return (owners[0], func.id) if len(owners) == 1 else None
    return None


def _check_chain_map(ctx: Context, call: ast.Call) -> None:
    """`ChainMap` reads its maps with Python 3's dict protocol: a Python-4 dict there
    iterates as (key, value) pairs, so lookups and listings go wrong (a KeyError)."""
    for arg in call.args:
        if ctx.type_of(arg) != "mapping":
            ctx.cannot_convert(arg, "`ChainMap` iterates its maps as Python 3 dicts; a Python-4 "
                               "dict here would yield (key, value) pairs")


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
        if isinstance(node, ast.Call):
            library = _library_name(ctx, node)
            start = _LIBRARY_ITERATE_FROM.get(library[0], {}).get(library[1]) if library else None
            if start is not None:
                found.extend(arg for arg in node.args[start:] if ctx.type_of(arg) == "dict")
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
    elif (reversing := _reversed_call(ctx, iterable)) is not None:
        # an iterator is not reversible: `reversed(py3_iter(v))` fails for every `v`
        ctx.patches.replace(reversing.func, ["py3_reversed"])
    else:
        ctx.patches.wrap(iterable, "py3_iter(", ")")


def _reversed_call(ctx: Context, node: ast.AST) -> ast.Call | None:
    """The `reversed(node)` call `node` is the argument of, if it is one."""
    parent = ctx.parent(node)
    if isinstance(parent, ast.Call) and ctx.types.is_builtin(parent.func, "reversed"):
        return parent
    return None
