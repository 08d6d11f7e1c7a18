"""Renames: P4-29 (a binding shadows a builtin: `list` → `list_`) and Python 3 names
that are Python-4 reserved words (`fn`, `let`, `nil`, …) or reserved prefixes
(`py3_`, `__p4`). Every use that refers to the renamed binding follows it, in its own
scope and the nested scopes that see it; keyword arguments naming a renamed parameter
follow too. Class-level names are attributes, so they are never renamed by P4-29 and
a reserved word there cannot be converted.
"""

from __future__ import annotations

import ast
import builtins

from py4.lang.migrate.context import Context

RULES = ("P4-29",)
RESERVED_WORDS = frozenset({"fn", "let", "fun", "use", "catch", "throw", "nil", "true", "false"})
RESERVED_PREFIXES = ("py3_", "__p4")
PY4_EXTRA_BUILTINS = frozenset({"indices", "first", "last", "zip_shortest", "count"})
BUILTIN_NAMES = frozenset(n for n in dir(builtins) if not n.startswith("_")) | PY4_EXTRA_BUILTINS


def is_reserved(name: str) -> bool:
    return name in RESERVED_WORDS or name.startswith(RESERVED_PREFIXES)


def fix(ctx: Context) -> None:
    _plan(ctx)
    if not ctx.renames:
        _check_keywords(ctx, {})
        return
    _rename_names(ctx)
    param_renames = _rename_binding_sites(ctx)
    _check_keywords(ctx, param_renames)


def _plan(ctx: Context) -> None:
    for scope in ctx.scopes.all_scopes():
        for name in sorted(scope.local_names):
            reserved = is_reserved(name)
            shadows = name in BUILTIN_NAMES and scope.kind != "class" and ctx.enabled("P4-29")
            if not (reserved or shadows):
                continue
            if shadows and scope.kind == "module" and any(
                    b.kind == "del" for b in scope.bindings_of(name)):
                first = [b for b in scope.bindings_of(name) if b.kind == "del"][0]
                ctx.cannot_convert(first.node, f"`del {name}` unmasks the builtin `{name}`: "
                                   "a rename cannot follow that")
                continue
            if shadows and scope.kind == "module" and _used_before_bound(ctx, scope, name):
                ctx.cannot_convert(scope.bindings_of(name)[0].node,
                                   f"module code uses the builtin `{name}` before binding its "
                                   "own: a rename cannot follow that")
                continue
            if reserved and scope.kind == "class":
                first = scope.bindings_of(name)[0]
                ctx.cannot_convert(first.node, f"class attribute `{name}` is a reserved word "
                                   "in Python-4; renaming it would change the class's interface")
                continue
            ctx.renames[(id(scope), name)] = ctx.fresh_name(name + "_")
            if shadows and not reserved:
                for binding in scope.bindings_of(name):
                    if binding.kind not in ("global", "nonlocal", "del", "augassign"):
                        ctx.hit("P4-29", binding.node)
                        break
    for scope, node in ctx.scopes.uses:  # unbound reserved names: keep the NameError
        if is_reserved(node.id) and ctx.scopes.resolve(scope, node.id) is None:
            ctx.renames.setdefault((None, node.id), ctx.fresh_name(node.id + "_"))


def _used_before_bound(ctx: Context, scope, name: str) -> bool:
    first = min(b.order for b in scope.bindings_of(name))
    return any(use_scope is scope and node.id == name
               and (node.lineno, node.col_offset) < first
               for use_scope, node in ctx.scopes.uses)


def new_name_for(ctx: Context, node: ast.AST, name: str) -> str | None:
    scope = ctx.scopes.scope_at(node)
    owner = ctx.scopes.resolve(scope, name)
    return ctx.renames.get((id(owner) if owner is not None else None, name))


def _rename_names(ctx: Context) -> None:
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.Name) and ctx.patches.has(node):
            new = new_name_for(ctx, node, node.id)
            if new:
                ctx.patches.replace(node, [new])


