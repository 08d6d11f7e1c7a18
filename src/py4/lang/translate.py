"""Semantic transform: a parsed Python-4 program (already in Python 3 spelling) into the
Python 3 AST that gives it Python-4 semantics, by calls to the ``__p4__`` helpers of
docs/dev/contracts.md.

| Python-4                          | Python 3 emitted                                       |
|-----------------------------------|--------------------------------------------------------|
| ``e[a:b:s]`` (load)               | ``__p4__.getslice(e, a, b, s)``                        |
| ``e[a:b:s] = v`` / ``del``        | ``t[__p4__.sliceobj(t, a, b, s)]`` with ``t`` = e once |
| ``e[i]``                          | ``t[__p4__.index(t, i)]`` with ``t`` = e once          |
| ``a // b``, ``a % b``             | ``__p4__.floordiv(a, b)``, ``__p4__.mod(a, b)``        |
| ``x //= v`` (also ``%=``)         | ``x = __p4__.floordiv(x, v)`` (receiver, index once)   |
| ``e.pop(…)``, ``e.join(…)``       | ``__p4__.pop(e, …)``, ``__p4__.join(e, …)``            |
| ``e.strip`` … ``e.trim_end`` load | ``__p4__.attr(e, "strip")``                            |
| dict display / comprehension      | ``__p4__.Dict({…})``; ``{:}`` → ``__p4__.Dict()``      |
| ``{}``                            | ``set()``                                              |

The nodes to rewrite (*sites*) are collected by the analysis walk (analyze.py), with a
flag saying whether a walrus may be placed there, so translation needs no walk of its
own: each site is rewritten **in place** (the node object takes the class and fields of
its replacement), so parents need no update and the order of sites does not matter.
Every node made here carries the position of the node it replaces, so the code object's
line numbers are the Python-4 source's.

"Evaluated once" uses a walrus temporary named ``__p4_tN``. Where a walrus may not go
(in a comprehension, including its first iterable, and in a class body, where the
temporary would become a class attribute) a load uses
``(lambda t, k: t[__p4__.index(t, k)])(e, i)`` instead. Left as Python 3 has them:
annotations, extended slices (``a[1:2, 3]``), and — only where no walrus may go — a
subscript target with a computed receiver (``for f()[0] in …``) or an augmented
``//=``/``%=`` of one (``f().x //= 2`` in a class body).

Known static limits (the runtime cannot see what the source does not spell): a method
taken as a value without a call keeps Python 3's meaning (``take = xs.pop``,
``map(", ".join, rows)``), and so does access by name (``getattr(s, "strip")``).
"""

from __future__ import annotations

import ast
from typing import Any, Callable, TypeVar

HELPERS = "__p4__"
TEMP_PREFIX = "__p4_t"
# Shared context objects, as CPython's own parser shares them (a new one per node is waste).
_LOAD = ast.Load()
_STORE = ast.Store()

# A node with a source position; `_at` returns the node it was given, typed as such.
_Positioned = TypeVar("_Positioned", bound=ast.expr | ast.stmt | ast.arg)


def _at(node: _Positioned, src: ast.expr | ast.stmt | ast.arg) -> _Positioned:
    node.lineno = src.lineno
    node.col_offset = src.col_offset
    node.end_lineno = src.end_lineno
    node.end_col_offset = src.end_col_offset
    return node


def _become(node: ast.AST, replacement: ast.AST) -> None:
    """Turn ``node`` into ``replacement`` in place (its parent keeps pointing at it)."""
    node.__class__ = replacement.__class__
    fields = node.__dict__
    fields.clear()
    fields.update(replacement.__dict__)


def _helper_call(src: ast.expr | ast.stmt, helper: str, args: list[ast.expr],
                 keywords: list[ast.keyword] | None = None) -> ast.Call:
    func = _at(ast.Attribute(_at(ast.Name(HELPERS, _LOAD), src), helper, _LOAD), src)
    return _at(ast.Call(func, args, keywords or []), src)


def _name(identifier: str, ctx: ast.expr_context, src: ast.expr | ast.stmt) -> ast.Name:
    return _at(ast.Name(identifier, ctx), src)


