"""What runs inside a run's child process, after it has been confined.

The child executes the program's code object and reports on a private channel (a pipe
to the executor, framed with a per-run token): for ``run`` jobs the outcome (exit code,
uncaught exception type and line); for ``certify`` jobs one frame per test with the
entry point's return value as strict JSON. The child never sees expected outputs, so
the most a hostile program can do to this channel is claim return values it could have
returned anyway; the trusted parent makes every pass/fail decision.

Everything the harness needs (serialiser pieces, ``os.write``, ``json.dumps``) is bound
at import time, in the worker, before any user code exists: monkeypatching builtins or
modules from the program cannot change how its results are encoded.

Before a Python-4 program's code runs, the child installs the code gate
(``py4.lang.code_gate``): from then on no code Boa has not compiled can be made, loaded
or run in this process or the processes it forks (docs/boa.md, "Dynamic code").
"""

from __future__ import annotations

import atexit
import gc
import json
import linecache
import marshal
import os
import signal
import sys
import time
import traceback
from json.encoder import encode_basestring_ascii as _quote
from types import FunctionType as _new_function  # (loaded in every worker anyway: frontend imports it)

from py4.boa.protocol import TICK_INTERVAL_S

TYPE_CHECKING = False  # not typing's (a name less to look up at import)
if TYPE_CHECKING:
    from typing import Any, TypeGuard

# Bound once, before user code: the program can rebind names in modules but not these.
_write = os.write
_dumps = json.dumps
_loads = json.loads
_int_repr, _int_value = int.__repr__, int.__int__
_float_repr, _float_value = float.__repr__, float.__float__
_str_value = str.__str__
_dict_items, _list_copy = dict.items, list.copy
_tuple_iter = tuple.__iter__
_isinstance, _type, _len, _str, _iter, _list = isinstance, type, len, str, iter, list
_bool, _int, _float, _dict, _tuple, _none = bool, int, float, dict, tuple, type(None)
_exit = os._exit
_getpid, _kill, _SIGSTOP = os.getpid, os.kill, signal.SIGSTOP
_monotonic = time.monotonic
_enumerate, _callable, _exec, _bytes = enumerate, callable, exec, bytes
_INFINITIES = (float("inf"), float("-inf"))

MAX_RESULT_CHARS = 1_000_000
MAX_DEPTH = 200
HARNESS_FILES = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))),)


class Unserialisable(Exception):
    """A return value that is not strict JSON (the test fails with this reason)."""


def strict_json(value) -> str:
    """Serialise ``value`` as strict JSON using only the exact builtin types' methods.

    Subclasses of int/float/str/list/tuple/dict are reduced to their builtin value, so
    an overridden ``__eq__``/``__repr__``/``__str__`` has no effect; NaN and infinities,
    sets, bytes and other objects raise Unserialisable.
    """
    parts: list[str] = []
    budget = [MAX_RESULT_CHARS]
    _emit(value, parts, budget, 0)
    return "".join(parts)


