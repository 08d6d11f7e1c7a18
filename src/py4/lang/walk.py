"""Fast AST traversal for the analysis and transform passes.

``ast.NodeVisitor`` builds a method name string and looks it up for every node, and
visits leaves such as ``Load()`` contexts and operators; on a 300-line program that is
most of the front end's time. These drop-in bases dispatch through a per-class table
and skip the fields that never hold child nodes. Subclasses write ``visit_<Node>``
methods exactly as for ``ast.NodeVisitor`` / ``ast.NodeTransformer``.
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


def _dispatch_table(visitor_cls: type) -> dict:
    table = visitor_cls.__dict__.get("_dispatch")
    if table is None:
        table = {}
        visitor_cls._dispatch = table
    return table


class FastVisitor(ast.NodeVisitor):
    """``ast.NodeVisitor`` with table dispatch and leaf fields skipped.

    Child nodes whose class is in ``skip_types`` are not visited at all by
    ``generic_visit`` (a subclass lists the leaves it has nothing to do with).
    """

    skip_types: frozenset = frozenset()

    def visit(self, node):
        cls = node.__class__
        table = _dispatch_table(type(self))
        method = table.get(cls)
        if method is None:
            method = getattr(type(self), "visit_" + cls.__name__, type(self).generic_visit)
            table[cls] = method
        return method(self, node)

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


class FastTransformer(FastVisitor):
    """``ast.NodeTransformer`` semantics (return a node, a list, or None) on FastVisitor."""

    def generic_visit(self, node):
        skip = self.skip_types
        for name in child_fields(node.__class__):
            value = getattr(node, name, None)
            if value.__class__ is list:
                self._visit_list(value)
            elif isinstance(value, ast.AST) and value.__class__ not in skip:
                new = self.visit(value)
                if new is not value:
                    setattr(node, name, new)
        return node

    def _visit_list(self, items: list) -> None:
        """Visit a list field in place; rebuild it only when an item changes shape."""
        changed = False
        out = []
        skip = self.skip_types
        for item in items:
            if not isinstance(item, ast.AST) or item.__class__ in skip:
                out.append(item)
                continue
            new = self.visit(item)
            if new is not item:
                changed = True
            if new is None:
                continue
            if isinstance(new, list):
                out.extend(new)
            else:
                out.append(new)
        if changed:
            items[:] = out
