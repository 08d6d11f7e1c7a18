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
import struct

MAX_FRAME_BYTES = 256 * 2**20


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


def write_message(fd: int, message: dict) -> None:
    write_frame(fd, json.dumps(message).encode("utf-8"))


def read_message(fd: int) -> dict:
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
    def read(cls, fd: int) -> dict:
        """``{"seq", "ended_at", "exit_code", "signal"}`` (None where not applicable).
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
        return cls.USAGE.unpack(data)


MAX_CHANNEL_BYTES = 32 * 2**20  # all of one run's result frames
MAX_CHANNEL_FRAME = 8 * 2**20


class FrameReader:
    """Parses token-framed JSON messages from a run's channel; tolerates nothing.

    The first wrong token, oversized or malformed frame sets ``violation`` and stops
    parsing: everything after it is ignored.
    """

    MAX_MESSAGES = 100_000

    def __init__(self, token: bytes):
        self.token, self.offset = token, 0
        self.messages: list[dict] = []
        self.violation: str | None = None

    def feed(self, buf: bytearray) -> list[dict]:
        new: list[dict] = []
        head = len(self.token) + 4
        while not self.violation and len(buf) - self.offset >= head:
            start = self.offset
            if bytes(buf[start:start + len(self.token)]) != self.token:
                self.violation = "frame with a wrong token"
                break
            size = int.from_bytes(buf[start + len(self.token):start + head], "big")
            if size > MAX_CHANNEL_FRAME:
                self.violation = "oversized frame"
                break
            if len(buf) - start - head < size:
                break
            try:
                message = json.loads(bytes(buf[start + head:start + head + size]))
            except ValueError:
                self.violation = "malformed frame"
                break
            if not isinstance(message, dict) or len(self.messages) >= self.MAX_MESSAGES:
                self.violation = "malformed frame"
                break
            self.offset = start + head + size
            self.messages.append(message)
            new.append(message)
        return new
