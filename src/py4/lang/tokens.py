"""Token-level rewrite of Python-4 text into Python 3 text, with a column map.

Python's own ``tokenize`` lexes Python-4: ``i"…"`` is a NAME ``i`` immediately
followed by a STRING, ``{:}`` is three OP tokens and ``else if`` two NAMEs. Every edit
stays inside one physical line, so line numbers never change; a per-line column map
turns Python 3 columns back into Python-4 columns for diagnostics.

Rewrites: ``fn``→``def``, ``fun``→``lambda``, ``use``→``import``, ``catch``→``except``,
``throw``→``raise``, ``nil/true/false``→``None/True/False``, ``else if``→``elif``,
``i"…"``→``f"…"`` (``ri``→``rf``), ``{:}``→``{}`` (remembered, so that the AST pass
makes it an empty Python-4 dict while a plain ``{}`` becomes ``set()``), and ``let``
is removed (its position is remembered: the assignment there declares).

The Python 3 spellings (``def``, ``elif``, ``lambda``, ``import``, ``except``,
``raise``, ``None``, ``True``, ``False``, f-strings) are left in place, so that the
rest of the program still parses and *every* such use is reported, not just the first.
Names after a ``.`` are attribute names and are never rewritten.
"""

from __future__ import annotations

import bisect
import io
import tokenize
from dataclasses import dataclass, field

from py4.lang.diagnostics import Diagnostic, make_diagnostic

# Python-4 keyword -> its Python 3 spelling (same meaning).
PY4_KEYWORDS = {
    "fn": "def",
    "fun": "lambda",
    "use": "import",
    "catch": "except",
    "throw": "raise",
    "nil": "None",
    "true": "True",
    "false": "False",
}
# Python 3 spellings that are errors in Python-4 -> MESSAGES kind.
PY3_SPELLINGS = {
    "def": "def",
    "elif": "elif",
    "lambda": "lambda",
    "import": "import",
    "except": "except",
    "raise": "raise",
    "None": "None",
    "True": "True",
    "False": "False",
}
# Construct tags seen at token level (consumed by analyze.EXERCISED_BY).
KEYWORD_TAGS = {
    "fn": "fn", "def": "fn", "fun": "fun", "lambda": "fun", "use": "use", "import": "use",
    "catch": "catch", "except": "catch", "throw": "throw", "raise": "throw",
    "nil": "nil", "None": "nil", "true": "nil", "True": "nil", "false": "nil", "False": "nil",
    "elif": "else_if",
}
I_STRING_PREFIXES = {"i": "f", "I": "f"}
for _r in "rR":
    for _i in "iI":
        I_STRING_PREFIXES[_r + _i] = _r + "f"
        I_STRING_PREFIXES[_i + _r] = "f" + _r
# CPython's parser stops at 200 nested brackets; stopping here keeps deep input cheap.
MAX_BRACKET_DEPTH = 200
_OPEN, _CLOSE = "([{", ")]}"
_LET_TARGET_STARTS = {"(", "[", "*"}


@dataclass
class _Edit:
    line: int
    start: int  # Python-4 character columns
    end: int
    text: str
    marker: str = ""  # "let" or "empty_dict": position to remember after the rewrite


