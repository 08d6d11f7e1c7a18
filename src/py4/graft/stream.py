"""Streaming arithmetic: read input chunks, combine in the accumulate dtype, write shard bytes.

Each output shard is written straight to disk: its header first (the plan knows every
name, dtype and shape), then each tensor's bytes a chunk at a time. A chunk is read
from each input with ``os.preadv`` into a reusable buffer, converted into the
accumulate dtype, combined as ``W_mid + lambda_ * (W_it - W_base)`` (or ``W_base +
lambda_ * (W_it - W_base)`` for a tensor mid lacks) and cast to the output dtype.
Working memory is therefore a few chunk buffers, whatever the size of a tensor or a
shard. Reading (one thread), combining (the caller's thread) and writing
plus hashing (one thread) overlap, chunk by chunk, through rotating buffers.

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
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import torch

from py4.graft.checkpoint import DTYPES, ROLES, GraftError, TensorEntry
from py4.graft.plan import ON_BASE, Decision, ShardPlan

__all__ = ["ArithmeticSpec", "InputReader", "ChunkBuffers", "write_shard", "ShardRecord"]


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
    """The only large allocations of a graft, reused for every chunk of every tensor.

    Three stages overlap: a reader thread fills ``read_slots`` ahead of the compute, the
    caller's thread combines a chunk into one of ``write_slots``, and a writer thread
    writes (and hashes) the slots already filled. ``slots`` of each kind rotate.
    """

    def __init__(self, spec: ArithmeticSpec, max_in_itemsize: int, max_out_itemsize: int, slots: int = 3,
                 round_itemsize: int = 0):
        n = spec.chunk_elements
        self.read_slots = [{role: torch.empty(n * max_in_itemsize, dtype=torch.uint8) for role in ROLES}
                           for _ in range(slots)]
        self.acc = torch.empty(n, dtype=spec.accumulate)
        self.tmp = torch.empty(n, dtype=spec.accumulate)
        self.write_slots = [torch.empty(n * max_out_itemsize, dtype=torch.uint8) for _ in range(slots)]
        # Only when some tensor's mid is rounded to the -it dtype first (Decision.mid_round).
        self.rounded = torch.empty(n * round_itemsize, dtype=torch.uint8)


@dataclass(frozen=True)
class _Chunk:
    decision: Decision
    first: int  # element offset in the flattened tensor
    count: int


def _chunks(shard: ShardPlan, chunk_elements: int) -> list[_Chunk]:
    chunks = []
    for d in shard.tensors:
        numel = d.out_bytes // DTYPES[d.out_dtype].itemsize
        starts = range(0, numel, chunk_elements) or [0]  # an empty tensor still gets its turn
        chunks += [_Chunk(d, first, min(chunk_elements, numel - first)) for first in starts]
    return chunks


def _read_chunk(reader: InputReader, chunk: _Chunk, slot: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {role: reader.read(entry, chunk.first, chunk.count, slot[role])
            for role, entry in chunk.decision.sources.items()}


def _combine(chunk: _Chunk, inputs: dict[str, torch.Tensor], buf: ChunkBuffers, spec: ArithmeticSpec,
             lam: torch.Tensor, slot: torch.Tensor) -> torch.Tensor:
    d, count = chunk.decision, chunk.count
    info = DTYPES[d.out_dtype]
    out = slot[: count * info.itemsize].view(info.torch_dtype)
    if d.action not in ("graft", ON_BASE):
        (src,) = inputs.values()
        out.copy_(src)
        return out
    acc, tmp = buf.acc[:count], buf.tmp[:count]
    # Order fixed so that results are reproducible: (it - base), times lambda, plus mid (or base).
    acc.copy_(inputs["it"])
    tmp.copy_(inputs["base"])
    acc.sub_(tmp)
    if spec.lambda_ != 1.0:  # x * 1 == x exactly: skip a pass over memory
        acc.mul_(lam)
    if d.action == ON_BASE:
        acc.add_(tmp)  # tmp still holds base: W_base + lambda (W_it - W_base)
    elif d.mid_round:
        rounded = DTYPES[d.mid_round]
        narrow = buf.rounded[: count * rounded.itemsize].view(rounded.torch_dtype)
        narrow.copy_(inputs["mid"])  # round to nearest even, as a save in the -it dtype would
        tmp.copy_(narrow)
        acc.add_(tmp)
    else:
        tmp.copy_(inputs["mid"])
        acc.add_(tmp)
    out.copy_(acc)  # round to nearest even, as torch's .to() does
    return out


def _write_all(fd: int, data: memoryview | bytes, digest) -> None:
    if digest is not None:
        digest.update(data)
    view = memoryview(data)
    while view.nbytes:
        written = os.write(fd, view)
        view = view[written:]


class _Stage:
    """One background thread running jobs in order, at most ``depth`` of them unfinished.

    Torch ops, ``os.preadv``/``os.write`` and hashlib release the GIL, so the stages run
    in parallel on separate cores when there are any to spare.
    """

    def __init__(self, name: str, depth: int):
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self._pending: deque[Future] = deque()
        self._depth = depth

    def submit(self, fn, *args) -> Future:
        while len(self._pending) >= self._depth:
            self._pending.popleft().result()  # re-raises a failed job here
        future = self._pool.submit(fn, *args)
        self._pending.append(future)
        return future

    def drain(self) -> None:
        while self._pending:
            self._pending.popleft().result()

    def close(self) -> None:
        for future in self._pending:  # after an error: let queued jobs finish before buffers/fds go
            future.cancel() or future.exception()
        self._pool.shutdown(wait=True)


def _stream_chunks(chunks: list[_Chunk], reader: InputReader, buf: ChunkBuffers, spec: ArithmeticSpec,
                   writes: _Stage, write: Callable[[memoryview], None],
                   on_tensor: Callable[[str], None] | None, on_bytes: Callable[[int], None] | None) -> None:
    slots = len(buf.read_slots)
    lam = torch.tensor(spec.lambda_, dtype=spec.accumulate)
    reads = _Stage("graft-read", slots)
    try:
        ahead = [reads.submit(_read_chunk, reader, c, buf.read_slots[i % slots])
                 for i, c in enumerate(chunks[: slots - 1])]
        current = None
        for i, chunk in enumerate(chunks):
            # Read slot i-1's chunk has been combined: refill it with chunk i + slots - 1.
            if i + slots - 1 < len(chunks):
                ahead.append(reads.submit(_read_chunk, reader, chunks[i + slots - 1],
                                          buf.read_slots[(i + slots - 1) % slots]))
            if chunk.decision is not current:
                current = chunk.decision
                if on_tensor is not None:
                    on_tensor(current.name)
            inputs = ahead[i].result()
            ahead[i] = None  # type: ignore[call-overload]
            out = _combine(chunk, inputs, buf, spec, lam, buf.write_slots[i % slots])
            writes.submit(write, memoryview(out.view(torch.uint8).numpy()))
            if on_bytes is not None:
                on_bytes(out.numel() * out.element_size())
    finally:
        reads.close()


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
    # depth slots-1: write slot i is refilled only after its previous write has finished.
    writes = _Stage("graft-write", len(buf.write_slots) - 1)
    try:
        writes.submit(_write_all, fd, shard.header, digest)
        _stream_chunks(_chunks(shard, spec.chunk_elements), reader, buf, spec, writes,
                       lambda data: _write_all(fd, data, digest), on_tensor, on_bytes)
        writes.drain()
        if fsync:
            os.fsync(fd)
    finally:
        writes.close()
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
