"""Fast AST traversal for the analysis and transform passes.

``ast.NodeVisitor`` builds a method name string and looks it up for every node, and
visits leaves such as ``Load()`` contexts and operators; on a 300-line program that is
most of the front end's time. This drop-in base dispatches through a per-class table
and skips the fields that never hold child nodes. Subclasses write ``visit_<Node>``
methods exactly as for ``ast.NodeVisitor``.
"""

from __future__ import annotations

import ast

# Fields that never contain a node worth visiting (names, flags, operators, contexts).
_LEAF_FIELDS = frozenset({
    "ctx", "op", "ops", "id", "attr", "arg", "name", "asname", "module", "level",
    "conversion", "is_async", "simple", "kind", "type_comment", "type_ignores", "rest",
    "kwd_attrs", "tag",
})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def child_fields(cls: type) -> tuple[str, ...]:
    fields = _CHILD_FIELDS.get(cls)
    if fields is None:
        fields = tuple(f for f in cls._fields if f not in _LEAF_FIELDS)
        if cls is ast.Constant:
            fields = ()
        _CHILD_FIELDS[cls] = fields
    return fields


class FastVisitor(ast.NodeVisitor):
    """``ast.NodeVisitor`` with table dispatch and leaf fields skipped.

    Child nodes whose class is in ``skip_types`` are not visited at all by
    ``generic_visit`` (a subclass lists the leaves it has nothing to do with).
    """

    skip_types: frozenset = frozenset()
    _table: dict = {}

    def visit(self, node):
        method = self._table.get(node.__class__)
        if method is None:
            cls = node.__class__
            method = getattr(type(self), "visit_" + cls.__name__, type(self).generic_visit)
            self._table[cls] = method
        return method(self, node)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._table = {}  # node class -> visit method, filled on first sight

    def generic_visit(self, node):
        skip = self.skip_types
        for name in child_fields(node.__class__):
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, ast.AST) and item.__class__ not in skip:
                        self.visit(item)
            elif isinstance(value, ast.AST) and value.__class__ not in skip:
                self.visit(value)
