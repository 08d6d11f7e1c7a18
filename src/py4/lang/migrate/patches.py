"""Edits on the Python 3 source, attached to AST nodes, rendered once at the end.

Every positioned AST node owns the text of its span. A fixer changes text in one of
two ways:
- a *local edit*: (start, end, text) inside a node's span but outside all of its
  children (a keyword such as `def`, an inserted `let `);
- a *layer*: a template that replaces the node's whole text. A template mixes plain
  strings, other nodes (rendered with their own edits) and `SELF` (this node as
  rendered by the layers below), so `py3_iter(SELF)` wraps and `[value, ".join(", sep,
  ")"]` restructures while edits inside `value` and `sep` survive.
Rendering is lazy, so fixers can run in any order; comments and formatting outside
the edited spans are copied verbatim.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from py4.lang.migrate.source import SourceMap

SELF = object()


class PatchConflict(Exception):
    """Two edits overlap in a way that has no single meaning (a fixer bug)."""


@dataclass
class _NodeInfo:
    node: ast.AST
    start: int
    end: int
    children: list[ast.AST] = field(default_factory=list)
    # (start, end, text or a template from insert_template, sequence number)
    local: list[tuple[int, int, str | list, int]] = field(default_factory=list)
    layers: list[list] = field(default_factory=list)


def _positioned(node: ast.AST) -> bool:
    return getattr(node, "lineno", None) is not None and getattr(node, "end_lineno", None) is not None


class Patches:
    """The edit store for one source text and its AST."""

    def __init__(self, src: SourceMap, tree: ast.Module):
        self.src = src
        self.tree = tree
        self.info: dict[int, _NodeInfo] = {}
        self._seq = 0
        root = _NodeInfo(tree, 0, len(src.text))
        self.info[id(tree)] = root
        self._collect(tree, root)
        self._extend(root)

    # -- tree ------------------------------------------------------------------------
    def _collect(self, node: ast.AST, owner: _NodeInfo) -> None:
        if isinstance(node, ast.JoinedStr):
            return  # f-strings are leaves; fix_fstrings rewrites their inside as text
        for child in ast.iter_child_nodes(node):
            if _positioned(child) and not isinstance(child, ast.expr_context):
                start, end = self.src.span(child)
                info = _NodeInfo(child, start, end)
                self.info[id(child)] = info
                owner.children.append(child)
                self._collect(child, info)
            else:
                self._collect(child, owner)

    def _extend(self, info: _NodeInfo) -> None:
        """Widen spans to cover children (decorators sit before `def`)."""
        for child in info.children:
            child_info = self.info[id(child)]
            self._extend(child_info)
            info.start = min(info.start, child_info.start)
            info.end = max(info.end, child_info.end)
        info.children.sort(key=lambda c: self.info[id(c)].start)

    def span(self, node: ast.AST) -> tuple[int, int]:
        info = self.info[id(node)]
        return info.start, info.end

    def has(self, node: ast.AST) -> bool:
        return id(node) in self.info

    # -- edits -------------------------------------------------------------------------
    def local(self, node: ast.AST, start: int, end: int, text: str) -> None:
        """Replace source [start, end) inside `node` but outside its children."""
        info = self.info[id(node)]
        if not (info.start <= start <= end <= info.end):
            raise PatchConflict(f"edit {start}-{end} outside its node {type(node).__name__}")
        for child in info.children:
            c_start, c_end = self.span(child)
            if start < c_end and c_start < end:
                raise PatchConflict(f"edit {start}-{end} overlaps child {type(child).__name__}")
        self._seq += 1
        info.local.append((start, end, text, self._seq))

    def insert(self, node: ast.AST, offset: int, text: str) -> None:
        self.local(node, offset, offset, text)

    def insert_template(self, node: ast.AST, offset: int, template: list) -> None:
        """Insert a template (str, nodes, (node, k)) at `offset` inside `node`'s own text."""
        self.local(node, offset, offset, "")
        start, end, _, seq = self.info[id(node)].local[-1]
        self.info[id(node)].local[-1] = (start, end, template, seq)

    def replace(self, node: ast.AST, template: list, *, override: bool = False) -> None:
        """Replace the node's text by a template of str, nodes, (node, k) and SELF.

        The node itself inside its own template means SELF (its text so far).
        A template without SELF restates the node from its children (`a // b` →
        `py3_floordiv(a, b)`); it goes beneath the layers that only wrap SELF, whichever
        fixer ran first, so `range(a // b)`'s closed-range `… - 1` wraps the helper call
        instead of being lost under it. `override` puts it on top: the node's text is
        then that template alone (a converted default becomes `nil`).
        """
        template = [SELF if part is node else part for part in template]
        for part in template:
            if isinstance(part, tuple):
                part = part[0]
            if isinstance(part, ast.AST) and not self.has(part):
                raise PatchConflict(f"template part {type(part).__name__} has no position")
        layers = self.info[id(node)].layers
        restates = not any(part is SELF for part in template)
        if restates and not override and layers and all(
                any(part is SELF for part in layer) for layer in layers):
            layers.insert(0, template)
        else:
            layers.append(template)

    def wrap(self, node: ast.AST, before: str, after: str) -> None:
        self.replace(node, [before, SELF, after])

    def is_replaced(self, node: ast.AST) -> bool:
        return bool(self.info[id(node)].layers)

    # -- rendering -------------------------------------------------------------------
    def render(self, node: ast.AST | None = None) -> str:
        node = self.tree if node is None else node
        info = self.info[id(node)]
        return self._render_layer(info, len(info.layers))

    def _render_parts(self, parts: list) -> str:
        out = []
        for part in parts:
            if isinstance(part, ast.AST):
                out.append(self.render(part))
            elif isinstance(part, tuple):
                out.append(self._render_layer(self.info[id(part[0])], part[1]))
            else:
                out.append(part)
        return _join(out)

    def _render_layer(self, info: _NodeInfo, depth: int) -> str:
        if depth == 0:
            return self._render_base(info)
        out = []
        for part in info.layers[depth - 1]:
            if part is SELF:
                out.append(self._render_layer(info, depth - 1))
            elif isinstance(part, ast.AST):
                out.append(self.render(part))
            elif isinstance(part, tuple):  # (node, k): the node with only its first k layers
                out.append(self._render_layer(self.info[id(part[0])], part[1]))
            else:
                out.append(part)
        return _join(out)

    def _render_base(self, info: _NodeInfo) -> str:
        items: list[tuple[int, int, int, int, str | list | ast.AST]] = [
            (s, e, 0 if s == e else 1, seq, text) for s, e, text, seq in info.local]
        for child in info.children:
            c_start, c_end = self.span(child)
            items.append((c_start, c_end, 1, 0, child))
        items.sort(key=lambda item: (item[0], item[2], item[3]))
        out, cursor, text = [], info.start, self.src.text
        for start, end, _, _, payload in items:
            if start < cursor:
                raise PatchConflict(f"overlapping edits at offset {start}")
            out.append(text[cursor:start])
            if isinstance(payload, ast.AST):
                out.append(self.render(payload))
            elif isinstance(payload, list):
                out.append(self._render_parts(payload))
            else:
                out.append(payload)
            cursor = end
        out.append(text[cursor:info.end])
        return _join(out)


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _join(pieces: list[str]) -> str:
    """Concatenate rendered pieces, keeping tokens apart where two words would meet.

    An edit may put a word where the source had an operator with no spaces around it
    (`x==None` → `x is nil`, `return(a)//b` → `return py3_floordiv(…)`). Python never has
    two name/keyword/number tokens touching, so a space between two word characters at
    a piece boundary is always needed there and never changes meaning.
    """
    out: list[str] = []
    last = ""
    for piece in pieces:
        if not piece:
            continue
        if last and _is_word_char(last[-1]) and _is_word_char(piece[0]):
            out.append(" ")
        out.append(piece)
        last = piece
    return "".join(out)
