"""Positions in the Python 3 source: AST nodes and tokens as character offsets.

The AST gives (line, UTF-8 byte column) pairs; edits work on character offsets into
the source string, so this module converts between them once per node.
"""

from __future__ import annotations

import ast
import bisect
import io
import tokenize
from dataclasses import dataclass

from py4.lang.positions import node_span


@dataclass(frozen=True)
class Token:
    type: int
    string: str
    start: int  # character offset
    end: int


class SourceMap:
    """The source text with offset conversions and its token list."""

    def __init__(self, text: str):
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.line_starts = [0]
        for line in self.lines:
            self.line_starts.append(self.line_starts[-1] + len(line))
        self.tokens = self._tokenize()
        self._token_starts = [tok.start for tok in self.tokens]

    def _tokenize(self) -> list[Token]:
        tokens = []
        for tok in tokenize.generate_tokens(io.StringIO(self.text).readline):
            if tok.type in (tokenize.ENDMARKER,):
                continue
            start = self.offset_chars(*tok.start)
            end = self.offset_chars(*tok.end)
            tokens.append(Token(tok.type, tok.string, start, end))
        return tokens

    # -- conversions -------------------------------------------------------------
    def offset_chars(self, line: int, col: int) -> int:
        """Offset of a (1-based line, character column) position."""
        if line - 1 >= len(self.line_starts):
            return len(self.text)
        return self.line_starts[line - 1] + col

    def offset_bytes(self, line: int, byte_col: int) -> int:
        """Offset of a (1-based line, UTF-8 byte column) position, as the AST gives."""
        if line - 1 >= len(self.lines):
            return len(self.text)
        text = self.lines[line - 1]
        if text.isascii():
            return self.line_starts[line - 1] + byte_col
        return self.line_starts[line - 1] + len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))

    def position(self, offset: int) -> tuple[int, int]:
        """(1-based line, character column) of an offset."""
        index = bisect.bisect_right(self.line_starts, offset) - 1
        index = min(index, max(len(self.lines) - 1, 0))
        return index + 1, offset - self.line_starts[index]

    def span(self, node: ast.AST) -> tuple[int, int]:
        """Character offsets (start, end) of a positioned node."""
        line, col, end_line, end_col = node_span(node)
        return self.offset_bytes(line, col), self.offset_bytes(end_line, end_col)

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.text[start:end]

    # -- tokens --------------------------------------------------------------------
    def tokens_between(self, start: int, end: int) -> list[Token]:
        """Tokens that start at or after `start` and end at or before `end`."""
        first = bisect.bisect_left(self._token_starts, start)
        found = []
        for tok in self.tokens[first:]:
            if tok.start >= end:
                break
            if tok.end <= end:
                found.append(tok)
        return found

    def find_name_token(self, name: str, start: int, end: int) -> Token | None:
        """The first NAME token spelled `name` in [start, end)."""
        for tok in self.tokens_between(start, end):
            if tok.type == tokenize.NAME and tok.string == name:
                return tok
        return None

    def name_token(self, name: str, start: int, end: int) -> Token:
        """The first NAME token spelled `name` in [start, end), which the caller knows is there
        (a `def`'s keyword and name, a handler's `as` name)."""
        tok = self.find_name_token(name, start, end)
        if tok is None:
            raise ValueError(f"no NAME token {name!r} in source offsets {start}-{end}")
        return tok

    def indent_at(self, offset: int) -> str | None:
        """The indentation of the line holding `offset` when only spaces precede it."""
        line, col = self.position(offset)
        prefix = self.lines[line - 1][:col] if self.lines else ""
        return prefix if prefix.strip() == "" else None
