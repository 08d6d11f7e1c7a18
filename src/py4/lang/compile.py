"""`compile_py4`: Python-4 source to diagnostics, rules exercised and a code object.

Pipeline: input guards → token rewrite (tokens.py) → ``ast.parse`` → static analysis
(analyze.py) → semantic transform (translate.py) → ``compile()`` of the AST. The code
object's line numbers are the Python-4 source's; diagnostics carry Python-4 positions.

This runs in Boa's trusted parent on hostile input, so for any ``str`` or ``bytes`` it
never raises and stays fast: oversize sources, invalid UTF-8, NUL bytes, deep nesting
(RecursionError / MemoryError in the parser or compiler), huge literals (the int/str
conversion limit) all become ``P4-00`` diagnostics. A bug in the compiler itself also
becomes a diagnostic, worded "internal error", so tests can look for it.
"""

from __future__ import annotations

import _thread
import ast
import gc
import re
import warnings
from dataclasses import dataclass, field
from functools import cached_property
from types import CodeType

from py4.lang.analyze import analyze, rules_for_tags
from py4.lang.diagnostics import Diagnostic, MessageKind, make_diagnostic, sort_key
from py4.lang.limits import MAX_ISTRING_FIELDS
from py4.lang.positions import node_start
from py4.lang.tokens import RESERVED_WORDS, TokenPass, rewrite_tokens
from py4.lang.translate import transform

# A study program is a few hundred lines; this bound keeps the worst case well under 2 s.
MAX_SOURCE_CHARS = 100_000
# More findings than this are one note ("… more not shown"): nobody reads the 101st.
MAX_DIAGNOSTICS = 100
_IGNORE_WARNINGS = [("ignore", None, Warning, None, 0)]
_filters_mutated = getattr(warnings, "_filters_mutated", lambda: None)

# CPython's parser messages, spoken in Python-4 words.
_PY3_WORDS = {
    "None": "nil", "True": "true", "False": "false", "lambda": "fun", "def": "fn",
    "elif": "else if", "except": "catch", "raise": "throw", "import": "use",
    "f-string": "i-string", "f-strings": "i-strings",
}
_PY3_WORDS_RE = re.compile(r"(?<![\w-])(" + "|".join(
    re.escape(w) for w in sorted(_PY3_WORDS, key=len, reverse=True)) + r")(?![\w-])")


@dataclass
class CompileResult:
    """What compiling a Python-4 program gives. See docs/dev/contracts.md."""

    filename: str
    diagnostics: list[Diagnostic]
    rules_exercised: list[str]
    code: CodeType | None = None
    tree: ast.Module | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]

    @cached_property
    def python_source(self) -> str | None:
        """The readable Python 3 translation (None when the program does not compile)."""
        if self.tree is None:
            return None
        try:
            return ast.unparse(self.tree)
        except (RecursionError, MemoryError, ValueError):
            return None


def python4_words(message: str) -> str:
    """Replace Python 3 spellings in a CPython parser message by Python-4 ones."""
    return _PY3_WORDS_RE.sub(lambda m: _PY3_WORDS[m.group(1)], message)


def compile_py4(source: str | bytes, filename: str = "<py4>") -> CompileResult:
    """Compile Python-4 ``source``; never raises for str or bytes input.

    Raises TypeError only when ``source`` is neither str nor bytes.
    """
    if isinstance(source, (bytes, bytearray)):
        text, problem = _decode(bytes(source))
        if problem is not None:
            return CompileResult(filename, [problem], [])
    elif isinstance(source, str):
        text = source
    else:
        raise TypeError(f"compile_py4 takes str or bytes, not {type(source).__name__}")
    try:
        return _compile_text(text, filename)
    except (RecursionError, MemoryError):  # not expected: each stage reports its own
        return CompileResult(filename, [make_diagnostic("too_deep", *_longest_line(text))], [])
    except Exception as exc:  # noqa: BLE001 - never crash the trusted parent; loud message
        detail = f"{type(exc).__name__}: {exc}"[:200]
        return CompileResult(filename, [make_diagnostic("internal", 1, 0, detail=detail)], [])


def _decode(data: bytes) -> tuple[str, Diagnostic | None]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        col = len(before[before.rfind(b"\n") + 1:].decode("utf-8", "replace"))
        detail = f"byte 0x{data[exc.start]:02x} at line {line}"
        return "", make_diagnostic("encoding", line, col, detail=detail)
    return text, None


def _position_of(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1)


