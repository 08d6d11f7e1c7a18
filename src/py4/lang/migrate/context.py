"""Everything a fixer needs: source, AST, scopes, types, the edit store, the report."""

from __future__ import annotations

import ast
import keyword
import tokenize
from typing import TypeGuard

from py4.lang.migrate.infer import TypeInfo
from py4.lang.migrate.model import CannotConvert, RuleHit
from py4.lang.migrate.patches import Patches
from py4.lang.migrate.scopes import ScopeTable
from py4.lang.migrate.source import SourceMap

# Expressions that may be evaluated twice without a visible difference.
_SIMPLE_NODES = (ast.Name, ast.Constant)


class Context:
    def __init__(self, text: str, tree: ast.Module, enabled: frozenset[str],
                 external_types: dict[str, str] | None = None):
        self.src = SourceMap(text)
        self.tree = tree
        self.enabled_rules = enabled
        self.patches = Patches(self.src, tree)
        self.scopes = ScopeTable(tree)
        self.types = TypeInfo(self.scopes, external_types)
        self.hits: list[RuleHit] = []
        self.cannot: list[CannotConvert] = []
        # Names renamed by fix_names: (id(binding scope), old) -> new.
        # (id of the owning scope, or None for a name no scope binds, name) -> new name
        self.renames: dict[tuple[int | None, str], str] = {}
        self.used_names = {tok.string for tok in self.src.tokens if tok.type == tokenize.NAME}
        self.parents: dict[int, ast.AST] = {}
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[id(child)] = parent
        self._temp_counter = 0
        self.converted_defaults: set[int] = set()
        # Annotations stay Python 3 (the translator leaves them alone): id()s inside one.
        self.in_annotation: set[int] = set()
        for node in ast.walk(tree):
            roots = []
            if isinstance(node, ast.arg):
                roots = [node.annotation]
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                roots = [node.returns]
            elif isinstance(node, ast.AnnAssign):
                roots = [node.annotation]
            for root in roots:
                if root is not None:
                    self.in_annotation.update(id(n) for n in ast.walk(root))  # id() of defaults fix_defaults made `nil`

    # -- reporting -----------------------------------------------------------------
    def enabled(self, rule: str) -> bool:
        return rule in self.enabled_rules

    def position(self, node_or_offset) -> tuple[int, int]:
        if isinstance(node_or_offset, int):
            return self.src.position(node_or_offset)
        return self.src.position(self.src.span(node_or_offset)[0])

    def hit(self, rule: str, where) -> None:
        line, col = self.position(where)
        self.hits.append(RuleHit(rule, line, col))

    def cannot_convert(self, where, reason: str) -> None:
        line, col = self.position(where)
        self.cannot.append(CannotConvert(line, col, reason))

    # -- helpers for fixers -----------------------------------------------------------
    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(id(node))

    def text(self, node: ast.AST) -> str:
        return self.src.segment(node)

    def fresh_name(self, base: str) -> str:
        """An identifier used nowhere in the program (nor handed out before)."""
        name = base
        while name in self.used_names or keyword.iskeyword(name):
            name += "_"
        self.used_names.add(name)
        return name

    def temp_name(self) -> str:
        self._temp_counter += 1
        return self.fresh_name(f"_t{self._temp_counter}")

    def is_simple(self, node: ast.AST) -> bool:
        """Evaluating `node` twice is indistinguishable from once (no calls, no effects)."""
        if isinstance(node, _SIMPLE_NODES):
            return True
        if isinstance(node, ast.Attribute):
            return self.is_simple(node.value)
        if isinstance(node, ast.Subscript):
            return self.is_simple(node.value) and not isinstance(node.slice, ast.Slice) \
                and self.is_simple(node.slice)
        if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
            return True
        return False

    def is_builtin_call(self, node: ast.AST, *names: str) -> TypeGuard[ast.Call]:
        return isinstance(node, ast.Call) and any(self.types.is_builtin(node.func, n) for n in names)

    def type_of(self, node: ast.AST) -> str:
        return self.types.of(node)

    def needs_parens_for_operand(self, node: ast.AST) -> bool:
        """Whether `node` must be parenthesised as the left operand of `-`/`+`."""
        return not isinstance(node, (ast.Name, ast.Constant, ast.Call, ast.Attribute,
                                     ast.Subscript, ast.BinOp, ast.List, ast.Tuple,
                                     ast.Dict, ast.Set)) or (
            isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitOr, ast.BitXor,
                                                                 ast.BitAnd, ast.LShift,
                                                                 ast.RShift)))

    def walrus_allowed(self, node: ast.AST) -> bool:
        """Whether `(t := node)` may stand where `node` is (not in a comprehension iterable)."""
        child, parent = node, self.parent(node)
        while parent is not None:
            if isinstance(parent, ast.comprehension) and child is parent.iter:
                return False
            if isinstance(parent, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)) \
                    and self.scopes.scope_at(parent).kind == "class":
                return False
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                return True
            child, parent = parent, self.parent(parent)
        return True

    def evaluate_once(self, node: ast.AST) -> tuple[list, list] | None:
        """Templates for a first and a later use of `node`'s value, evaluating it once.

        A simple node is repeated; anything else is bound to a fresh name with `:=`.
        None when neither is possible.
        """
        if self.is_simple(node):
            return [node], [node]
        if not self.walrus_allowed(node):
            return None
        temp = self.temp_name()
        return ["(", temp, " := ", node, ")"], [temp]
