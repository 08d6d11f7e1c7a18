"""AST transform: a parsed Python-4 program (already in Python 3 spelling) into the
Python 3 AST that gives it Python-4 semantics, by calls to the ``__p4__`` helpers of
docs/dev/contracts.md.

Every node made here carries the position of the node it replaces, so the code
object's line numbers are the Python-4 source's.

| Python-4                          | Python 3 emitted                                       |
|-----------------------------------|--------------------------------------------------------|
| ``e[a:b:s]`` (load)               | ``__p4__.getslice(e, a, b, s)``                        |
| ``e[a:b:s] = v`` / ``del``        | ``t[__p4__.sliceobj(t, a, b, s)]`` with ``t`` = e once |
| ``e[i]``                          | ``t[__p4__.index(t, i)]`` with ``t`` = e once          |
| ``a // b``, ``a % b`` (and aug.)  | ``__p4__.floordiv(a, b)``, ``__p4__.mod(a, b)``        |
| ``e.pop(…)``, ``e.join(…)``       | ``__p4__.pop(e, …)``, ``__p4__.join(e, …)``            |
| ``e.strip`` … ``e.trim_end`` load | ``__p4__.attr(e, "strip")``                            |
| dict display / comprehension      | ``__p4__.Dict({…})``; ``{:}`` → ``__p4__.Dict()``      |
| ``{}``                            | ``set()``                                              |

"Evaluated once" uses a walrus temporary named ``__p4_tN``; where a walrus is not
allowed (inside a comprehension) a load uses ``(lambda t, k: t[__p4__.index(t, k)])(e, i)``
instead, and so does a class body (a temporary there would become a class attribute).
Extended slices (``a[1:2, 3]``) and annotations are left as Python 3 has them; so is a
subscript *target* whose receiver is not a plain name inside a comprehension or class
body (``for a.b[0] in …``), where no temporary can be placed.
"""

from __future__ import annotations

import ast

from py4.lang.walk import FastTransformer

HELPERS = "__p4__"
TEMP_PREFIX = "__p4_t"
ATTR_RENAMED = frozenset({"strip", "lstrip", "rstrip", "trim", "trim_start", "trim_end"})
_CONSTANT_NAMES = {"nil": None, "true": True, "false": False}
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _at(node: ast.AST, src: ast.AST) -> ast.AST:
    node.lineno = src.lineno
    node.col_offset = src.col_offset
    node.end_lineno = src.end_lineno
    node.end_col_offset = src.end_col_offset
    return node


def _helper_call(src: ast.AST, helper: str, args: list, keywords: list | None = None) -> ast.Call:
    func = _at(ast.Attribute(_at(ast.Name(HELPERS, ast.Load()), src), helper, ast.Load()), src)
    return _at(ast.Call(func, args, keywords or []), src)


def _none(src: ast.AST) -> ast.Constant:
    return _at(ast.Constant(None), src)


def _is_simple(expr: ast.AST) -> bool:
    """Evaluating it twice is harmless and cheap."""
    return isinstance(expr, (ast.Name, ast.Constant))