@dataclass
class TokenPass:
    """The Python 3 text of a Python-4 program, and what the token pass learned."""

    py4_lines: list[str]
    py3_lines: list[str]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    tags: set[str] = field(default_factory=set)
    # (line, Python 3 UTF-8 byte column) where a `let` statement / a `{:}` starts.
    let_positions: set[tuple[int, int]] = field(default_factory=set)
    empty_dicts: set[tuple[int, int]] = field(default_factory=set)
    # line -> sorted anchors (py3 char col, py4 char col, py3 end of replacement)
    col_maps: dict[int, list[tuple[int, int, int]]] = field(default_factory=dict)
    fatal: bool = False  # a diagnostic that makes parsing pointless (too deep)
    token_error: tuple[int, int, str] | None = None

    @property
    def text(self) -> str:
        return "".join(self.py3_lines)

    def py4_position(self, line: int, py3_col: int, col_is_bytes: bool = False) -> tuple[int, int]:
        """Map a Python 3 position (line, column) to the Python-4 (line, char column)."""
        if line < 1:
            return 1, 0
        if line > len(self.py3_lines):
            last = len(self.py4_lines)
            return max(last, 1), 0
        if col_is_bytes:
            py3_line = self.py3_lines[line - 1]
            if not py3_line.isascii():
                py3_col = len(py3_line.encode("utf-8")[:py3_col].decode("utf-8", "ignore"))
        anchors = self.col_maps.get(line)
        if not anchors:
            return line, max(py3_col, 0)
        i = bisect.bisect_right(anchors, (py3_col, 1 << 62, 0)) - 1
        if i < 0:
            return line, max(py3_col, 0)
        py3_anchor, py4_anchor, replaced_end = anchors[i]
        if py3_col < replaced_end:  # inside a replacement: point at its start
            return line, py4_anchor
        return line, py4_anchor + (py3_col - py3_anchor)


def _split_lines(source: str) -> list[str]:
    """Split on '\\n' only (what tokenize and the parser do), keeping the ends."""
    parts = source.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _collect_tokens(source: str, result: TokenPass) -> list[tokenize.TokenInfo]:
    tokens: list[tokenize.TokenInfo] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            tokens.append(tok)
    except tokenize.TokenError as exc:  # EOF in a string or a bracket: the parser explains
        line, col = exc.args[1] if len(exc.args) > 1 else (1, 0)
        result.token_error = (line, col, str(exc.args[0]))
    except (IndentationError, SyntaxError) as exc:
        result.token_error = (exc.lineno or 1, max((exc.offset or 1) - 1, 0), exc.msg)
    return tokens


def rewrite_tokens(source: str) -> TokenPass:
    """Rewrite Python-4 text to Python 3 text (never raises for str input).

    ``source`` must already be free of NUL bytes and use '\\n' line ends.
    """
    result = TokenPass(py4_lines=_split_lines(source), py3_lines=[])
    tokens = _collect_tokens(source, result)
    edits = _plan_edits(tokens, result)
    _apply_edits(result, edits)
    return result


def _plan_edits(tokens: list[tokenize.TokenInfo], result: TokenPass) -> list[_Edit]:
    edits: list[_Edit] = []
    depth = 0
    prev = None  # previous significant token
    n = len(tokens)
    i = 0
    while i < n:
        tok = tokens[i]
        ttype, string = tok.type, tok.string
        if ttype == tokenize.OP:
            if string in _OPEN:
                depth += 1
                if depth > MAX_BRACKET_DEPTH:
                    result.diagnostics.append(make_diagnostic("too_deep", *tok.start))
                    result.fatal = True
                    return edits
                end = _plan_braces(tokens, i, edits, result) if string == "{" else -1
                if end != -1:
                    depth -= 1
                    prev = tokens[end]
                    i = end + 1
                    continue
            elif string in _CLOSE:
                depth -= 1
        elif ttype == tokenize.NAME and not (prev is not None and prev.string == "."):
            i = _plan_name(tokens, i, prev, edits, result)
            tok = tokens[i]
        elif ttype == tokenize.STRING:
            _check_string_prefix(tok, result)
        if ttype not in (tokenize.NL, tokenize.COMMENT):
            prev = tok
        i += 1
    return edits


def _plan_braces(tokens, i, edits, result) -> int:
    """`{:}` -> `{}` (remembered) and `{}` tagged; returns the index of `}` or -1."""
    if i + 2 >= len(tokens):
        return -1
    tok, nxt, third = tokens[i], tokens[i + 1], tokens[i + 2]
    if nxt.type == tokenize.OP and nxt.string == "}":
        result.tags.add("empty_braces")
        return i + 1
    if (nxt.type == tokenize.OP and nxt.string == ":" and third.type == tokenize.OP
            and third.string == "}" and tok.start[0] == third.end[0]):
        edits.append(_Edit(tok.start[0], tok.start[1], third.end[1], "{}", "empty_dict"))
        result.tags.add("empty_braces")
        return i + 2
    return -1


