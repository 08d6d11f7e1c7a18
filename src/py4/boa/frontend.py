"""The trusted side of a run: turn source into a code object and diagnostics.

This is the only place where Boa's executor touches the language front end
(``py4.lang.compile_py4`` and ``py4.lang.runtime.new_globals``). Everything here runs in
the trusted parent and must survive hostile source: a front-end crash (RecursionError,
MemoryError, any exception) becomes a ``P4-00`` error diagnostic, never an exception.

The ``python3`` dialect compiles plain Python 3 with CPython's ``compile``; it exists so
that the sandbox can be exercised and benchmarked independently of the language.
"""

from __future__ import annotations

import _thread
import collections
import marshal
import sys
from dataclasses import dataclass, field
from types import CodeType
from typing import TYPE_CHECKING, Any, Callable, Literal

if TYPE_CHECKING:  # not at run time: workers import this module (see _diagnostic)
    from py4.lang.diagnostics import Diagnostic

Dialect = Literal["py4", "python3"]
Rendering = Literal["verbatim", "generic"]

# Programs larger than this are refused before any parsing (the front end may have its
# own, smaller limit). Protects the parent against pathological input sizes.
MAX_SOURCE_CHARS = 1_000_000
# The parent's compile cache: results for programs up to COMPILE_CACHE_MAX_CHARS, at most
# COMPILE_CACHE_SIZE of them and COMPILE_CACHE_BYTES of memory in all (each entry counted
# as its source, marshalled code, code objects and diagnostics: entry_bytes), least
# recently used dropped first. A 19,000-character program costs ~180 KiB: by count alone
# a full cache held ~736 MiB in the trusted parent.
COMPILE_CACHE_SIZE = 4096
COMPILE_CACHE_MAX_CHARS = 20_000
COMPILE_CACHE_BYTES = 64 * 2**20

# Modules a run's worker imports once, before isolation, so that programs find them
# already loaded (and so that a late import never needs the hidden repository).
PRELOAD_MODULES = (
    "json", "math", "cmath", "re", "string", "collections", "collections.abc", "itertools",
    "functools", "heapq", "bisect", "decimal", "fractions", "statistics", "random",
    "operator", "copy", "dataclasses", "typing", "enum", "textwrap", "datetime",
    "array", "struct", "unicodedata", "traceback", "linecache", "warnings",
)


@dataclass
class Compiled:
    """What the trusted side knows about a program before it runs."""

    ok: bool
    code: CodeType | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    rules_exercised: list[str] = field(default_factory=list)
    marshalled: bytes | None = None  # ``code`` as a worker receives it (cached with it)

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]


def py4_available() -> bool:
    """True when the Python-4 front end (``py4.lang.compile_py4``) can be imported."""
    try:
        from py4.lang import compile_py4  # noqa: F401
        from py4.lang.runtime import new_globals  # noqa: F401
    except ImportError:
        return False
    return True


def compile_source(source: str | bytes, filename: str = "<py4>", dialect: Dialect = "py4") -> Compiled:
    """Compile ``source``; never raises for any source (front-end failures become P4-00
    diagnostics). Raises ValueError for an unknown dialect.

    Results are cached by (source, filename, dialect): RL episodes often run the program
    they then submit, and many rollouts produce the same program.
    """
    if dialect not in ("py4", "python3"):
        raise ValueError(f"unknown dialect {dialect!r}; expected 'py4' or 'python3'")
    if len(source) > COMPILE_CACHE_MAX_CHARS:
        return _compile_and_marshal(source, filename, dialect)
    cached = _CACHE.get((source, filename, dialect))
    if cached is None:
        cached = _compile_and_marshal(source, filename, dialect)
        _CACHE.put((source, filename, dialect), cached, entry_bytes(source, cached))
    return Compiled(cached.ok, cached.code, list(cached.diagnostics), list(cached.rules_exercised),
                    cached.marshalled)


class _CompileCache:
    """Least-recently-used results, bounded by count and by bytes (thread-safe: the
    executor compiles in its callers' threads)."""

    def __init__(self) -> None:
        self.entries: collections.OrderedDict[tuple, tuple[Compiled, int]] = collections.OrderedDict()
        self.bytes = 0
        self.lock = _thread.allocate_lock()  # (not threading: workers import this module)

    def get(self, key: tuple) -> Compiled | None:
        with self.lock:
            entry = self.entries.get(key)
            if entry is None:
                return None
            self.entries.move_to_end(key)
            return entry[0]

    def put(self, key: tuple, compiled: Compiled, size: int) -> None:
        with self.lock:
            if key in self.entries or size > COMPILE_CACHE_BYTES:
                return
            self.entries[key] = (compiled, size)
            self.bytes += size
            while self.bytes > COMPILE_CACHE_BYTES or len(self.entries) > COMPILE_CACHE_SIZE:
                _, (_, dropped) = self.entries.popitem(last=False)
                self.bytes -= dropped

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.bytes = 0


_CACHE = _CompileCache()


