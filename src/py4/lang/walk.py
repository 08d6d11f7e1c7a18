"""Fast AST traversal for the analysis pass.

``ast.NodeVisitor`` builds a method name string and looks it up for every node, reads
every field with ``getattr`` and visits leaves such as ``Load()`` contexts and operators;
on a 300-line program that is most of the front end's time. ``FastVisitor`` is a
drop-in base (subclasses write ``visit_<Node>`` methods and call ``generic_visit``
exactly as for ``ast.NodeVisitor``) that instead:

- dispatches through a table from node class to function, filled once per subclass for
  every node class of the ``ast`` module;
- walks children with a function generated per node class from the class's ASDL
  signature (``ast.BinOp.__doc__`` is ``BinOp(expr left, operator op, expr right)``):
  straight-line attribute reads of the fields that can hold nodes, nothing else;
- does not call anything for children whose class is in ``skip_types`` (leaves the
  subclass has nothing to do with) or for absent optional children (``None``).
"""

from __future__ import annotations

import ast
import re
from typing import Any

# ASDL types whose values are never nodes worth visiting (names, flags, operators...).
_LEAF_TYPES = frozenset({
    "identifier", "string", "constant", "int", "expr_context", "operator", "cmpop",
    "unaryop", "boolop", "type_ignore",
})
_SIGNATURE = re.compile(r"^\w+\((?P<fields>[^()]*)\)$")
_FIELD = re.compile(r"^(?P<type>\w+)(?P<quantity>[*?]?) (?P<name>\w+)$")


def _node_classes() -> list[type]:
    """Every concrete node class of the ast module (deprecated aliases included)."""
    seen: list[type] = []
    pending = [ast.AST]
    while pending:
        cls = pending.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.append(sub)
                pending.append(sub)
    return seen


def _child_fields(cls: type[ast.AST]) -> list[tuple[str, bool]] | None:
    """(field, holds a list) for each field of ``cls`` that may hold nodes; None if the
    class has no readable ASDL signature (a deprecated alias, an abstract class)."""
    if not cls._fields:
        return []
    match = _SIGNATURE.match((cls.__doc__ or "").strip())
    if match is None or tuple(cls._fields) != tuple(
            f.split()[-1] for f in match.group("fields").split(", ") if f):
        return None
    fields = []
    for spec in filter(None, match.group("fields").split(", ")):
        parts = _FIELD.match(spec)
        if parts is None:
            return None
        if parts.group("type") not in _LEAF_TYPES:
            fields.append((parts.group("name"), parts.group("quantity") == "*"))
    return fields


def _make_walker(cls: type, skip: frozenset):
    """A function (visitor, node) that dispatches each child node of a ``cls`` node."""
    fields = _child_fields(cls)
    if fields is None:
        return _slow_walk
    lines = ["def walk(self, node):", "    table = self._table"]
    for name, many in fields:
        if many:
            lines += [f"    for child in node.{name}:",
                      "        if child.__class__ not in skip: table[child.__class__](self, child)"]
        else:
            lines += [f"    child = node.{name}",
                      "    if child.__class__ not in skip: table[child.__class__](self, child)"]
    if len(lines) == 2:
        lines[1] = "    pass"
    namespace: dict[str, Any] = {"skip": skip}
    exec("\n".join(lines), namespace)  # code built above from ast's own signatures
    walk = namespace["walk"]
    walk.__name__ = walk.__qualname__ = f"walk_{cls.__name__}"
    return walk


def _slow_walk(self, node) -> None:
    """The generic walk, for node classes without a signature (never made by the parser)."""
    for _, value in ast.iter_fields(node):
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, ast.AST) and item.__class__ not in self.skip_types:
                self.visit(item)


def _visit_function(visitor_cls: type, node_cls: type, walker):
    """The subclass's ``visit_<Node>`` if it has one, else the walk. ``ast.NodeVisitor``'s
    own ``visit_Constant`` (which probes deprecated handlers, slowly) does not count."""
    name = "visit_" + node_cls.__name__
    method = getattr(visitor_cls, name, None)
    if method is None or method is getattr(ast.NodeVisitor, name, None):
        return walker
    return method


class FastVisitor(ast.NodeVisitor):
    """``ast.NodeVisitor`` with table dispatch and generated child walks.

    Child nodes whose class is in ``skip_types`` are not visited at all by
    ``generic_visit`` (a subclass lists the leaves it has nothing to do with).
    """

    skip_types: frozenset = frozenset()
    _table: dict = {}  # node class -> visit function (the visit_X method or the walk)
    _walkers: dict = {}  # node class -> generated child walk

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        skip = frozenset({*cls.skip_types, type(None)})
        cls._walkers = {node_cls: _make_walker(node_cls, skip) for node_cls in _node_classes()}
        cls._table = {node_cls: _visit_function(cls, node_cls, walker)
                      for node_cls, walker in cls._walkers.items()}

    def visit(self, node):
        return self._table[node.__class__](self, node)

    def generic_visit(self, node):
        self._walkers[node.__class__](self, node)