def _normalise(text: str) -> tuple[str, Diagnostic | None]:
    """The text as the parser should see it, or the diagnostic that stops it."""
    if len(text) > MAX_SOURCE_CHARS:
        return text, make_diagnostic("too_large", 1, 0, size=len(text), limit=MAX_SOURCE_CHARS)
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    nul = text.find("\0")
    if nul >= 0:
        return text, make_diagnostic("null_byte", *_position_of(text, nul))
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:  # a lone surrogate: not text a file can hold
            detail = f"unpaired surrogate U+{ord(text[exc.start]):04X}"
            return text, make_diagnostic("encoding", *_position_of(text, exc.start), detail=detail)
    return text, None


def _compile_text(text: str, filename: str) -> CompileResult:
    text, problem = _normalise(text)
    if problem is not None:
        return CompileResult(filename, [problem], [])
    tokens = rewrite_tokens(text)
    if tokens.istring_overflow is not None:  # not parsed at all: see limits.py
        return CompileResult(filename, [make_diagnostic(
            "too_many_istring_fields", *_position_of(text, tokens.istring_overflow),
            count=tokens.istring_fields, limit=MAX_ISTRING_FIELDS)], [])
    diagnostics = list(tokens.diagnostics)
    with _quiet_and_uncollected():
        tree, parse_problem = _parse(tokens, filename)
        if tree is None:
            assert parse_problem is not None  # _parse returns a tree or the problem
            diagnostics.append(parse_problem)
            return _finish(filename, diagnostics, tokens.tags)
        try:
            analysis = analyze(tree, tokens.let_positions, tokens.empty_dicts, tokens.text)
        except (RecursionError, MemoryError):
            diagnostics.append(_too_deep_in(tree, tokens))
            return _finish(filename, diagnostics, tokens.tags)
        tags = tokens.tags | analysis.tags
        for raw in analysis.findings:
            line, col = tokens.py4_position(raw.line, raw.col, col_is_bytes=True)
            diagnostics.append(make_diagnostic(raw.kind, line, col, **raw.fields))
        if diagnostics and any(d.severity == "error" for d in diagnostics):
            return _finish(filename, diagnostics, tags)
        tree = transform(tree, tokens.empty_dicts, analysis.sites)
        code, compile_problem = _compile_tree(tree, tokens, filename)
    if compile_problem is not None:
        diagnostics.append(compile_problem)
        return _finish(filename, diagnostics, tags)
    return _finish(filename, diagnostics, tags, code=code, tree=tree)


class _quiet_and_uncollected:
    """Ignore warnings and pause the cyclic garbage collector while any compilation runs.

    CPython's own SyntaxWarnings about the translated text are not Python-4 diagnostics.
    ``warnings.catch_warnings`` costs more than compiling a short program, so the filter
    list is swapped directly. The AST is thousands of young objects without cycles
    (refcounting frees it): without the pause the collector scans them repeatedly while
    they are built. Both are process-wide in CPython 3.11, so compilations running at the
    same time in several threads share them: the first to start swaps the filters and
    pauses the collector, the last to finish puts the filters back (a lock is held only
    for that bookkeeping, never while compiling, so no compilation waits for another and
    one program cannot stall the others). The collector is switched back on by the first compilation to
    finish, not the last: under compilations that overlap without pause (one thread
    starting as another ends) the last would never come and the trusted parent would run
    without its collector for good. It is switched back on only if it was on.
    """

    __slots__ = ()

    def __enter__(self):
        state = _QUIET
        state.lock.acquire()  # (not `with`: cheaper, and nothing in between can raise)
        if state.active == 0:
            state.paused = gc.isenabled()  # (a collector someone else switched off stays off)
            gc.disable()
            state.saved_filters = warnings.filters
            warnings.filters = _IGNORE_WARNINGS
            _filters_mutated()
        state.active += 1
        state.lock.release()
        return self

    def __exit__(self, *exc_info):
        state = _QUIET
        state.lock.acquire()
        state.active -= 1
        if state.paused:  # the first to finish; later ones (started meanwhile) collect
            state.paused = False
            gc.enable()
        if state.active == 0:
            warnings.filters = state.saved_filters
            state.saved_filters = None
            _filters_mutated()
        state.lock.release()
        return False


class _QuietState:
    """The compilations running now, the filters the first of them found and whether the
    collector is paused by them (an instance, not class attributes: writing a class's
    attributes invalidates the type caches, which cost ~4 us per compilation)."""

    __slots__ = ("lock", "active", "saved_filters", "paused")

    def __init__(self) -> None:
        self.lock = _thread.allocate_lock()
        self.active = 0
        self.saved_filters: list | None = None
        self.paused = False


