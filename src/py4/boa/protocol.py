"""Frames between Boa's processes.

Executor <-> supervisor (trusted on both ends): a 4-byte big-endian length followed by
that many bytes; messages are JSON objects, except what goes back and forth for each run
(fixed-size: the executor's ``Kill``, the supervisor's ``Reply``, the hand-over of a
prepared child, ``HandOver``).
Run child -> executor (the result channel, untrusted): a per-run token, a 4-byte length
and a JSON object, parsed by ``FrameReader``, which accepts nothing else.
"""

from __future__ import annotations

import json
import os
import re
import struct
from typing import Any, Callable, Literal, NotRequired, Required, TypedDict, TypeGuard

from py4.boa.frontend import Dialect, Rendering

MAX_FRAME_BYTES = 256 * 2**20
# A certification's harness signals a test's start on the tick pipe only when its last
# tick is at least this old (the skipped ones follow with the next tick, or with the end
# report, so the tick count stays exact); the executor's per-test deadline counts from
# the tick it read, plus this interval. Each tick woke the executor: ~12 wake-ups of
# ~15 us of its CPU per certification of 10 quick tests, now ~2.
TICK_INTERVAL_S = 0.001

JobMode = Literal["run", "certify"]
# Why the executor stopped a run itself (None in a reply: it did not).
StopReason = Literal["timeout", "output_limit", "protocol"]
FrameKind = Literal["start", "result", "error", "load_error", "done", "exit"]


class WorkerConfig(TypedDict):
    """The executor's first frame to a worker (JSON on its job pipe; never on its command line)."""

    dialect: Dialect
    isolate: bool
    seccomp: bool
    debug: bool
    user_namespace: bool
    limits: dict[str, int]  # isolation.Limits as a dict
    run_uid: int
    cgroups: list[str]  # cgroups.WorkerCgroup.to_config(): the folders the worker joins
    host_scratch: str
    parent_pid: int
    handoff_fd: int
    src_root: str


class ReadyMessage(TypedDict):
    """A worker's first and only JSON message: it started, with the isolation it got."""

    ready: bool
    caps: dict[str, Any]  # isolation.Capabilities.to_json()
    pid: int


def is_ready_message(message: object) -> TypeGuard[ReadyMessage]:
    """Whether a decoded message is a worker's ready message."""
    return type(message) is dict and message.get("ready") is True and type(message.get("caps")) is dict


class JobHeader(TypedDict):
    """What the executor asks of one run (the certification fields only for ``certify``)."""

    mode: JobMode
    filename: str
    source: str
    diagnostics: Rendering
    timeout_s: float
    output_cap: int
    per_test_timeout_s: NotRequired[float]
    entry_point: NotRequired[str]
    tests: NotRequired[list[str]]  # each test's inputs as JSON: {"args": [...], "kwargs": {...}}


class Job(JobHeader):
    """The header as the prepared child reads it (marshalled), with the run's channel token."""

    token: bytes


class ExceptionInfo(TypedDict):
    type: str
    line: int | None


class ChannelFrame(TypedDict, total=False):
    """One frame of a run's result channel, as ``FrameReader`` accepts it: ``k`` and exactly
    the fields ``FRAME_FIELDS`` gives that kind."""

    k: Required[FrameKind]
    i: int
    v: str
    type: str
    line: int | None
    detail: str | None
    code: int
    exc: ExceptionInfo | None
    report: str


class SupervisorReply(TypedDict):
    """How a run ended, as the supervisor saw it (``Reply``)."""

    seq: int
    ended_at: float  # CLOCK_MONOTONIC
    exit_code: int | None
    signal: int | None


class RunReply(TypedDict):
    """Everything the executor learnt of one run (``run_watch.RunWatch``), as ``dispatch`` returns it."""

    reason: StopReason | None
    exit_code: int | None
    signal: int | None
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    duration_s: float
    messages: list[ChannelFrame]
    violation: str | None  # why the result channel was refused, if it was
    oom_killed: NotRequired[bool]  # added by the executor: a SIGKILL its memory cgroup explains


class WorkerGone(EOFError):
    """The other end closed the pipe (the worker died or was killed)."""


def frame(payload: bytes) -> bytes:
    """``payload`` behind its 4-byte length, as ``read_frame`` takes it."""
    return len(payload).to_bytes(4, "big") + payload


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_frame(fd: int, payload: bytes) -> None:
    write_all(fd, frame(payload))