def entry_bytes(source: str | bytes, compiled: Compiled) -> int:
    """What a cache entry keeps alive, in bytes: its source (the key), the marshalled code,
    the code objects (bytecode, tables, constants, names; nested ones too) and the
    diagnostics (counted generously: a few small objects each)."""
    size = sys.getsizeof(source) + sys.getsizeof(compiled.marshalled or b"") + 512
    size += 1024 * (len(compiled.diagnostics) + len(compiled.rules_exercised))
    stack = [compiled.code] if compiled.code is not None else []
    seen: set[int] = set()
    while stack:
        code = stack.pop()
        size += sys.getsizeof(code) + sys.getsizeof(code.co_code) + sys.getsizeof(code.co_linetable)
        size += sys.getsizeof(code.co_exceptiontable) + sys.getsizeof(code.co_consts)
        for names in (code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars):
            size += sys.getsizeof(names)
            for name in names:
                if id(name) not in seen:
                    seen.add(id(name))
                    size += sys.getsizeof(name)
        for const in code.co_consts:
            if isinstance(const, CodeType):
                stack.append(const)
            elif id(const) not in seen:
                seen.add(id(const))
                size += sys.getsizeof(const)
    # The interpreter keeps more per code object than these parts (its quickened bytecode,
    # line tables decoded, interned names): measured at ~1.7x the sum for large programs.
    return 2 * size


def _compile_and_marshal(source: str | bytes, filename: str, dialect: Dialect) -> Compiled:
    compiled = _compile(source, filename, dialect)
    if compiled.code is not None:
        compiled.marshalled = marshal.dumps(compiled.code)
    return compiled


def _compile(source: str | bytes, filename: str, dialect: Dialect) -> Compiled:
    size = len(source)
    if size > MAX_SOURCE_CHARS:
        return _failed("too_large", f"source is too large ({size} characters; the limit is "
                       f"{MAX_SOURCE_CHARS})", "split the program")
    try:
        if dialect == "py4":
            return _compile_py4(source, filename)
        if dialect == "python3":
            return _compile_python3(source, filename)
    except RecursionError:
        return _failed("too_deep", "program is nested too deeply for Boa",
                       "reduce the nesting of brackets and expressions")
    except MemoryError:
        return _failed("too_large", "program too large to compile", "split the program")
    except Exception as exc:  # noqa: BLE001 - a front-end bug must not crash the harness
        return _failed("internal", f"internal error in the compiler: {type(exc).__name__}: {exc}",
                       "report this program to the Boa maintainers")
    raise AssertionError(dialect)  # checked by compile_source


def _compile_py4(source: str | bytes, filename: str) -> Compiled:
    from py4.lang import compile_py4

    # compile_py4 keeps CPython's own SyntaxWarnings off the parent's stderr itself,
    # without serialising compilations (a hostile program's never delays another's).
    res = compile_py4(source, filename=filename)
    return Compiled(ok=bool(res.ok), code=res.code if res.ok else None,
                    diagnostics=list(res.diagnostics), rules_exercised=list(res.rules_exercised))


def _compile_python3(source: str | bytes, filename: str) -> Compiled:
    if isinstance(source, bytes):
        try:
            source = source.decode("utf-8")
        except UnicodeDecodeError as exc:
            return _failed("encoding", f"source is not valid UTF-8: {exc.reason}", "save as UTF-8")
    if "\x00" in source:
        return _failed("null_byte", "source contains a NUL byte", "remove the NUL byte")
    try:
        from py4.lang.compile import quiet_and_uncollected  # not at module level: workers

        with quiet_and_uncollected():
            code = compile(source, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return Compiled(ok=False, code=None, diagnostics=[_diagnostic(
            exc.lineno or 1, max((exc.offset or 1) - 1, 0),
            f"syntax error: {exc.msg}")])
    except (ValueError, OverflowError) as exc:
        return _failed("literal", f"cannot compile: {exc}", "check the program")
    return Compiled(ok=True, code=code)


def _diagnostic(line: int, col: int, message: str, fix: str = "") -> Diagnostic:
    # Imported here, not at module level: workers import this module for PRELOAD_MODULES
    # and must not load the whole language front end into their forked heap.
    from py4.lang.diagnostics import Diagnostic

    return Diagnostic("P4-00", "error", line, col, message, fix)


def _failed(kind: str, message: str, fix: str) -> Compiled:
    del kind  # the message already says it; kept for readability at call sites
    return Compiled(ok=False, code=None,
                    diagnostics=[_diagnostic(1, 0, message, fix)])


def diagnostic_to_json(diag: Diagnostic, mode: Rendering) -> dict[str, Any]:
    """The JSON of one diagnostic as ``boa check --json`` shows it, in either rendering.

    Generic mode keeps only the kind and position (no rule id, no words).
    """
    if mode == "generic":
        return {"rule": None, "severity": diag.severity, "line": diag.line, "col": diag.col,
                "message": diag.render("generic")}
    return diag.to_json()


def new_globals_factory(dialect: Dialect) -> Callable[[], dict[str, Any]]:
    """The function a run's child calls to build its module globals."""
    if dialect == "py4":
        from py4.lang.runtime import new_globals

        return new_globals
    import builtins

    return lambda: {"__builtins__": builtins}
