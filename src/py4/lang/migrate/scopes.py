"""Python 3 scopes: which statement binds which name where, and what a name refers to.

Used by the `let` fixer (first binding of each name in each scope), by renames
(P4-29 and reserved words, consistent within a scope and the scopes that see it) and by
type inference (all bindings of a name).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

# Binding kinds that declare in Python-4 without `let`.
DeclaringKind = Literal["param", "for", "comp", "with", "except", "import", "def", "class", "walrus",
                        "global", "nonlocal", "match"]
DECLARING_KINDS: frozenset[str] = frozenset(get_args(DeclaringKind))
BindingKind = DeclaringKind | Literal["assign", "annotation", "augassign", "del"]
ScopeKind = Literal["module", "function", "lambda", "class", "comprehension"]


@dataclass
class Binding:
    name: str
    kind: BindingKind
    node: ast.AST  # the Name / arg / alias / handler / def node that binds
    stmt: ast.AST | None  # the enclosing statement (Assign, For, …)
    value: ast.AST | None = None  # the assigned expression when known
    order: tuple[int, int] = (0, 0)
    # For `for i, x in it`: the iterable is `value` and this name is item `position`.
    position: int | None = None


@dataclass
class Scope:
    kind: ScopeKind
    node: ast.AST
    parent: "Scope | None"
    bindings: list[Binding] = field(default_factory=list)
    globals: set[str] = field(default_factory=set)
    nonlocals: set[str] = field(default_factory=set)
    local_names: set[str] = field(default_factory=set)
    children: list["Scope"] = field(default_factory=list)

    def bindings_of(self, name: str) -> list[Binding]:
        return [b for b in self.bindings if b.name == name]


def _pos(node: ast.AST) -> tuple[int, int]:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


class ScopeTable:
    """All scopes of a module, the scope of each node, and name uses."""

    def __init__(self, tree: ast.Module):
        self.module = Scope("module", tree, None)
        self.scope_of_node: dict[int, Scope] = {}  # id(node) -> scope the node is evaluated in
        self.scope_by_owner: dict[int, Scope] = {id(tree): self.module}
        self.uses: list[tuple[Scope, ast.Name]] = []
        self.star_import = False
        _Collector(self).visit_root(tree)
        self._finish(self.module)

    def _finish(self, scope: Scope) -> None:
        scope.bindings.sort(key=lambda b: b.order)
        scope.local_names = {
            b.name for b in scope.bindings if b.kind not in ("global", "nonlocal")
        } - scope.globals - scope.nonlocals
        for child in scope.children:
            self._finish(child)

    def all_scopes(self) -> list[Scope]:
        found, stack = [], [self.module]
        while stack:
            scope = stack.pop()
            found.append(scope)
            stack.extend(scope.children)
        return found

    def scope_at(self, node: ast.AST) -> Scope:
        return self.scope_of_node.get(id(node), self.module)

    def owned_scope(self, node: ast.AST) -> Scope | None:
        """The scope a def/lambda/class/comprehension node opens."""
        return self.scope_by_owner.get(id(node))

    def resolve(self, scope: Scope, name: str) -> Scope | None:
        """The scope whose binding `name` refers to from `scope`; None: builtin/unbound."""
        if name in scope.globals:
            return self.module
        if name in scope.nonlocals:
            return self._enclosing_function_with(scope.parent, name)
        if name in scope.local_names:
            return scope
        return self._enclosing_function_with(scope.parent, name, allow_module=True)

    def _enclosing_function_with(self, scope: Scope | None, name: str,
                                 allow_module: bool = True) -> Scope | None:
        while scope is not None:
            if scope.kind == "class":
                scope = scope.parent
                continue
            if scope.kind == "module":
                return scope if (allow_module and name in scope.local_names) else None
            if name in scope.globals:
                return self.module
            if name in scope.local_names or name in scope.nonlocals:
                if name in scope.nonlocals:
                    return self._enclosing_function_with(scope.parent, name)
                return scope
            scope = scope.parent
        return None


class _Collector(ast.NodeVisitor):
    def __init__(self, table: ScopeTable):
        self.table = table
        self.scope = table.module
        self.stmt: ast.AST | None = None

    def visit_root(self, tree: ast.Module) -> None:
        for stmt in tree.body:
            self.visit(stmt)

    def visit(self, node: ast.AST):
        self.table.scope_of_node[id(node)] = self.scope
        if isinstance(node, ast.stmt):
            outer, self.stmt = self.stmt, node
            try:
                return super().visit(node)
            finally:
                self.stmt = outer
        return super().visit(node)

    def bind(self, name: str, kind: BindingKind, node: ast.AST, value: ast.AST | None = None,
             scope: Scope | None = None, position: int | None = None) -> None:
        scope = scope or self.scope
        scope.bindings.append(Binding(name, kind, node, self.stmt, value, _pos(node), position))

    def bind_target(self, target: ast.AST, kind: BindingKind, value: ast.AST | None) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id, kind, target, value)
            self.table.scope_of_node[id(target)] = self.scope
        elif isinstance(target, (ast.Tuple, ast.List)):
            values: Sequence[ast.expr | None] = [None] * len(target.elts)
            if kind == "assign" and isinstance(value, (ast.Tuple, ast.List)) \
                    and len(value.elts) == len(target.elts) \
                    and not any(isinstance(e, ast.Starred) for e in target.elts + value.elts):
                values = value.elts  # `a, b = 0, len(xs)`: each name gets its own value
            if kind in ("for", "comp"):  # each name is one item of the iterable's elements
                for position, elt in enumerate(target.elts):
                    if isinstance(elt, ast.Name):
                        self.bind(elt.id, kind, elt, value, position=position)
                        self.table.scope_of_node[id(elt)] = self.scope
                    else:
                        self.bind_target(elt, kind, None)
                return
            for elt, elt_value in zip(target.elts, values, strict=True):
                self.bind_target(elt, kind, elt_value)
        elif isinstance(target, ast.Starred):
            self.bind_target(target.value, kind, None)
        else:
            self.visit(target)

    def open_scope(self, kind: ScopeKind, node: ast.AST) -> Scope:
        scope = Scope(kind, node, self.scope)
        self.scope.children.append(scope)
        self.table.scope_by_owner[id(node)] = scope
        return scope

    # -- statements ----------------------------------------------------------------
    def visit_FunctionDef(self, node):
        for dec in node.decorator_list:
            self.visit(dec)
        self._visit_signature_outer(node.args)
        if node.returns:
            self.visit(node.returns)
        self.bind(node.name, "def", node)
        outer, self.scope = self.scope, self.open_scope("function", node)
        self._bind_params(node.args)
        for stmt in node.body:
            self.visit(stmt)
        self.scope = outer

    visit_AsyncFunctionDef = visit_FunctionDef

    def _visit_signature_outer(self, args: ast.arguments) -> None:
        for default in args.defaults + [d for d in args.kw_defaults if d is not None]:
            self.visit(default)
        for arg in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
            if arg is not None and arg.annotation is not None:
                self.visit(arg.annotation)

    def _bind_params(self, args: ast.arguments) -> None:
        for arg in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
            if arg is not None:
                self.bind(arg.arg, "param", arg)
                self.table.scope_of_node[id(arg)] = self.scope

    def visit_Lambda(self, node):
        for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            self.visit(default)
        outer, self.scope = self.scope, self.open_scope("lambda", node)
        self._bind_params(node.args)
        self.visit(node.body)
        self.scope = outer

    def visit_ClassDef(self, node):
        for expr in node.decorator_list + node.bases + [k.value for k in node.keywords]:
            self.visit(expr)
        self.bind(node.name, "class", node)
        outer, self.scope = self.scope, self.open_scope("class", node)
        for stmt in node.body:
            self.visit(stmt)
        self.scope = outer

    def visit_Assign(self, node):
        self.visit(node.value)
        for target in node.targets:
            self.bind_target(target, "assign", node.value)

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self.visit(node.value)
        self.visit(node.annotation)
        kind = "assign" if node.value is not None else "annotation"
        self.bind_target(node.target, kind, node.value)

    def visit_AugAssign(self, node):
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self.table.uses.append((self.scope, node.target))
            self.bind(node.target.id, "augassign", node.target, node)
            self.table.scope_of_node[id(node.target)] = self.scope
        else:
            self.visit(node.target)

    def visit_Delete(self, node):
        for target in node.targets:
            if isinstance(target, ast.Name):
                self.bind(target.id, "del", target)
                self.table.scope_of_node[id(target)] = self.scope
            else:
                self.visit(target)

    def visit_For(self, node):
        self.visit(node.iter)
        self.bind_target(node.target, "for", node.iter)
        for stmt in node.body + node.orelse:
            self.visit(stmt)

    visit_AsyncFor = visit_For

    def visit_With(self, node):
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self.bind_target(item.optional_vars, "with", None)
        for stmt in node.body:
            self.visit(stmt)

    visit_AsyncWith = visit_With

    def visit_ExceptHandler(self, node):
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self.bind(node.name, "except", node)
        for stmt in node.body:
            self.visit(stmt)

    def visit_Import(self, node):
        for alias in node.names:
            name = alias.asname or alias.name.split(".")[0]
            self.bind(name, "import", alias)

    def visit_ImportFrom(self, node):
        for alias in node.names:
            if alias.name == "*":
                self.table.star_import = True
                continue
            self.bind(alias.asname or alias.name, "import", alias)

    def visit_Global(self, node):
        self.scope.globals.update(node.names)
        for name in node.names:
            self.bind(name, "global", node)

    def visit_Nonlocal(self, node):
        self.scope.nonlocals.update(node.names)
        for name in node.names:
            self.bind(name, "nonlocal", node)

    def visit_MatchAs(self, node):
        if node.pattern is not None:
            self.visit(node.pattern)
        if node.name:
            self.bind(node.name, "match", node)

    def visit_MatchStar(self, node):
        if node.name:
            self.bind(node.name, "match", node)

    def visit_MatchMapping(self, node):
        self.generic_visit(node)
        if node.rest:
            self.bind(node.rest, "match", node)

    # -- expressions -----------------------------------------------------------------
    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load):
            self.table.uses.append((self.scope, node))
        elif isinstance(node.ctx, ast.Store):
            self.bind(node.id, "assign", node)
        else:
            self.bind(node.id, "del", node)

    def visit_NamedExpr(self, node):
        self.visit(node.value)
        target_scope = self.scope
        while target_scope.kind == "comprehension":
            target_scope = target_scope.parent
        self.bind(node.target.id, "walrus", node.target, node.value, scope=target_scope)
        self.table.scope_of_node[id(node.target)] = self.scope

    def _visit_comprehension(self, node, elements):
        first = node.generators[0]
        self.visit(first.iter)
        outer, self.scope = self.scope, self.open_scope("comprehension", node)
        for index, gen in enumerate(node.generators):
            if index:
                self.visit(gen.iter)
            self.bind_target(gen.target, "comp", gen.iter)
            for cond in gen.ifs:
                self.visit(cond)
        for element in elements:
            self.visit(element)
        self.scope = outer

    def visit_ListComp(self, node):
        self._visit_comprehension(node, [node.elt])

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node):
        self._visit_comprehension(node, [node.key, node.value])
