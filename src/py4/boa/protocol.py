"""Frames between Boa's processes.

Executor <-> supervisor (trusted on both ends): a 4-byte big-endian length followed by
that many bytes; messages are JSON objects, except a job's header (``JobHeader``: what
the supervisor needs to watch a run, in a fixed-size struct, cheap on the run's path).
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


def write_frame(fd: int, payload: bytes) -> None:
    view = memoryview(len(payload).to_bytes(4, "big") + payload)
    while view:
        view = view[os.write(fd, view):]


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


class JobHeader:
    """A job as the supervisor sees it: mode, wall-clock and per-test deadlines (s), output
    cap (characters). ``pack`` takes the executor's job dict; ``read`` returns one."""

    FORMAT = struct.Struct("!Bddq")
    MODES = ("run", "certify")
    size = FORMAT.size

    @classmethod
    def pack(cls, job: dict) -> bytes:
        return cls.FORMAT.pack(cls.MODES.index(job["mode"]), float(job["timeout_s"]),
                               float(job.get("per_test_timeout_s") or 0.0), int(job["output_cap"]))

    @classmethod
    def read(cls, fd: int) -> dict:
        """Raises WorkerGone when the pipe closes, ValueError for an unknown mode."""
        mode, timeout_s, per_test_timeout_s, output_cap = cls.FORMAT.unpack(read_exact(fd, cls.size))
        if mode >= len(cls.MODES):
            raise ValueError(f"unknown job mode {mode}")
        return {"mode": cls.MODES[mode], "timeout_s": timeout_s,
                "per_test_timeout_s": per_test_timeout_s, "output_cap": output_cap}


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