def _is_simple(expr: ast.AST) -> bool:
    """Evaluating it twice is harmless and cheap."""
    return isinstance(expr, (ast.Name, ast.Constant))


def _slice_bounds(index: ast.Slice, src: ast.expr) -> list[ast.expr]:
    return [b if b is not None else _at(ast.Constant(None), src)
            for b in (index.lower, index.upper, index.step)]


def _is_extended_slice(index: ast.AST) -> bool:
    return isinstance(index, ast.Tuple) and any(isinstance(e, ast.Slice) for e in index.elts)


class Rewriter:
    """Rewrites sites in place; ``empty_dicts`` holds the (line, byte col) of each `{:}`."""

    def __init__(self, empty_dicts: set[tuple[int, int]]):
        self.empty_dicts = empty_dicts
        self.temp_count = 0

    def apply(self, sites: list[tuple[ast.AST, bool]]) -> None:
        handlers = _HANDLERS
        for node, walrus_ok in sites:
            handlers[node.__class__](self, node, walrus_ok)

    # -- helpers ---------------------------------------------------------------------
    def _temp(self, expr: ast.expr) -> tuple[ast.expr, ast.expr]:
        """(walrus storing ``expr`` in a new temporary, a load of that temporary)."""
        self.temp_count += 1
        name = f"{TEMP_PREFIX}{self.temp_count}"
        store = _at(ast.NamedExpr(_name(name, _STORE, expr), expr), expr)
        return store, _name(name, _LOAD, expr)

    def _once(self, expr: ast.expr, walrus_ok: bool) -> tuple[ast.expr, ast.expr] | None:
        """(expression to evaluate, reference to its value); None where impossible."""
        if _is_simple(expr):
            return expr, expr
        return self._temp(expr) if walrus_ok else None

    # -- the rewrites ----------------------------------------------------------------
    def subscript(self, node: ast.Subscript, walrus_ok: bool) -> None:
        index = node.slice
        if _is_extended_slice(index):
            return  # numpy-style extended slicing keeps Python 3 semantics
        is_load = isinstance(node.ctx, ast.Load)
        if isinstance(index, ast.Slice) and is_load:
            _become(node, _helper_call(node, "getslice", [node.value, *_slice_bounds(index, node)]))
            return
        once = self._once(node.value, walrus_ok)
        if once is None:
            if is_load:
                _become(node, self._lambda_index(node, index))
            return
        node.value, ref = once
        if isinstance(index, ast.Slice):
            node.slice = _helper_call(node, "sliceobj", [ref, *_slice_bounds(index, node)])
        else:
            node.slice = _helper_call(node, "index", [ref, index])

    def _lambda_index(self, node: ast.Subscript, index: ast.expr) -> ast.Call:
        """`(lambda t, k: t[__p4__.index(t, k)])(e, i)`: where a walrus may not go."""
        t, k = "__p4_seq", "__p4_key"
        params = ast.arguments(posonlyargs=[], args=[_at(ast.arg(t), node), _at(ast.arg(k), node)],
                               kwonlyargs=[], kw_defaults=[], defaults=[])
        body = _at(ast.Subscript(_name(t, _LOAD, node), _helper_call(
            node, "index", [_name(t, _LOAD, node), _name(k, _LOAD, node)]), _LOAD), node)
        return _at(ast.Call(_at(ast.Lambda(params, body), node), [node.value, index], []), node)

    def binop(self, node: ast.BinOp, walrus_ok: bool) -> None:
        helper = "floordiv" if isinstance(node.op, ast.FloorDiv) else "mod"
        _become(node, _helper_call(node, helper, [node.left, node.right]))

    def method_call(self, node: ast.Call, walrus_ok: bool) -> None:
        func = node.func  # `.pop(...)` / `.join(...)`: the analysis collects only attribute calls
        assert isinstance(func, ast.Attribute)
        _become(node, _helper_call(node, func.attr, [func.value, *node.args], node.keywords))

    def attribute(self, node: ast.Attribute, walrus_ok: bool) -> None:
        args = [node.value, _at(ast.Constant(node.attr), node)]
        _become(node, _helper_call(node, "attr", args))

    def dict_display(self, node: ast.Dict, walrus_ok: bool) -> None:
        if node.keys:
            inner = _at(ast.Dict(node.keys, node.values), node)
            _become(node, _helper_call(node, "Dict", [inner]))
        elif (node.lineno, node.col_offset) in self.empty_dicts:
            _become(node, _helper_call(node, "Dict", []))
        else:
            _become(node, _at(ast.Call(_name("set", _LOAD, node), [], []), node))

    def dict_comprehension(self, node: ast.DictComp, walrus_ok: bool) -> None:
        inner = _at(ast.DictComp(node.key, node.value, node.generators), node)
        _become(node, _helper_call(node, "Dict", [inner]))

    def augassign(self, node: ast.AugAssign, walrus_ok: bool) -> None:
        """`target //= v` → `target = floordiv(load, v)`; the load (evaluated first, on the
        right) binds the receiver and the key in temporaries that the store reuses."""
        helper = "floordiv" if isinstance(node.op, ast.FloorDiv) else "mod"
        target = node.target
        store: ast.expr
        load: ast.expr
        if isinstance(target, ast.Name):
            store, load = target, _name(target.id, _LOAD, target)
        elif isinstance(target, ast.Attribute):
            pair = self._attribute_pair(target, walrus_ok)
            if pair is None:
                return
            store, load = pair
        else:
            pair = self._subscript_pair(target, walrus_ok)
            if pair is None:
                return
            store, load = pair
        _become(node, _at(ast.Assign([store], _helper_call(node, helper, [load, node.value])), node))

    def _attribute_pair(self, target: ast.Attribute, walrus_ok: bool):
        once = self._once(target.value, walrus_ok)
        if once is None:
            return None
        evaluate, ref = once
        load = _at(ast.Attribute(evaluate, target.attr, _LOAD), target)
        return _at(ast.Attribute(ref, target.attr, _STORE), target), load

    def _subscript_pair(self, target: ast.Subscript, walrus_ok: bool):
        index = target.slice
        if _is_extended_slice(index):
            return None
        once = self._once(target.value, walrus_ok)
        if once is None:
            return None
        evaluate, ref = once
        if isinstance(index, ast.Slice):
            bounds = _slice_bounds(index, target)
            helper, key_args = "sliceobj", bounds
            simple_key = all(_is_simple(b) for b in bounds)
        else:
            helper, key_args = "index", [index]
            simple_key = _is_simple(index)
        key = _helper_call(target, helper, [ref, *key_args])
        key_load: ast.expr
        key_store: ast.expr
        if simple_key:  # the key call may run twice: its arguments are plain names/constants
            key_load, key_store = key, _helper_call(target, helper, [ref, *key_args])
        elif walrus_ok:
            key_load, key_store = self._temp(key)
        else:
            return None
        load = _at(ast.Subscript(evaluate, key_load, _LOAD), target)
        return _at(ast.Subscript(ref, key_store, _STORE), target), load


_HANDLERS: dict[type[ast.AST], Callable[[Rewriter, Any, bool], None]] = {
    ast.Subscript: Rewriter.subscript, ast.BinOp: Rewriter.binop,
    ast.AugAssign: Rewriter.augassign, ast.Call: Rewriter.method_call,
    ast.Attribute: Rewriter.attribute, ast.Dict: Rewriter.dict_display,
    ast.DictComp: Rewriter.dict_comprehension,
}


def transform(tree: ast.Module, empty_dicts: set[tuple[int, int]],
              sites: list[tuple[ast.AST, bool]] | None = None) -> ast.Module:
    """Rewrite ``tree`` in place into Python-4 semantics; returns it.

    ``sites`` come from ``analyze(...).sites`` on this very tree; when omitted the
    analysis is run here to find them.
    """
    if sites is None:
        from py4.lang.analyze import analyze

        sites = analyze(tree, set(), empty_dicts).sites
    Rewriter(empty_dicts).apply(sites)
    return tree
