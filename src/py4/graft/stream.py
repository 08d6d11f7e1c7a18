"""Streaming arithmetic: read input chunks, combine in the accumulate dtype, write shard bytes.

Each output shard is written straight to disk: its header first (the plan knows every
name, dtype and shape), then each tensor's bytes a chunk at a time. A chunk is read
from each input with ``os.preadv`` into a reusable buffer, converted into the
accumulate dtype, combined as ``W_mid + lambda_ * (W_it - W_base)`` and cast to the
output dtype. Working memory is therefore a few chunk buffers, whatever the size of a
tensor or a shard.

Why not ``safe_open(...).get_tensor``: it maps the input files, so every page it
touches counts toward the process's resident memory until the handle closes (a whole
input shard, measured). Why not ``save_file``: it needs the whole shard in memory.
The headers are still cross-checked with ``safe_open`` (see ``checkpoint.py``), the
written files are byte for byte what ``save_file`` writes (tested), and ``verify``
re-reads everything through ``safe_open``.
"""

from __future__ import annotations

import hashlib
import os
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import torch

from py4.graft.checkpoint import DTYPES, GraftError, TensorEntry
from py4.graft.plan import Decision, ShardPlan

__all__ = ["ArithmeticSpec", "InputReader", "ChunkBuffers", "tensor_chunks", "write_shard", "ShardRecord"]


@dataclass(frozen=True)
class ArithmeticSpec:
    lambda_: float
    accumulate: torch.dtype
    chunk_elements: int


@dataclass(frozen=True)
class ShardRecord:
    size: int
    sha256: str | None


class InputReader:
    """Reads byte ranges of input files into caller-owned buffers (no mapping, no copies)."""

    def __init__(self) -> None:
        self._fds: dict[Path, int] = {}

    def _fd(self, path: Path) -> int:
        fd = self._fds.get(path)
        if fd is None:
            fd = self._fds[path] = os.open(path, os.O_RDONLY)
        return fd

    def read(self, entry: TensorEntry, first: int, count: int, raw: torch.Tensor) -> torch.Tensor:
        """Elements ``[first, first + count)`` of ``entry`` as a tensor viewing ``raw``."""
        itemsize = entry.info.itemsize
        nbytes = count * itemsize
        view = memoryview(raw.numpy())[:nbytes]
        fd, offset, got = self._fd(entry.file), entry.begin + first * itemsize, 0
        while got < nbytes:
            n = os.preadv(fd, [view[got:]], offset + got)
            if n <= 0:
                raise GraftError(f"{entry.file}: unexpected end of file reading tensor {entry.stored_name!r}")
            got += n
        return raw[:nbytes].view(entry.info.torch_dtype)

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def __enter__(self) -> "InputReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ChunkBuffers:
    """The only large allocations of a graft: reused for every chunk of every tensor.

    ``slots`` output buffers rotate so that one chunk can be written (and hashed) on the
    sink's thread while the next one is computed.
    """

    def __init__(self, spec: ArithmeticSpec, max_in_itemsize: int, max_out_itemsize: int, slots: int = 3):
        n = spec.chunk_elements
        self.raw = torch.empty(n * max_in_itemsize, dtype=torch.uint8)
        self.acc = torch.empty(n, dtype=spec.accumulate)
        self.tmp = torch.empty(n, dtype=spec.accumulate)
        self.slots = [torch.empty(n * max_out_itemsize, dtype=torch.uint8) for _ in range(slots)]


def _view(slot: torch.Tensor, code: str, count: int) -> torch.Tensor:
    info = DTYPES[code]
    return slot[: count * info.itemsize].view(info.torch_dtype)


def _graft_chunk(d: Decision, first: int, count: int, reader: InputReader, buf: ChunkBuffers,
                 spec: ArithmeticSpec, lam: torch.Tensor, slot: torch.Tensor) -> torch.Tensor:
    acc, tmp = buf.acc[:count], buf.tmp[:count]
    # Order fixed so that results are reproducible: (it - base), times lambda, plus mid.
    acc.copy_(reader.read(d.sources["it"], first, count, buf.raw))
    tmp.copy_(reader.read(d.sources["base"], first, count, buf.raw))
    acc.sub_(tmp)
    if spec.lambda_ != 1.0:  # x * 1 == x exactly: skip a pass over memory
        acc.mul_(lam)
    tmp.copy_(reader.read(d.sources["mid"], first, count, buf.raw))
    acc.add_(tmp)
    out = _view(slot, d.out_dtype, count)
    out.copy_(acc)  # round to nearest even, as torch's .to() does
    return out


