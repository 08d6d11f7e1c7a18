"""Token-level rewrite of Python-4 text into Python 3 text, with a column map.

Python-4 lexes like Python 3 (``i"…"`` is a string with a new prefix, ``{:}`` three
operators, ``else if`` two names), so the rewrite only needs to find words, string
prefixes and braces *outside* strings and comments. A single regular expression does
that in C (``_SCANNER``): it is what Python's ``tokenize`` would find, at a tenth of the
cost, which keeps ``compile_py4`` within a small factor of CPython's ``compile()``.
Every edit stays inside one physical line, so line numbers never change; the edits
themselves are kept, and the column map that turns Python 3 columns back into Python-4
columns is built from them only when a diagnostic needs it.

Rewrites: ``fn``→``def``, ``fun``→``lambda``, ``use``→``import``, ``catch``→``except``,
``throw``→``raise``, ``nil/true/false``→``None/True/False``, ``else if``→``elif``,
``i"…"``→``f"…"`` (``ri``→``rf``), ``{:}``→``{}`` (remembered, so that the AST pass
makes it an empty Python-4 dict while a plain ``{}`` becomes ``set()``), and ``let``
is removed (its position is remembered: the assignment there declares).

The Python 3 spellings (``def``, ``elif``, ``lambda``, ``import``, ``except``,
``raise``, ``None``, ``True``, ``False``, f-strings) are left in place, so that the
rest of the program still parses and *every* such use is reported, not just the first.
Words after the ``.`` of an attribute access are attribute names and never rewritten
(``from . use x`` is a relative import, not an attribute). The code inside the braces
of an i-string (or f-string) is Python-4 code and is rewritten the same way
(istrings.py finds it); the rest of a string is never touched.
"""

from __future__ import annotations

import bisect
import re