def _rename_binding_sites(ctx: Context) -> dict[str, list[tuple[str, str]]]:
    """Rename def/class names, parameters, aliases, handlers, global/nonlocal lists.

    Returns {function name: [(old parameter, new parameter), ...]} for keyword fixing.
    """
    param_renames: dict[str, list[tuple[str, str]]] = {}
    for node in ast.walk(ctx.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            _rename_def(ctx, node)
            if not isinstance(node, ast.ClassDef):
                inner = ctx.scopes.owned_scope(node)
                for arg in _all_args(node.args):
                    new = ctx.renames.get((id(inner), arg.arg))
                    if new:
                        param_renames.setdefault(node.name, []).append((arg.arg, new))
        elif isinstance(node, ast.arg):
            scope = ctx.scopes.scope_at(node)
            new = ctx.renames.get((id(scope), node.arg))
            if new:
                start = ctx.src.span(node)[0]
                ctx.patches.local(node, start, start + len(node.arg), new)
        elif isinstance(node, ast.alias):
            _rename_alias(ctx, node)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            new = new_name_for(ctx, node, node.name)
            if new:
                start = ctx.patches.span(node.type)[1] if node.type else ctx.src.span(node)[0]
                tok = ctx.src.name_token(node.name, start, ctx.patches.span(node)[1])
                ctx.patches.local(node, tok.start, tok.end, new)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            start, end = ctx.src.span(node)
            for tok in ctx.src.tokens_between(start, end)[1:]:
                new = new_name_for(ctx, node, tok.string) if tok.string in node.names else None
                if new:
                    ctx.patches.local(node, tok.start, tok.end, new)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name \
                and new_name_for(ctx, node, node.name):
            ctx.cannot_convert(node, f"match capture `{node.name}` needs a rename")
    return param_renames


def _all_args(args: ast.arguments) -> list[ast.arg]:
    return [a for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]
            if a is not None]


def _rename_def(ctx: Context, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
    new = new_name_for(ctx, node, node.name)
    if not new:
        return
    start = ctx.src.span(node)[0]
    keyword = "class" if isinstance(node, ast.ClassDef) else "def"
    kw = ctx.src.name_token(keyword, start, ctx.patches.span(node)[1])
    tok = ctx.src.name_token(node.name, kw.end, ctx.patches.span(node)[1])
    ctx.patches.local(node, tok.start, tok.end, new)


def _rename_alias(ctx: Context, node: ast.alias) -> None:
    bound = node.asname or node.name.split(".")[0]
    new = new_name_for(ctx, node, bound)
    if not new:
        return
    start, end = ctx.src.span(node)
    if node.asname:
        tok = [t for t in ctx.src.tokens_between(start, end) if t.string == node.asname][-1]
        ctx.patches.local(node, tok.start, tok.end, new)
    elif "." in node.name:
        ctx.cannot_convert(node, f"`import {node.name}` binds `{bound}`, which needs a rename")
    else:
        ctx.patches.insert(node, end, f" as {new}")


def _check_keywords(ctx: Context, param_renames: dict) -> None:
    for node in ast.walk(ctx.tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        callee = func.id if isinstance(func, ast.Name) else (
            func.attr if isinstance(func, ast.Attribute) else None)
        renames = dict(param_renames.get(callee, []))
        for kw in node.keywords:
            if kw.arg is None:
                continue
            if kw.arg in renames:
                start = ctx.src.span(kw)[0]
                ctx.patches.local(kw, start, start + len(kw.arg), renames[kw.arg])
            elif is_reserved(kw.arg):
                _spell_reserved_keyword(ctx, node, kw)


def _spell_reserved_keyword(ctx: Context, call: ast.Call, kw: ast.keyword) -> None:
    """`f(catch=x)` → `f(**{"catch": x})`: the same call, without the reserved word."""
    kw_start = ctx.src.span(kw)[0]
    if any(isinstance(a, ast.Starred) and ctx.src.span(a)[0] > kw_start for a in call.args):
        ctx.cannot_convert(kw, f"keyword argument `{kw.arg}` is a reserved word in Python-4")
        return
    ctx.patches.replace(kw, [f'**{{"{kw.arg}": ', kw.value, "}"])
