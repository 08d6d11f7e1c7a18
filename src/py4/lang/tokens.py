"""Token-level rewrite of Python-4 text into Python 3 text, with a column map.

Python-4 lexes like Python 3 (``i"…"`` is a string with a new prefix, ``{:}`` three
operators, ``else if`` two names), so the rewrite only needs to find words, string
prefixes and braces *outside* strings and comments. A single regular expression does
that in C (``_SCANNER``): it is what Python's ``tokenize`` would find, at a tenth of the
cost, which keeps ``compile_py4`` within a small factor of CPython's ``compile()``.
Every edit stays inside one physical line, so line numbers never change; a per-line
column map turns Python 3 columns back into Python-4 columns for diagnostics.

Rewrites: ``fn``→``def``, ``fun``→``lambda``, ``use``→``import``, ``catch``→``except``,
``throw``→``raise``, ``nil/true/false``→``None/True/False``, ``else if``→``elif``,
``i"…"``→``f"…"`` (``ri``→``rf``), ``{:}``→``{}`` (remembered, so that the AST pass
makes it an empty Python-4 dict while a plain ``{}`` becomes ``set()``), and ``let``
is removed (its position is remembered: the assignment there declares).

The Python 3 spellings (``def``, ``elif``, ``lambda``, ``import``, ``except``,
``raise``, ``None``, ``True``, ``False``, f-strings) are left in place, so that the
rest of the program still parses and *every* such use is reported, not just the first.
Words after the ``.`` of an attribute access are attribute names and never rewritten
(``from . use x`` is a relative import, not an attribute). Code inside the braces of an
i-string is not rewritten here (the AST pass maps ``nil``/``true``/``false`` there).
"""

from __future__ import annotations

import bisect
import itertools
import re
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
RESERVED_WORDS = frozenset({*PY4_KEYWORDS, "let"})
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
_PY3_PREFIXES = frozenset({"", "r", "u", "b", "br", "rb", "f", "fr", "rf"})

_KEYWORDS = sorted({*PY4_KEYWORDS, *PY3_SPELLINGS, "let"}, key=len, reverse=True)
_KW = r"(?:" + "|".join(_KEYWORDS) + r"|else(?=[ \t]+if(?!\w)))(?!\w)"
_STRING_BODY = (
    r"(?:'''(?:[^'\\]++|\\.|'(?!''))*+'''"
    r'|"""(?:[^"\\]++|\\.|"(?!""))*+"""'
    r"|'(?:[^'\\\n]++|\\.)*+'"
    r'|"(?:[^"\\\n]++|\\.)*+")'
)
# One match per interesting item. The skip part consumes, possessively (so the scan
# stays linear), everything the rewrite never touches: plain strings, comments, numbers,
# other names, operators. Then comes the item: a prefixed string, a keyword, `{}`/`{:}`,
# the end of the text, or one character where skipping got stuck (an unterminated quote).
_SKIP = (
    r"(?:[^'\"#\w{\\]++|\\.|\#[^\n]*+|" + _STRING_BODY
    + r"|(?!" + _KW + r")[^\W\d]\w*+(?!['\"])|\d\w*+|\{(?![ \t]*+:?[ \t]*+\}))*+"
)
_SCANNER = re.compile(
    _SKIP
    + r"(?:(?P<string>(?<!\w)[rRbBuUfFiI]{1,3}" + _STRING_BODY + r")"
    + r"|(?P<kw>(?<!\w)" + _KW + r")"
    + r"|(?P<brace>\{[ \t]*+(?P<colon>:)?[ \t]*+\})"
    + r"|(?P<end>\Z)|(?P<other>.))",
    re.DOTALL,
)
_LET_NEXT = re.compile(r"[ \t]*+(?:(?P<name>[^\W\d]\w*+)|[(\[*])")
_ELSE_IF = re.compile(r"else[ \t]+if")


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
    skip_offsets: set[int] = field(default_factory=set)  # words left as names (`let fun`)

    @property
    def text(self) -> str:
        return "".join(self.py3_lines)

    def py4_position(self, line: int, py3_col: int, col_is_bytes: bool = False) -> tuple[int, int]:
        """Map a Python 3 position (line, column) to the Python-4 (line, char column)."""
        if line < 1:
            return 1, 0
        if line > len(self.py3_lines):
            return max(len(self.py4_lines), 1), 0
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

    def py4_word_at(self, line: int, col: int) -> str:
        """The identifier starting at a Python-4 position ('' if none)."""
        if not 1 <= line <= len(self.py4_lines):
            return ""
        match = re.match(r"[^\W\d]\w*", self.py4_lines[line - 1][col:])
        return match.group() if match else ""


