"""P4-02: the first binding of each name in each scope, in source order, gets `let`.

Python-4 checks declarations in source order within Python's scopes, so `let` goes on
the textually first assignment of a name (an `if` branch included: the later branch's
plain assignment is then "declared earlier"). Where the first binding cannot carry
`let` (an augmented assignment or `del` that comes first in the text, e.g. in a loop
body), a `let x = nil` is hoisted to the top of the scope; where a statement mixes new
names with attribute/subscript targets, the new names are declared just before it.
"""

from __future__ import annotations

import ast

from py4.lang.migrate.context import Context
from py4.lang.migrate.scopes import DECLARING_KINDS, Scope

RULES = ("P4-02",)


def _pure_names(target: ast.AST) -> bool:
    if isinstance(target, ast.Name):
        return True
    if isinstance(target, (ast.Tuple, ast.List)):
        return all(_pure_names(elt) for elt in target.elts)
    if isinstance(target, ast.Starred):
        return _pure_names(target.value)
    return False


def fix(ctx: Context) -> None:
    if not ctx.enabled("P4-02"):
        return
    for scope in ctx.scopes.all_scopes():
        if scope.kind in ("module", "function", "class"):
            _fix_scope(ctx, scope)


def _fix_scope(ctx: Context, scope: Scope) -> None:
    declared: set[str] = set()
    let_stmts: dict[int, tuple[ast.Assign | ast.AnnAssign, list[str]]] = {}
    hoisted: list[tuple[str, ast.AST]] = []
    for binding in scope.bindings:
        if binding.kind in DECLARING_KINDS:
            declared.add(binding.name)
            continue
        if binding.name in declared or binding.kind == "annotation":
            continue
        declared.add(binding.name)
        stmt = binding.stmt
        if binding.kind == "assign" and isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            let_stmts.setdefault(id(stmt), (stmt, []))[1].append(binding.name)
        else:
            hoisted.append((binding.name, binding.node))
    for stmt, names in let_stmts.values():
        _declare_statement(ctx, stmt, names)
    if hoisted:
        _hoist(ctx, scope, hoisted)


def _declare_statement(ctx: Context, stmt: ast.Assign | ast.AnnAssign, names: list[str]) -> None:
    start = ctx.src.span(stmt)[0]
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    if all(_pure_names(t) for t in targets):
        ctx.patches.insert(stmt, start, "let ")
    else:
        declarations = "".join(f"let {_renamed(ctx, stmt, n)} = nil; " for n in names)
        ctx.patches.insert(stmt, start, declarations)
    ctx.hit("P4-02", start)


def _renamed(ctx: Context, node: ast.AST, name: str) -> str:
    scope = ctx.scopes.scope_at(node)
    owner = ctx.scopes.resolve(scope, name)
    return ctx.renames.get((id(owner), name), name) if owner is not None else name


def _is_future_import(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"


def _hoist(ctx: Context, scope: Scope, hoisted: list[tuple[str, ast.AST]]) -> None:
    owner = scope.node
    # fix() sends only module, function and class scopes here
    assert isinstance(owner, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    body = owner.body
    index = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        index = 1
    while scope.kind == "module" and index < len(body) and _is_future_import(body[index]):
        index += 1
    if index >= len(body):
        for _, node in hoisted:
            ctx.cannot_convert(node, "no statement to declare this name before")
        return
    first = body[index]
    offset = ctx.patches.span(first)[0]
    if getattr(first, "decorator_list", None):
        offset = ctx.src.text.rindex("@", 0, offset)
    indent = ctx.src.indent_at(offset)
    names = [_renamed(ctx, first, name) for name, _ in hoisted]
    if indent is not None:
        text = "".join(f"let {name} = nil\n{indent}" for name in names)
    else:
        text = "".join(f"let {name} = nil; " for name in names)
    ctx.patches.insert(owner, offset, text)
    for _, node in hoisted:
        ctx.hit("P4-02", node)
