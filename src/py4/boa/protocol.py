"""Length-prefixed frames between the executor and its workers (trusted on both ends).

A frame is a 4-byte big-endian length followed by that many bytes. Messages are JSON
objects, except the marshalled code object that follows a job header.
"""

from __future__ import annotations

import json
import os

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