_QUIET = _QuietState()
quiet_and_uncollected = _quiet_and_uncollected  # for Boa's python3 dialect (frontend.py)


def _finish(filename, diagnostics, tags, code=None, tree=None) -> CompileResult:
    diagnostics.sort(key=sort_key)
    if len(diagnostics) > MAX_DIAGNOSTICS:
        diagnostics = _capped(diagnostics)
    return CompileResult(filename, diagnostics, rules_for_tags(tags), code=code, tree=tree)


def _capped(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """The first MAX_DIAGNOSTICS (in position order), then one `too_many` note at the
    first one left out: an error if any left out is an error, so ``ok`` does not change."""
    kept, dropped = diagnostics[:MAX_DIAGNOSTICS], diagnostics[MAX_DIAGNOSTICS:]
    severity_kind: MessageKind = "too_many" if any(d.severity == "error" for d in dropped) else "too_many_warnings"
    first = dropped[0]
    return kept + [make_diagnostic(severity_kind, first.line, first.col, count=len(dropped))]


def _parse(tokens: TokenPass, filename: str) -> tuple[ast.Module | None, Diagnostic | None]:
    try:
        tree = ast.parse(tokens.text, filename)
    except SyntaxError as exc:
        return None, _syntax_diagnostic(exc, tokens)
    except (RecursionError, MemoryError):
        # The parser does not say where it gave up: the longest line is the best guess.
        return None, make_diagnostic("too_deep", *_longest_line(tokens.source))
    except (ValueError, OverflowError) as exc:
        return None, make_diagnostic("literal_too_large", 1, 0, detail=str(exc)[:200])
    return tree, None


def _compile_tree(tree: ast.Module, tokens: TokenPass, filename: str):
    try:
        return compile(tree, filename, "exec", dont_inherit=True), None
    except SyntaxError as exc:
        return None, _syntax_diagnostic(exc, tokens)
    except (RecursionError, MemoryError):
        return None, _too_deep_in(tree, tokens)
    except (ValueError, OverflowError) as exc:
        return None, make_diagnostic("literal_too_large", 1, 0, detail=str(exc)[:200])


def _longest_line(source: str) -> tuple[int, int]:
    """(line, column of its first non-blank character) of the longest line of ``source``."""
    lines = source.split("\n")
    index = max(range(len(lines)), key=lambda i: len(lines[i]))
    line = lines[index]
    return index + 1, len(line) - len(line.lstrip())


def _too_deep_in(tree: ast.AST, tokens: TokenPass) -> Diagnostic:
    """`too_deep` at the deepest node of ``tree`` (found without recursion)."""
    deepest, deepest_depth = tree, 0
    pending = [(tree, 0)]
    while pending:
        node, depth = pending.pop()
        if depth > deepest_depth and hasattr(node, "lineno"):
            deepest, deepest_depth = node, depth
        pending.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    if deepest is tree:
        return make_diagnostic("too_deep", 1, 0)
    line, col = tokens.py4_position(*node_start(deepest), col_is_bytes=True)
    return make_diagnostic("too_deep", line, col)


def _syntax_diagnostic(exc: SyntaxError, tokens: TokenPass) -> Diagnostic:
    message = exc.msg or "invalid syntax"
    kind: MessageKind
    if "integer string conversion" in message or "Exceeds the limit" in message:
        kind, fields = "literal_too_large", {"detail": message[:200]}
    elif "too many nested parentheses" in message:
        kind, fields = "too_deep", {}
    else:
        kind, fields = "syntax", {"detail": python4_words(message)}
    line, col = tokens.py4_position(exc.lineno or 1, max((exc.offset or 1) - 1, 0))
    word = tokens.py4_word_at(line, col)
    if word in RESERVED_WORDS and _binds_a_name(tokens.py4_lines[line - 1], col, word):
        return make_diagnostic("reserved", line, col, word=word)
    return make_diagnostic(kind, line, col, **fields)


def _binds_a_name(line: str, col: int, word: str) -> bool:
    """Is the reserved word at ``col`` in a place where a name is being bound/declared?

    (`fn use()`, a parameter `nil: int`, `for fun in …`, `as throw`, `f(use=1)`, `let nil`.)
    The parser's own message is kept for reserved words used as values in the wrong place.
    """
    before = line[:col].rstrip()
    after = line[col + len(word):].lstrip()
    return (before.endswith(("fn", "class", "(", ",", "*", "as", "for", "let"))
            or (after[:1] in ("=", ":") and after[:2] != "=="))