from py4.lang.diagnostics import Diagnostic, MessageKind, make_diagnostic
from py4.lang.istrings import field_regions
from py4.lang.limits import MAX_ISTRING_FIELDS

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
PY3_SPELLINGS: dict[str, MessageKind] = {
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
# (A name or number also takes the operators and spaces after it: fewer loop rounds.)
_OPERATORS = r"[^'\"#\w{\\]"
_SKIP = (
    r"(?:" + _OPERATORS + r"++|(?!" + _KW + r")[^\W\d]\w*+(?!['\"])" + _OPERATORS + r"*+|"
    + _STRING_BODY + r"|\d\w*+" + _OPERATORS + r"*+|\#[^\n]*+|\{(?![ \t]*+:?[ \t]*+\})|\\.)*+"
)
_SCANNER = re.compile(
    _SKIP
    + r"(?:(?P<string>(?<!\w)[rRbBuUfFiI]{1,3}" + _STRING_BODY + r")"
    + r"|(?P<kw>(?<!\w)" + _KW + r")"
    + r"|(?P<brace>\{[ \t]*+(?P<colon>:)?[ \t]*+\})"
    + r"|(?P<end>\Z)|(?P<other>.))",
    re.DOTALL,
)
# For ASCII text (almost every program) the same pattern with ASCII classes: `\w` is then
# a bitmap test instead of a Unicode lookup, and the matches are the same.
_ASCII_SCANNER = re.compile(_SCANNER.pattern, re.DOTALL | re.ASCII)
_LET_NEXT = re.compile(r"[ \t]*+(?:(?P<name>[^\W\d]\w*+)|[(\[*])")
_ELSE_IF = re.compile(r"else[ \t]+if")
_WORD = re.compile(r"[^\W\d]\w*")


def _split_lines(source: str) -> list[str]:
    """Split on '\\n' only (what the parser does), keeping the ends."""
    parts = source.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


class TokenPass:
    """The Python 3 text of a Python-4 program, and what the token pass learned.

    ``let_positions`` / ``empty_dicts``: (line, Python 3 UTF-8 byte column) where a `let`
    statement / a `{:}` starts. ``edits``: (line, py3 col, py4 col, py3 end of the
    replacement, py4 end of the replaced text), in text order, character columns.
    """

    __slots__ = ("source", "text", "diagnostics", "tags", "let_positions", "empty_dicts",
                 "edits", "skip_offsets", "istring_fields", "istring_overflow",
                 "_py4_lines", "_py3_lines", "_col_maps")

    def __init__(self, source: str):
        self.source = source
        self.text = source
        self.diagnostics: list[Diagnostic] = []
        self.tags: set[str] = set()
        self.let_positions: set[tuple[int, int]] = set()
        self.empty_dicts: set[tuple[int, int]] = set()
        self.edits: list[tuple[int, int, int, int, int]] = []
        self.skip_offsets: set[int] = set()  # words left as names (`let fun`)
        # i-string fields seen, and the source offset of the first one over the limit
        # (limits.MAX_ISTRING_FIELDS): the parser is not given such a program.
        self.istring_fields = 0
        self.istring_overflow: int | None = None
        self._py4_lines: list[str] | None = None
        self._py3_lines: list[str] | None = None
        self._col_maps: dict[int, list[tuple[int, int, int]]] | None = None

    @property
    def py4_lines(self) -> list[str]:
        if self._py4_lines is None:
            self._py4_lines = _split_lines(self.source)
        return self._py4_lines

    @property
    def py3_lines(self) -> list[str]:
        if self._py3_lines is None:
            self._py3_lines = _split_lines(self.text)
        return self._py3_lines

    @property
    def col_maps(self) -> dict[int, list[tuple[int, int, int]]]:
        """line -> sorted anchors (py3 char col, py4 char col, py3 end of replacement)."""
        if self._col_maps is None:
            maps: dict[int, list[tuple[int, int, int]]] = {}
            for line, py3_col, py4_col, py3_end, py4_end in self.edits:
                anchors = maps.setdefault(line, [])
                anchors.append((py3_col, py4_col, py3_end))
                anchors.append((py3_end, py4_end, py3_end))
            self._col_maps = maps
        return self._col_maps

    def py4_position(self, line: int, py3_col: int, col_is_bytes: bool = False) -> tuple[int, int]:
        """Map a Python 3 position (line, column) to the Python-4 (line, char column)."""
        if line < 1:
            return 1, 0
        py3_lines = self.py3_lines
        if line > len(py3_lines):
            return max(len(self.py4_lines), 1), 0
        if col_is_bytes:
            py3_line = py3_lines[line - 1]
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
        match = _WORD.match(self.py4_lines[line - 1], col)
        return match.group() if match and match.start() == col else ""


def _is_attribute_name(text: str, offset: int) -> bool:
    """True when the word at ``offset`` follows the `.` of an attribute access."""
    i = offset - 1
    if i < 0 or text[i] not in ". \t\n":  # the common case: the word starts a token
        return False
    while i >= 0 and (text[i] in " \t" or (text[i] == "\n" and text[i - 1:i] == "\\")):
        i -= 2 if text[i] == "\n" else 1  # a backslash continuation joins the lines
    if i < 0 or text[i] != ".":
        return False
    while i >= 0 and text[i] in ". \t":  # `from . use x`, `from .. use x`: no attribute
        i -= 1
    return not (i >= 3 and text[i - 3:i + 1] == "from" and (i < 4 or not text[i - 4].isalnum()))


class _Rewriter:
    """One left-to-right pass: output pieces, edits, and the current line's bookkeeping.

    Offsets only grow (i-string interiors are scanned where they occur), so the line of
    an offset is found by counting newlines since the previous one. Every replaced text
    and every replacement is ASCII, so a column shift is the same in characters and in
    UTF-8 bytes.
    """

    def __init__(self, text: str, result: TokenPass):
        self.text = text
        self.result = result
        self.ascii = text.isascii()
        self.pieces: list[str] = []
        self.cursor = 0  # end of the source text already copied into pieces
        self.line = 1
        self.line_start = 0
        self.counted_to = 0  # newlines before this offset are counted in self.line
        self.shift_line = 0  # the line self.shift belongs to
        self.shift = 0  # py3 col - py4 col after the last edit on shift_line

    def locate(self, offset: int) -> tuple[int, int]:
        """(line, py4 char col) of ``offset``; offsets must not decrease."""
        text = self.text
        newlines = text.count("\n", self.counted_to, offset)
        if newlines:
            self.line += newlines
            self.line_start = text.rfind("\n", 0, offset) + 1
        self.counted_to = offset
        return self.line, offset - self.line_start

    def replace(self, offset: int, length: int, new: str, marker: str = "") -> None:
        """Replace ``length`` characters at ``offset`` by ``new`` (ASCII, one line)."""
        line, col = self.locate(offset)
        if self.shift_line != line:
            self.shift_line, self.shift = line, 0
        py3_col = col + self.shift
        if marker:
            byte_col = py3_col if self.ascii else (
                len(self.text[self.line_start:offset].encode("utf-8")) + self.shift)
            target = self.result.let_positions if marker == "let" else self.result.empty_dicts
            target.add((line, byte_col))
        self.result.edits.append((line, py3_col, col, py3_col + len(new), col + length))
        self.shift += len(new) - length
        self.pieces.append(self.text[self.cursor:offset])
        self.pieces.append(new)
        self.cursor = offset + length

    def diagnose(self, kind: MessageKind, offset: int, **fields) -> None:
        line, col = self.locate(offset)
        self.result.diagnostics.append(make_diagnostic(kind, line, col, **fields))

    def finish(self) -> str:
        if not self.pieces:
            return self.text
        self.pieces.append(self.text[self.cursor:])
        return "".join(self.pieces)


def rewrite_tokens(source: str) -> TokenPass:
    """Rewrite Python-4 text to Python 3 text (never raises for str input).

    ``source`` must already be free of NUL bytes and use '\\n' line ends.
    """
    result = TokenPass(source)
    rewriter = _Rewriter(source, result)
    _scan(rewriter, 0, len(source))
    result.text = rewriter.finish()
    return result


def _scan(rw: _Rewriter, start: int, end: int) -> None:
    text, result = rw.text, rw.result
    tags = result.tags
    scanner = _ASCII_SCANNER if rw.ascii else _SCANNER
    for match in scanner.finditer(text, start, end):
        kind = match.lastgroup
        if kind == "kw":
            offset = match.start("kw")
            if offset not in result.skip_offsets and not _is_attribute_name(text, offset):
                _keyword(rw, offset, match.group("kw"))
        elif kind == "string":
            _string(rw, match.start("string"), match.group("string"))
        elif kind in ("brace", "colon"):
            tags.add("empty_braces")
            if match.group("colon"):
                brace = match.group("brace")
                rw.replace(match.start("brace"), len(brace), "{}", "empty_dict")


def _keyword(rw: _Rewriter, offset: int, word: str) -> None:
    new = PY4_KEYWORDS.get(word)
    if new is not None:
        rw.replace(offset, len(word), new)
        rw.result.tags.add(KEYWORD_TAGS[word])
    elif word in PY3_SPELLINGS:
        rw.diagnose(PY3_SPELLINGS[word], offset)
        rw.result.tags.add(KEYWORD_TAGS[word])
    elif word == "else":
        else_if = _ELSE_IF.match(rw.text, offset)
        assert else_if is not None  # the scanner names `else` a keyword only as `else if`
        rw.replace(offset, else_if.end() - offset, "elif")
        rw.result.tags.add("else_if")
    else:
        _let(rw, offset)


def _let(rw: _Rewriter, offset: int) -> None:
    following = _LET_NEXT.match(rw.text, offset + 3)
    if following is None:
        rw.diagnose("reserved", offset, word="let")
        return
    name = following.group("name")
    target = following.start("name") if name else following.end() - 1
    rw.replace(offset, target - offset, "", "let")
    rw.result.tags.add("let")
    if name in RESERVED_WORDS:
        # `let fun = 3`: name the misused word, and parse it as a plain name.
        rw.diagnose("reserved", target, word=name)
        rw.result.skip_offsets.add(target)


def _string(rw: _Rewriter, offset: int, string: str) -> None:
    quote = min(p for p in (string.find('"'), string.find("'")) if p >= 0)
    prefix = string[:quote]
    lowered = prefix.lower()
    if prefix in I_STRING_PREFIXES:
        rw.replace(offset, quote, I_STRING_PREFIXES[prefix])
        rw.result.tags.add("i_string")
    elif "f" in lowered and lowered in _PY3_PREFIXES:
        rw.diagnose("fstring", offset)
        rw.result.tags.add("i_string")
    else:
        if lowered not in _PY3_PREFIXES:  # a name glued to a string: `nil"x"`
            glued = _WORD.match(prefix)
            assert glued is not None  # a string prefix outside _PY3_PREFIXES starts with a name
            word = glued.group()
            if word in PY4_KEYWORDS:
                rw.replace(offset, len(word), PY4_KEYWORDS[word])
        return
    # The code inside the braces is Python-4 code: rewrite it like any other.
    delimiter = 3 if string.startswith(string[quote] * 3, quote) else 1
    body = offset + quote + delimiter
    regions = field_regions(rw.text, body, offset + len(string) - delimiter)
    result = rw.result
    result.istring_fields += len(regions)
    if result.istring_fields > MAX_ISTRING_FIELDS:
        if result.istring_overflow is None:
            result.istring_overflow = regions[len(regions) - (result.istring_fields - MAX_ISTRING_FIELDS)][0]
        return  # refused before parsing: rewriting its fields would be wasted work
    for field_start, field_end in regions:
        _scan(rw, field_start, field_end)