def read_exact(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise WorkerGone("pipe closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> bytes:
    size = int.from_bytes(read_exact(fd, 4), "big")
    if size > MAX_FRAME_BYTES:
        raise WorkerGone(f"frame of {size} bytes is larger than allowed")
    return read_exact(fd, size)


def write_message(fd: int, message: ReadyMessage | WorkerConfig) -> None:
    write_frame(fd, json.dumps(message).encode("utf-8"))


def read_message(fd: int) -> Any:
    """The next JSON message (the caller knows which one it awaits and checks it)."""
    return json.loads(read_frame(fd))


class Kill:
    """The executor's one control during a run: stop run ``seq`` now and report how it
    ended (sent for a deadline or the output cap). Tagged with the run's sequence number
    (the worker's count of prepared children, from 1): a control that arrives after the
    supervisor ended that run on its own is stale, and ignored."""

    TAG = b"K"
    FORMAT = struct.Struct("!cI")
    size = FORMAT.size

    @classmethod
    def pack(cls, seq: int) -> bytes:
        return cls.FORMAT.pack(cls.TAG, seq & 0xFFFFFFFF)

    @classmethod
    def read(cls, fd: int) -> int:
        """The run sequence number of the next control. Raises WorkerGone when the pipe
        closes, ValueError for bytes that are no control."""
        tag, seq = cls.FORMAT.unpack(read_exact(fd, cls.size))
        if tag != cls.TAG:
            raise ValueError(f"unexpected control {tag!r}")
        return seq


class Reply:
    """How a run ended, from the supervisor (after its ready message, the only thing it
    writes to the executor): the run's sequence number, when it saw the end
    (``CLOCK_MONOTONIC``, shared by both processes), and the kernel's exit code or
    signal. Fixed-size and written in one piece, so that the executor reads it in one
    call (it reads one per run, usually to drop it)."""

    FORMAT = struct.Struct("!Idii")
    size = FORMAT.size

    @classmethod
    def pack(cls, seq: int, ended_at: float, exit_code: int | None, signal: int | None) -> bytes:
        return cls.FORMAT.pack(seq & 0xFFFFFFFF, ended_at, -1 if exit_code is None else exit_code,
                               -1 if signal is None else signal)

    @classmethod
    def read(cls, fd: int) -> SupervisorReply:
        """The next reply (exit code or signal None where not applicable).
        Raises WorkerGone when the pipe closes."""
        seq, ended_at, exit_code, signal = cls.FORMAT.unpack(read_exact(fd, cls.size))
        return {"seq": seq, "ended_at": ended_at, "exit_code": None if exit_code < 0 else exit_code,
                "signal": None if signal < 0 else signal}


class HandOver:
    """A prepared child, passed from the supervisor to the executor over a unix socket:
    its descriptors (``FDS``, in that order; the read ends are non-blocking already) and,
    as the message's bytes, the supervisor's
    usage so far (CPU seconds and minor page faults of itself and its reaped children,
    for benchmarks). Receiving it is also the verdict that the last run left nothing."""

    FDS = ("job", "channel", "stdout", "stderr", "ticks")
    USAGE = struct.Struct("!dq")

    @classmethod
    def pack_usage(cls, cpu_s: float, minflt: int) -> bytes:
        return cls.USAGE.pack(cpu_s, minflt)

    @classmethod
    def unpack_usage(cls, data: bytes) -> tuple[float, int]:
        """Raises ValueError for a message of the wrong size."""
        if len(data) != cls.USAGE.size:
            raise ValueError(f"hand-over of {len(data)} bytes, expected {cls.USAGE.size}")
        cpu_s, minflt = cls.USAGE.unpack(data)
        return cpu_s, minflt


MAX_CHANNEL_BYTES = 32 * 2**20  # all of one run's result frames
MAX_CHANNEL_FRAME = 8 * 2**20

# The result channel is written by the run's child, which a hostile program controls
# (it can find its channel and token): the parent parses only the frames the harness
# writes, each checked for shape before and after decoding. Before: a frame must be a
# JSON object whose values are scalars or one level of flat object (``exc``), checked by
# a linear-time pattern, so that decoding cannot recurse or build more than a few objects
# whatever the bytes (a deeply nested frame once raised RecursionError in the parent,
# and frames of many empty objects took it from ~18 to ~640 MiB). After: the kind must be
# known, the keys exactly the kind's, every value of its type and size.
_STRING = rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"'  # possessive: a failed match never backtracks
_SCALAR = rb'(?:' + _STRING + rb'|-?[0-9]{1,20}(?:\.[0-9]{1,20})?(?:[eE][-+]?[0-9]{1,4})?|true|false|null)'


def _object_of(value: bytes) -> bytes:
    pair = _STRING + rb'\s*+:\s*+' + value
    return rb'\{\s*+(?:' + pair + rb'(?:\s*+,\s*+' + pair + rb'){0,7})?\s*+\}'  # at most 8 keys


_FRAME_SHAPE = re.compile(_object_of(rb'(?:' + _SCALAR + rb'|' + _object_of(_SCALAR) + rb')'))

# Texts that the harness copies from the program (an exception's type name, an error's
# detail, the traceback: a message of several MiB is honest) are bounded by the frame's
# size; the parent's memory by the channel's cap (see FrameReader).
_NAME_CHARS = 4096


FieldCheck = Callable[[object], bool]


def _int(value: object) -> bool:
    return type(value) is int and -2**31 <= value < 2**31


def _line(value: object) -> bool:
    return value is None or _int(value)


def _text(limit: int) -> FieldCheck:
    return lambda value: type(value) is str and len(value) <= limit


def _optional_text(limit: int) -> FieldCheck:
    return lambda value: value is None or (type(value) is str and len(value) <= limit)


_name = _text(_NAME_CHARS)


def _exception(value: object) -> bool:
    return value is None or (type(value) is dict and value.keys() == {"type", "line"}
                             and _name(value["type"]) and _line(value["line"]))


# kind -> {field: check}; "detail" of an error frame is optional (Unserialisable only).
FRAME_FIELDS: dict[str, dict[str, FieldCheck]] = {
    "start": {"i": _int},
    "result": {"i": _int, "v": _text(MAX_CHANNEL_FRAME)},
    "error": {"i": _int, "type": _name, "line": _line, "detail": _optional_text(MAX_CHANNEL_FRAME)},
    "load_error": {"type": _name, "line": _line},
    "done": {},
    "exit": {"code": _int, "exc": _exception, "report": _text(MAX_CHANNEL_FRAME)},
}
_OPTIONAL_FIELDS = {"error": {"detail"}}
# kind -> (keys a frame of that kind may have, keys it must have), "k" included: made once,
# since a certification's parent checks ~2 frames per test.
_FRAME_KEYS = {kind: (frozenset(fields) | {"k"}, frozenset(fields) - _OPTIONAL_FIELDS.get(kind, set()) | {"k"})
               for kind, fields in FRAME_FIELDS.items()}


def frame_problem(message: object) -> str | None:
    """Why a decoded frame is not one the harness writes; None when it is."""
    if type(message) is not dict:
        return "a frame that is not an object"
    kind = message.get("k")
    if type(kind) is not str or kind not in FRAME_FIELDS:
        return "a frame of unknown kind"
    allowed, required = _FRAME_KEYS[kind]
    keys = message.keys()
    if not keys <= allowed or not keys >= required:
        return f"a {kind!r} frame with the wrong fields"
    fields = FRAME_FIELDS[kind]
    for name, value in message.items():
        if name != "k" and not fields[name](value):
            return f"a {kind!r} frame whose {name!r} has the wrong type or size"
    return None


FORKED_REPORTS = 1024  # exit reports of copies the program forked (a fork bomb writes hundreds)


def message_budget(job: JobHeader) -> int:
    """How many frames the harness writes for ``job``, at most: a run's exit report; a
    certification's load start, start and outcome per test, ``done``; plus those that
    copies of the run's process write when they reach the end of the program."""
    tests = len(job.get("tests", ())) if job.get("mode") == "certify" else 0
    return 2 * tests + 4 + FORKED_REPORTS


# The C scanner, without json.loads's Python layers (an attribute typeshed leaves out).
_scan_json: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _decode(body: bytes) -> Any:
    """The JSON value of a frame that matched ``_FRAME_SHAPE`` (one object, nothing around
    it), or None when it does not decode (e.g. bytes that are not UTF-8)."""
    try:
        text = body.decode("utf-8")
        value, end = _scan_json(text, 0)
    except (ValueError, StopIteration):
        return None
    return value if end == len(text) else None


class FrameReader:
    """Parses token-framed JSON messages from a run's channel; tolerates nothing.

    The first wrong token, oversized, malformed or unexpected frame, or one frame more
    than ``max_messages``, sets ``violation`` and stops parsing: everything after it is
    ignored. Bytes already parsed are dropped from the buffer, so that the parent holds at
    most one unparsed frame besides the decoded messages (whose text is bounded by
    ``MAX_CHANNEL_BYTES`` in all).
    """

    def __init__(self, token: bytes, max_messages: int = 100_000):
        self.token, self.max_messages = token, max_messages
        self.buffer = bytearray()
        self.messages: list[ChannelFrame] = []
        self.violation: str | None = None

    def feed(self, data: bytes) -> list[ChannelFrame]:
        """Take ``data`` (the next bytes of the channel); the messages it completed."""
        if self.violation:
            return []
        self.buffer += data
        new: list[ChannelFrame] = []
        head, offset = len(self.token) + 4, 0
        while len(self.buffer) - offset >= head:
            if not self.buffer.startswith(self.token, offset):
                self.violation = "frame with a wrong token"
                break
            size = int.from_bytes(self.buffer[offset + len(self.token):offset + head], "big")
            if size > MAX_CHANNEL_FRAME:
                self.violation = "oversized frame"
                break
            if len(self.buffer) - offset - head < size:
                break
            body = bytes(self.buffer[offset + head:offset + head + size])
            offset += head + size
            problem = self._problem(body)
            if problem:
                self.violation = problem
                break
            message = _decode(body)
            problem = "malformed frame" if message is None else frame_problem(message)
            if problem is None and len(self.messages) >= self.max_messages:
                problem = "more frames than the harness writes"
            if problem:
                self.violation = problem
                break
            self.messages.append(message)
            new.append(message)
        if self.violation:
            self.buffer = bytearray()
        else:
            del self.buffer[:offset]
        return new

    @staticmethod
    def _problem(body: bytes) -> str | None:  # (before decoding: see _FRAME_SHAPE)
        try:
            return None if _FRAME_SHAPE.fullmatch(body) else "malformed frame"
        except (RecursionError, MemoryError):  # never expected of a linear pattern: refuse
            return "malformed frame"