def _take_chunk(d: Decision, first: int, count: int, reader: InputReader, buf: ChunkBuffers,
                slot: torch.Tensor) -> torch.Tensor:
    (entry,) = d.sources.values()
    if entry.dtype == d.out_dtype:  # read straight into the output slot
        return reader.read(entry, first, count, slot)
    out = _view(slot, d.out_dtype, count)
    out.copy_(reader.read(entry, first, count, buf.raw))
    return out


def tensor_chunks(d: Decision, reader: InputReader, buf: ChunkBuffers, spec: ArithmeticSpec,
                  next_slot: Callable[[], torch.Tensor]) -> Iterator[memoryview]:
    """The output bytes of one planned tensor, a chunk at a time, each in a slot from ``next_slot()``."""
    numel = d.out_bytes // DTYPES[d.out_dtype].itemsize
    lam = torch.tensor(spec.lambda_, dtype=spec.accumulate)
    for first in range(0, numel, spec.chunk_elements):
        count = min(spec.chunk_elements, numel - first)
        slot = next_slot()
        if d.action == "graft":
            out = _graft_chunk(d, first, count, reader, buf, spec, lam, slot)
        else:
            out = _take_chunk(d, first, count, reader, buf, slot)
        yield memoryview(out.view(torch.uint8).numpy())


def _write_all(fd: int, data: memoryview | bytes, digest) -> None:
    if digest is not None:
        digest.update(data)
    view = memoryview(data)
    while view.nbytes:
        written = os.write(fd, view)
        view = view[written:]


class _Sink:
    """Writes and hashes chunks on one background thread (both release the GIL).

    ``next_slot`` hands out the output buffer whose earlier write has finished, so a
    buffer is never refilled while it is being written.
    """

    def __init__(self, fd: int, digest, slots: list[torch.Tensor]):
        self._fd, self._digest, self._slots = fd, digest, slots
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="graft-sink")
        self._pending: deque[Future] = deque()
        self._turn = 0

    def next_slot(self) -> torch.Tensor:
        if len(self._pending) >= len(self._slots) - 1:
            self._pending.popleft().result()  # re-raises a failed write here
        slot = self._slots[self._turn % len(self._slots)]
        self._turn += 1
        return slot

    def submit(self, data: memoryview | bytes) -> None:
        self._pending.append(self._pool.submit(_write_all, self._fd, data, self._digest))

    def drain(self) -> None:
        while self._pending:
            self._pending.popleft().result()

    def close(self) -> None:
        for future in self._pending:  # after an error: let queued writes finish before the fd closes
            future.exception()
        self._pool.shutdown(wait=True)


def write_shard(shard: ShardPlan, out_dir: Path, reader: InputReader, buf: ChunkBuffers, spec: ArithmeticSpec, *,
                fsync: bool, hash_output: bool, on_tensor: Callable[[str], None] | None = None,
                on_bytes: Callable[[int], None] | None = None) -> ShardRecord:
    """Write one shard under a temporary name, then rename it into place.

    A shard on disk under its final name is therefore always complete; an interruption
    leaves only a hidden ``.partial`` file that the next attempt overwrites.
    """
    final = out_dir / shard.file_name
    partial = out_dir / f".{shard.file_name}.partial"
    digest = hashlib.sha256() if hash_output else None
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    sink = _Sink(fd, digest, buf.slots)
    try:
        sink.submit(shard.header)
        for d in shard.tensors:
            if on_tensor is not None:
                on_tensor(d.name)
            for chunk in tensor_chunks(d, reader, buf, spec, sink.next_slot):
                sink.submit(chunk)
                if on_bytes is not None:
                    on_bytes(chunk.nbytes)
        sink.drain()
        if fsync:
            os.fsync(fd)
    finally:
        sink.close()
        os.close(fd)
    size = partial.stat().st_size
    if size != shard.size:
        raise GraftError(f"{partial}: wrote {size} bytes, planned {shard.size}")
    os.replace(partial, final)
    if fsync:
        dir_fd = os.open(out_dir, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return ShardRecord(size, digest.hexdigest() if digest else None)