def _split_lines(source: str) -> list[str]:
    """Split on '\\n' only (what the parser does), keeping the ends."""
    parts = source.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


class _Locator:
    """Absolute text offsets to (line, column)."""

    def __init__(self, lines: list[str]):
        self.starts = list(itertools.accumulate((len(line) for line in lines), initial=0))

    def __call__(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset) - 1
        return line + 1, offset - self.starts[line]


def _is_attribute_name(text: str, offset: int) -> bool:
    """True when the word at ``offset`` follows the `.` of an attribute access."""
    i = offset - 1
    while i >= 0 and (text[i] in " \t" or (text[i] == "\n" and text[i - 1:i] == "\\")):
        i -= 2 if text[i] == "\n" else 1  # a backslash continuation joins the lines
    if i < 0 or text[i] != ".":
        return False
    while i >= 0 and text[i] in ". \t":  # `from . use x`, `from .. use x`: no attribute
        i -= 1
    return not (i >= 3 and text[i - 3:i + 1] == "from" and (i < 4 or not text[i - 4].isalnum()))


def rewrite_tokens(source: str) -> TokenPass:
    """Rewrite Python-4 text to Python 3 text (never raises for str input).

    ``source`` must already be free of NUL bytes and use '\\n' line ends.
    """
    result = TokenPass(py4_lines=_split_lines(source), py3_lines=[])
    edits = _plan_edits(source, result)
    _apply_edits(result, edits)
    return result


def _plan_edits(text: str, result: TokenPass) -> list[_Edit]:
    edits: list[_Edit] = []
    locate = _Locator(result.py4_lines)
    for match in _SCANNER.finditer(text):
        kind = match.lastgroup
        if kind == "kw":
            offset = match.start("kw")
            if offset not in result.skip_offsets and not _is_attribute_name(text, offset):
                _plan_keyword(text, offset, match.group("kw"), locate, edits, result)
        elif kind == "string":
            _plan_string(match.start("string"), match.group("string"), locate, edits, result)
        elif kind in ("brace", "colon"):
            result.tags.add("empty_braces")
            if match.group("colon"):
                line, col = locate(match.start("brace"))
                edits.append(_Edit(line, col, col + len(match.group("brace")), "{}", "empty_dict"))
    return edits


def _plan_keyword(text, offset, word, locate, edits, result) -> None:
    line, col = locate(offset)
    if word in PY4_KEYWORDS:
        edits.append(_Edit(line, col, col + len(word), PY4_KEYWORDS[word]))
        result.tags.add(KEYWORD_TAGS[word])
    elif word in PY3_SPELLINGS:
        result.diagnostics.append(make_diagnostic(PY3_SPELLINGS[word], line, col))
        result.tags.add(KEYWORD_TAGS[word])
    elif word == "else":
        length = _ELSE_IF.match(text, offset).end() - offset
        edits.append(_Edit(line, col, col + length, "elif"))
        result.tags.add("else_if")
    else:
        _plan_let(text, offset, line, col, edits, result)


def _plan_let(text, offset, line, col, edits, result) -> None:
    following = _LET_NEXT.match(text, offset + 3)
    if following is None:
        result.diagnostics.append(make_diagnostic("reserved", line, col, word="let"))
        return
    name = following.group("name")
    target = following.start("name") if name else following.end() - 1
    edits.append(_Edit(line, col, col + target - offset, "", "let"))
    result.tags.add("let")
    if name in RESERVED_WORDS:
        # `let fun = 3`: name the misused word, and parse it as a plain name.
        result.diagnostics.append(make_diagnostic("reserved", line, col + target - offset, word=name))
        result.skip_offsets.add(target)


def _plan_string(offset, string, locate, edits, result) -> None:
    quote = min(p for p in (string.find('"'), string.find("'")) if p >= 0)
    prefix = string[:quote]
    line, col = locate(offset)
    if prefix in I_STRING_PREFIXES:
        edits.append(_Edit(line, col, col + quote, I_STRING_PREFIXES[prefix]))
        result.tags.add("i_string")
    elif "f" in prefix.lower() and prefix.lower() in _PY3_PREFIXES:
        result.diagnostics.append(make_diagnostic("fstring", line, col))
        result.tags.add("i_string")
    elif prefix.lower() not in _PY3_PREFIXES:  # a name glued to a string: `nil"x"`
        word = re.match(r"[^\W\d]\w*", prefix).group()
        if word in PY4_KEYWORDS:
            edits.append(_Edit(line, col, col + len(word), PY4_KEYWORDS[word]))


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
        for edit in line_edits:  # planned left to right, so already in column order
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