class Py4Transformer(FastTransformer):
    """Rewrites a module in place; ``empty_dicts`` holds the (line, byte col) of `{:}`."""

    skip_types = frozenset({ast.Name, ast.Constant})  # leaves (Names matter in i-strings only)

    def __init__(self, empty_dicts: set[tuple[int, int]]):
        self.empty_dicts = empty_dicts
        self.temp_count = 0
        self.contexts: list[str] = []  # "comp" / "class" / "fn": where a walrus may go

    # -- helpers -------------------------------------------------------------
    def _new_temp(self) -> str:
        self.temp_count += 1
        return f"{TEMP_PREFIX}{self.temp_count}"

    def _walrus_allowed(self) -> bool:
        return not self.contexts or self.contexts[-1] == "fn"

    def _once(self, expr: ast.AST) -> tuple[ast.AST, ast.AST] | None:
        """(expression to evaluate, reference to its value); None if impossible here."""
        if _is_simple(expr):
            return expr, expr
        if not self._walrus_allowed():
            return None
        name = self._new_temp()
        store = _at(ast.NamedExpr(_at(ast.Name(name, ast.Store()), expr), expr), expr)
        return store, _at(ast.Name(name, ast.Load()), expr)

    def _scoped(self, node: ast.AST, kind: str) -> ast.AST:
        self.contexts.append(kind)
        try:
            return self.generic_visit(node)
        finally:
            self.contexts.pop()

    # -- scopes and annotations ----------------------------------------------
    def visit_FunctionDef(self, node):
        return self._visit_function(node)

    def visit_AsyncFunctionDef(self, node):
        return self._visit_function(node)

    def _visit_function(self, node):
        # Decorators and defaults run in the enclosing scope; annotations stay Python 3.
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        self._visit_arg_defaults(node.args)
        self.contexts.append("fn")
        try:
            node.body = self._visit_body(node.body)
        finally:
            self.contexts.pop()
        return node

    def _visit_arg_defaults(self, args: ast.arguments) -> None:
        args.defaults = [self.visit(d) for d in args.defaults]
        args.kw_defaults = [d if d is None else self.visit(d) for d in args.kw_defaults]

    def _visit_body(self, body: list) -> list:
        out = []
        for stmt in body:
            new = self.visit(stmt)
            if isinstance(new, list):
                out.extend(new)
            elif new is not None:
                out.append(new)
        return out

    def visit_Lambda(self, node):
        self._visit_arg_defaults(node.args)
        self.contexts.append("fn")
        try:
            node.body = self.visit(node.body)
        finally:
            self.contexts.pop()
        return node

    def visit_AnnAssign(self, node):
        node.target = self.visit(node.target)
        if node.value is not None:
            node.value = self.visit(node.value)
        return node

    def visit_arg(self, node):
        return node  # annotations stay as written

    def visit_ClassDef(self, node):
        # A walrus temporary would become a class attribute: class bodies use the lambda form.
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.bases = [self.visit(b) for b in node.bases]
        node.keywords = [self.visit(k) for k in node.keywords]
        self.contexts.append("class")
        try:
            node.body = self._visit_body(node.body)
        finally:
            self.contexts.pop()
        return node

    def visit_ListComp(self, node):
        return self._scoped(node, "comp")

    def visit_SetComp(self, node):
        return self._scoped(node, "comp")

    def visit_GeneratorExp(self, node):
        return self._scoped(node, "comp")

    def visit_DictComp(self, node):
        return _helper_call(node, "Dict", [self._scoped(node, "comp")])

    # -- the rewrites ----------------------------------------------------------
    def visit_Constant(self, node):
        return node  # a leaf; NodeTransformer's visit_Constant probes deprecated handlers

    def visit_JoinedStr(self, node):
        # The token pass does not look inside i-strings: map nil/true/false names here.
        saved, self.skip_types = self.skip_types, frozenset({ast.Constant})
        try:
            return self.generic_visit(node)
        finally:
            self.skip_types = saved

    def visit_Name(self, node):
        # Only reachable inside i-strings: the token pass rewrote every other use.
        if isinstance(node.ctx, ast.Load) and node.id in _CONSTANT_NAMES:
            return _at(ast.Constant(_CONSTANT_NAMES[node.id]), node)
        return node

    def visit_Dict(self, node):
        self.generic_visit(node)
        if node.keys:
            return _helper_call(node, "Dict", [node])
        if (node.lineno, node.col_offset) in self.empty_dicts:
            return _helper_call(node, "Dict", [])
        return _at(ast.Call(_at(ast.Name("set", ast.Load()), node), [], []), node)

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.FloorDiv):
            return _helper_call(node, "floordiv", [node.left, node.right])
        if isinstance(node.op, ast.Mod):
            return _helper_call(node, "mod", [node.left, node.right])
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if node.attr in ATTR_RENAMED and isinstance(node.ctx, ast.Load):
            return _helper_call(node, "attr", [node.value, _at(ast.Constant(node.attr), node)])
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("pop", "join"):
            return _helper_call(node, func.attr, [func.value, *node.args], node.keywords)
        return node

    def visit_Subscript(self, node):
        self.generic_visit(node)
        index = node.slice
        if isinstance(index, ast.Tuple) and any(isinstance(e, ast.Slice) for e in index.elts):
            return node  # extended slicing (numpy style): Python 3 semantics
        if isinstance(index, ast.Slice):
            bounds = [b if b is not None else _none(node) for b in (index.lower, index.upper, index.step)]
            if isinstance(node.ctx, ast.Load):
                return _helper_call(node, "getslice", [node.value, *bounds])
            return self._rewrite_target(node, "sliceobj", bounds)
        return self._rewrite_target(node, "index", [index])

    def _rewrite_target(self, node: ast.Subscript, helper: str, args: list) -> ast.AST:
        once = self._once(node.value)
        if once is None:
            if not isinstance(node.ctx, ast.Load) or helper != "index":
                return node  # a subscript target inside a comprehension: left as Python 3
            return self._lambda_index(node, args[0])
        evaluate, ref = once
        node.value = evaluate
        node.slice = _helper_call(node, helper, [ref, *args])
        return node

    def _lambda_index(self, node: ast.Subscript, index: ast.AST) -> ast.AST:
        """`(lambda t, k: t[__p4__.index(t, k)])(e, i)`: where a walrus may not go."""
        t, k = "__p4_seq", "__p4_key"
        params = ast.arguments(posonlyargs=[], args=[_at(ast.arg(t), node), _at(ast.arg(k), node)],
                               kwonlyargs=[], kw_defaults=[], defaults=[])
        load = lambda name: _at(ast.Name(name, ast.Load()), node)  # noqa: E731
        body = _at(ast.Subscript(load(t), _helper_call(node, "index", [load(t), load(k)]),
                                 ast.Load()), node)
        return _at(ast.Call(_at(ast.Lambda(params, body), node), [node.value, index], []), node)

    def visit_AugAssign(self, node):
        if not isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            return self.generic_visit(node)
        helper = "floordiv" if isinstance(node.op, ast.FloorDiv) else "mod"
        node.value = self.visit(node.value)
        target = node.target
        prelude: list[ast.stmt] = []
        if isinstance(target, ast.Name):
            store, load = target, _at(ast.Name(target.id, ast.Load()), target)
        elif isinstance(target, ast.Attribute):
            obj = self._bind_temp(self.visit(target.value), prelude)
            store = _at(ast.Attribute(obj, target.attr, ast.Store()), target)
            load = self.visit(_at(ast.Attribute(obj, target.attr, ast.Load()), target))
        else:
            store, load = self._subscript_aug_target(target, prelude)
        result = _helper_call(node, helper, [load, node.value])
        return [*prelude, _at(ast.Assign([store], result), node)]

    def _subscript_aug_target(self, target: ast.Subscript, prelude: list) -> tuple:
        obj = self._bind_temp(self.visit(target.value), prelude)
        index = target.slice
        if isinstance(index, ast.Slice):
            bounds = [self.visit(b) if b is not None else _none(target)
                      for b in (index.lower, index.upper, index.step)]
            key = _helper_call(target, "sliceobj", [obj, *bounds])
        else:
            key = _helper_call(target, "index", [obj, self.visit(index)])
        key = self._bind_temp(key, prelude)
        store = _at(ast.Subscript(obj, key, ast.Store()), target)
        return store, _at(ast.Subscript(obj, key, ast.Load()), target)

    def _bind_temp(self, expr: ast.AST, prelude: list) -> ast.AST:
        if _is_simple(expr):
            return expr
        name = self._new_temp()
        prelude.append(_at(ast.Assign([_at(ast.Name(name, ast.Store()), expr)], expr), expr))
        return _at(ast.Name(name, ast.Load()), expr)


def transform(tree: ast.Module, empty_dicts: set[tuple[int, int]]) -> ast.Module:
    """Rewrite ``tree`` in place into Python-4 semantics; returns it."""
    return Py4Transformer(empty_dicts).visit(tree)