def _plan_name(tokens, i, prev, edits, result) -> int:
    """Plan the edit for NAME token ``tokens[i]``; returns the last index consumed."""
    tok = tokens[i]
    word = tok.string
    line, col = tok.start
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if word in PY4_KEYWORDS:
        edits.append(_Edit(line, col, tok.end[1], PY4_KEYWORDS[word]))
        result.tags.add(KEYWORD_TAGS[word])
    elif word in PY3_SPELLINGS:
        result.diagnostics.append(make_diagnostic(PY3_SPELLINGS[word], line, col))
        result.tags.add(KEYWORD_TAGS[word])
    elif word == "else" and nxt is not None and nxt.type == tokenize.NAME \
            and nxt.string == "if" and nxt.start[0] == line:
        edits.append(_Edit(line, col, nxt.end[1], "elif"))
        result.tags.add("else_if")
        return i + 1
    elif word == "let":
        if nxt is not None and nxt.start[0] == line and (
                nxt.type == tokenize.NAME or nxt.string in _LET_TARGET_STARTS):
            edits.append(_Edit(line, col, nxt.start[1], "", "let"))
            result.tags.add("let")
            if nxt.type == tokenize.NAME and (nxt.string in PY4_KEYWORDS or nxt.string == "let"):
                # `let fun = 3`: name the misused word, and parse it as the plain name.
                result.diagnostics.append(make_diagnostic("reserved", *nxt.start, word=nxt.string))
                return i + 1
        else:
            result.diagnostics.append(make_diagnostic("reserved", line, col, word="let"))
    elif word in I_STRING_PREFIXES and nxt is not None and nxt.type == tokenize.STRING \
            and nxt.start == tok.end and nxt.string[:1] in "\"'":
        edits.append(_Edit(line, col, tok.end[1], I_STRING_PREFIXES[word]))
        result.tags.add("i_string")
        return i + 1
    return i


def _check_string_prefix(tok: tokenize.TokenInfo, result: TokenPass) -> None:
    string = tok.string
    quote = min((p for p in (string.find('"'), string.find("'")) if p >= 0), default=0)
    if "f" in string[:quote].lower():
        result.diagnostics.append(make_diagnostic("fstring", *tok.start))
        result.tags.add("i_string")


def _apply_edits(result: TokenPass, edits: list[_Edit]) -> None:
    lines = list(result.py4_lines)
    by_line: dict[int, list[_Edit]] = {}
    for edit in edits:
        by_line.setdefault(edit.line, []).append(edit)
    for line_no, line_edits in by_line.items():
        original = lines[line_no - 1]
        pieces: list[str] = []
        anchors: list[tuple[int, int, int]] = []
        py3_len = 0  # characters of Python 3 text so far on this line
        py3_bytes = 0  # the same in UTF-8 bytes (AST columns are bytes)
        ascii_line = original.isascii()
        cursor = 0
        for edit in sorted(line_edits, key=lambda e: e.start):
            kept = original[cursor:edit.start]
            pieces.append(kept)
            py3_len += len(kept)
            py3_bytes += len(kept) if ascii_line else len(kept.encode("utf-8"))
            if edit.marker:
                position = (line_no, py3_bytes)
                (result.let_positions if edit.marker == "let" else result.empty_dicts).add(position)
            anchors.append((py3_len, edit.start, py3_len + len(edit.text)))
            pieces.append(edit.text)
            py3_len += len(edit.text)
            py3_bytes += len(edit.text.encode("utf-8"))
            anchors.append((py3_len, edit.end, py3_len))
            cursor = edit.end
        pieces.append(original[cursor:])
        lines[line_no - 1] = "".join(pieces)
        result.col_maps[line_no] = anchors
    result.py3_lines = lines