def _emit(value, parts: list, budget: list, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise Unserialisable("nested too deeply")
    kind = _type(value)
    if value is None:
        text = "null"
    elif kind is _bool:
        text = "true" if value else "false"
    elif _isinstance(value, _int):
        try:
            text = _int_repr(_int_value(value))
        except ValueError:
            raise Unserialisable("integer too large") from None
    elif _isinstance(value, _float):
        number = _float_value(value)
        if number != number or number in _INFINITIES:
            raise Unserialisable("NaN or infinity is not JSON")
        text = _float_repr(number)
    elif _isinstance(value, _str):
        text = _quote(_str_value(value))
    elif _isinstance(value, (_list, _tuple)):
        items = _list_copy(value) if _isinstance(value, _list) else _list(_tuple_iter(value))
        parts.append("[")
        for n, item in _enumerate(items):
            if n:
                parts.append(",")
            _emit(item, parts, budget, depth + 1)
        text = "]"
    elif _isinstance(value, _dict):
        parts.append("{")
        for n, (key, item) in _enumerate(_list(_dict_items(value))):
            if n:
                parts.append(",")
            parts.append(_quote(_key_text(key)) + ":")
            _emit(item, parts, budget, depth + 1)
        text = "}"
    else:
        raise Unserialisable(f"a {kind.__name__} is not JSON")
    budget[0] -= _len(text) + 1
    if budget[0] < 0:
        raise Unserialisable("result too large")
    parts.append(text)


def _key_text(key) -> str:
    """Dict keys as json.dumps coerces them (so results match JSON-made expectations)."""
    if _isinstance(key, _str):
        return _str_value(key)
    if key is None:
        return "null"
    if _type(key) is _bool:
        return "true" if key else "false"
    if _isinstance(key, _int):
        return _int_repr(_int_value(key))
    if _isinstance(key, _float):
        return _float_repr(_float_value(key))
    raise Unserialisable(f"a {_type(key).__name__} dict key is not JSON")


class Channel:
    """Frames to the executor: token (16 bytes) + 4-byte length + JSON payload.

    A test's start is also signalled as one byte (``.``) on ``tick_fd``, so that the
    executor can time each test without parsing result frames, and the end of the run as
    ``!`` and the exit status byte there and one byte on ``end_fd`` (to the supervisor),
    so that both act without waiting for the kernel to tear the process down (``done``).
    Each tick wakes the executor, so a start less than ``TICK_INTERVAL_S`` after the last
    tick is not signalled at once: its byte goes with the next tick or the end report (the
    executor's per-test deadline allows for the interval, and the bytes add up as before).
    """

    def __init__(self, fd: int, token: bytes, tick_fd: int | None = None, end_fd: int | None = None):
        self._fd, self._token, self._tick_fd, self._end_fd = fd, token, tick_fd, end_fd
        self._pid = _getpid()  # the run's own process; a fork of it never ends the run
        self._ticked = -1.0 - TICK_INTERVAL_S  # when the last tick was written (monotonic; never yet)
        self._owed = 0  # starts not signalled since

    def frame(self, message: dict) -> bytes:
        data = _dumps(message).encode("utf-8", "backslashreplace")
        return self._token + _len(data).to_bytes(4, "big") + data

    def send(self, message: dict) -> None:
        if self._tick_fd is not None and message.get("k") == "start":
            now = _monotonic()
            if now - self._ticked >= TICK_INTERVAL_S:
                _write(self._tick_fd, b"." * (self._owed + 1))
                self._ticked, self._owed = now, 0
            else:
                self._owed += 1
        view = memoryview(self.frame(message))
        while view:
            view = view[_write(self._fd, view):]

    def done(self, exit_code: int) -> None:
        """Report the end of the run (every frame is already written): to the executor,
        which answers its caller at once, then to the supervisor, which kills the run;
        and stop this process (SIGSTOP) until then: exiting here would tear the address
        space down on a CPU the executor may be woken on, delaying its answer. A process
        the program forked that reaches the end of the program returns at once (the
        caller exits): only the run's own process ends the run. A program can write the
        bytes itself: the run then ends there with the status it wrote, as if it had
        called ``os._exit`` (see docs/boa.md)."""
        if self._tick_fd is not None and _getpid() == self._pid:
            _write(self._tick_fd, b"." * self._owed + b"!" + _bytes((exit_code & 0xFF,)))
            if self._end_fd is not None:
                _write(self._end_fd, b"!")
            _kill(self._pid, _SIGSTOP)


# ----------------------------------------------------------------------------- errors

def _user_frames(tb, filename: str) -> list:
    """Frames of the traceback worth showing: drop Boa's own (harness and runtime)."""
    frames = traceback.extract_tb(tb)
    return [f for f in frames if not f.filename.startswith(HARNESS_FILES)]


def error_line(exc: BaseException, filename: str) -> int | None:
    """Line of the innermost frame in the user's program, or None."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == filename:
            line = frame.lineno
    if line is None and _is_syntax_error(exc) and exc.filename == filename:
        line = exc.lineno
    return line


def _is_syntax_error(exc: BaseException) -> TypeGuard[SyntaxError]:
    return _isinstance(exc, SyntaxError)  # (the bound isinstance: mypy narrows only the builtin's)


def describe_error(exc: BaseException, filename: str, mode: str) -> str:
    """Traceback text for stderr: verbatim, or squashed to ``<Type> at line N``."""
    name = _type(exc).__name__
    line = error_line(exc, filename)
    if mode == "generic":
        return f"{name} at line {line}\n" if line is not None else f"{name}\n"
    try:
        frames = _user_frames(exc.__traceback__, filename)
        lines = ["Traceback (most recent call last):\n"]
        lines += traceback.format_list(frames)
        lines += traceback.format_exception_only(_type(exc), exc)
        return "".join(lines)
    except BaseException:  # noqa: BLE001 - a hostile __str__ must not break reporting
        return f"{name} (message unavailable)\n"


# ----------------------------------------------------------------------------- jobs

def _flush_streams() -> None:
    # Any: the program may have put anything there (or None).
    streams: tuple[Any, ...] = (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__)
    for n, stream in _enumerate(streams):
        if n >= 2 and stream is streams[n - 2]:
            continue  # sys.__stdout__ is still sys.stdout (as usual): flushed already
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - the program may have replaced or closed them
            pass


def _is_int(value: object) -> TypeGuard[int]:
    """An int (or subclass) but not a bool, as ``sys.exit`` takes it for a status."""
    return _isinstance(value, _int) and not _isinstance(value, _bool)


def _exit_code_of(exc: SystemExit) -> tuple[int, str]:
    """Exit status and the message Python would print for ``sys.exit(code)``."""
    code = exc.code
    if code is None:
        return 0, ""
    if _is_int(code):
        return _int_value(code) & 0xFF, ""
    try:
        return 1, f"{code}\n"
    except BaseException:  # noqa: BLE001 - a hostile __str__
        return 1, ""


def _finalize_like_python() -> None:
    """What the interpreter does after the main module: join non-daemon threads, then run
    atexit handlers (both bounded by the run's deadline like everything else)."""
    threading = sys.modules.get("threading")
    if threading is not None:
        threading._shutdown()
    atexit._run_exitfuncs()


def run_program(job: dict, code, chan: Channel, new_globals) -> None:
    """Execute a ``run`` job and exit the process; never returns.

    The error report (traceback, or exit message) travels on the channel, not on the
    program's stderr, so that it never counts against the output cap.
    """
    filename, mode = job["filename"], job["diagnostics"]
    exit_code, exc_info, report = 0, None, ""
    try:
        namespace = _module_globals(new_globals, filename, "__main__")
        program = _new_function(code, namespace)  # see _guard: made before the gate
        _guard(namespace)
        program()
        _finalize_like_python()
    except SystemExit as exc:
        exit_code, report = _exit_code_of(exc)
    except BaseException as exc:  # noqa: BLE001 - every failure is an honest outcome
        exit_code = 1
        exc_info = {"type": _type(exc).__name__, "line": error_line(exc, filename)}
        report = describe_error(exc, filename, mode)
    _flush_streams()
    try:
        chan.send({"k": "exit", "code": exit_code, "exc": exc_info, "report": report})
        chan.done(exit_code)
    finally:
        _exit(exit_code)


def certify_solution(job: dict, code, chan: Channel, new_globals, to_py4) -> None:
    """Execute a ``certify`` job: load the module, call the entry point per test, exit."""
    filename = job["filename"]
    chan.send({"k": "start", "i": -1})
    try:
        # Loaded like an imported module: an `if __name__ == "__main__":` demo block
        # (reading input, printing) does not run during certification.
        namespace = _module_globals(new_globals, filename, "solution")
        module = _new_function(code, namespace)  # see _guard: made before the gate
        _guard(namespace)
        module()
        func = namespace.get(job["entry_point"])
        if not _callable(func):
            raise NameError(f"entry point {job['entry_point']!r} is not defined")
    except BaseException as exc:  # noqa: BLE001 - includes an early SystemExit
        chan.send({"k": "load_error", "type": _type(exc).__name__, "line": error_line(exc, filename)})
        _flush_streams()
        chan.done(1)
        _exit(1)
    for i, test_json in _enumerate(job["tests"]):
        test = _loads(test_json)
        args, kwargs = to_py4(test["args"]), to_py4(test["kwargs"])
        chan.send({"k": "start", "i": i})
        try:
            value = func(*args, **kwargs)
            chan.send({"k": "result", "i": i, "v": strict_json(value)})
        except Unserialisable as exc:
            chan.send({"k": "error", "i": i, "type": "Unserialisable", "line": None,
                       "detail": exc.args[0]})
        except BaseException as exc:  # noqa: BLE001
            chan.send({"k": "error", "i": i, "type": _type(exc).__name__,
                       "line": error_line(exc, filename), **_refusal_detail(exc)})
    _flush_streams()
    chan.send({"k": "done"})
    chan.done(0)
    _exit(0)


WARM_UP_FILENAME = "<boa-warm-up>"
WARM_UP_TEST = '{"args": [[1, 2], "a"], "kwargs": {"k": 1.5}}'


def warm_up(job: bytes, code: bytes, new_globals, to_py4) -> None:
    """Walk the path of a run with trusted, throwaway input, before the job exists.

    Runs in the prepared child after confinement, while it waits for its job: after
    ``fork`` every page the run writes (reference counts of the builtins a fresh globals
    dict copies, the interpreter's free lists, the JSON encoder, the allocator's pools)
    must first be copied, and doing it here takes those copy-on-write faults off the
    run's critical path. ``job`` and ``code`` are marshalled like a real job's (made by
    the supervisor, never by a program). Nothing survives: the namespace, objects and
    the line cache entry are dropped and collected before the real job is read, and the
    real program gets fresh globals of its own.
    """
    header, program = marshal.loads(job), marshal.loads(code)
    register_source(WARM_UP_FILENAME, "pass\n")
    namespace = _module_globals(new_globals, WARM_UP_FILENAME, "__main__")
    _exec(program, namespace)
    test = _loads(WARM_UP_TEST)
    value = strict_json([to_py4(test["args"]), to_py4(test["kwargs"])])
    Channel(-1, header["token"]).frame({"k": "exit", "code": 0, "exc": None, "report": value})
    _warm_gate(program)
    linecache.cache.pop(WARM_UP_FILENAME, None)
    del header, program, namespace, test, value
    gc.collect()


def _warm_gate(program) -> None:
    """Walk the code gate's common paths (an import, an event it lets through, the harness
    running code) without installing it: the copy-on-write faults of its code and of the
    many default arguments it references then happen before the job, not at a program's
    first import (~0.1 ms)."""
    gate = sys.modules.get("py4.lang.code_gate")
    if gate is not None:
        gate._gate("import", ("math", None, None, None, None))
        gate._gate("os.kill", (0, 0))
        gate._gate("exec", (program,))


def _refusal_detail(exc: BaseException) -> dict:
    """The code gate's words when it stopped a test (the certificate says what was
    refused); nothing for any other exception (its text is the program's)."""
    gate = sys.modules.get("py4.lang.code_gate")
    if gate is not None and _type(exc) is gate.DynamicCodeError and exc.args and _type(
            exc.args[0]) is _str:
        return {"detail": exc.args[0][:300]}
    return {}


def _guard(namespace: dict) -> None:
    """Install the code gate when the program is Python-4 (its globals hold the runtime's
    helpers); the ``python3`` dialect, a tool for exercising the sandbox, runs without it.
    The worker loads the gate with the runtime, never with this module.

    The program's code object is run as a function made *before* this (a module's code
    called as a function runs in its globals, as ``exec`` would run it): calling it
    raises no audit event, whereas ``exec`` would call the newly installed hook at once,
    on cold pages, on every run's path (~0.1 ms); events the program causes go through
    the gate as before."""
    if "__p4__" in namespace:
        sys.modules["py4.lang.code_gate"].install()


def _module_globals(new_globals, filename: str, name: str) -> dict:
    namespace = new_globals()
    namespace["__name__"] = name
    namespace["__file__"] = filename
    return namespace


def register_source(filename: str, source: str) -> None:
    """Let tracebacks quote the program's lines (the file exists nowhere on disk)."""
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (_len(source), None, lines, filename)
