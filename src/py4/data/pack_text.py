"""Midtraining packing: token streams cut into fixed ``seq_len`` blocks, every token supervised.

Documents arrive already encoded (``[BOS] text [EOS]``, see :mod:`py4.data.tokens`) and
are concatenated in the order given; the stream is cut into blocks of exactly
``seq_len`` tokens with ``labels == input_ids`` and ``position_ids = 0 .. seq_len-1`` in
every block. The only tokens lost are the final ``remainder`` (< ``seq_len``), which is
recorded: ``packed_tokens + remainder_tokens (+ tokens_beyond_max_blocks, when a row limit
is set) == tokens_in`` always holds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from py4.data.packed_io import PackedDatasetWriter

__all__ = ["BlockPacker", "BlockPackStats", "pack_token_stream"]


@dataclass
class BlockPackStats:
    tokens_in: int
    blocks: int
    packed_tokens: int
    remainder_tokens: int
    tokens_beyond_max_blocks: int = 0


class BlockPacker:
    """Accumulates token arrays and writes full blocks in batches of ``blocks_per_batch``."""

    def __init__(self, seq_len: int, writer: PackedDatasetWriter, blocks_per_batch: int = 64,
                 max_blocks: int | None = None):
        self.seq_len = seq_len
        self.max_blocks = max_blocks
        self.tokens_beyond = 0
        self.writer = writer
        self.blocks_per_batch = blocks_per_batch
        self._buffer = np.empty(seq_len * blocks_per_batch, dtype=np.int32)
        self._fill = 0
        self._positions = np.broadcast_to(np.arange(seq_len, dtype=np.int32), (blocks_per_batch, seq_len))
        self.tokens_in = 0
        self.blocks = 0

    @property
    def full(self) -> bool:
        """True once ``max_blocks`` blocks are packed (later tokens are only counted)."""
        return self.max_blocks is not None and self.blocks + self._fill // self.seq_len >= self.max_blocks

    def add(self, tokens: np.ndarray) -> None:
        """Append one document's tokens (any length)."""
        self.tokens_in += len(tokens)
        pos, n, capacity = 0, len(tokens), len(self._buffer)
        while pos < n:
            if self.full:
                self.tokens_beyond += n - pos
                return
            take = min(n - pos, capacity - self._fill)
            self._buffer[self._fill:self._fill + take] = tokens[pos:pos + take]
            self._fill += take
            pos += take
            if self._fill == capacity:
                self._flush_full_blocks()

    def _flush_full_blocks(self) -> None:
        full = self._fill // self.seq_len
        if self.max_blocks is not None:
            full = min(full, self.max_blocks - self.blocks)
        if full == 0:
            return
        used = full * self.seq_len
        blocks = self._buffer[:used].reshape(full, self.seq_len)
        self.writer.write_blocks(blocks, blocks, self._positions[:full])
        self.blocks += full
        leftover = self._fill - used
        self._buffer[:leftover] = self._buffer[used:self._fill]
        self._fill = leftover

    def finish(self) -> BlockPackStats:
        """Write the last full blocks; the partial block left over is the recorded remainder."""
        self._flush_full_blocks()
        remainder = self._fill
        self._fill = 0
        if self.full:  # what is left in the buffer lies beyond the limit, not a remainder
            self.tokens_beyond += remainder
            remainder = 0
        return BlockPackStats(tokens_in=self.tokens_in, blocks=self.blocks,
                              packed_tokens=self.blocks * self.seq_len, remainder_tokens=remainder,
                              tokens_beyond_max_blocks=self.tokens_beyond)


def pack_token_stream(documents: Iterable[np.ndarray], seq_len: int, writer: PackedDatasetWriter) -> BlockPackStats:
    """Pack encoded documents in order; returns the accounting (the writer is not finished)."""
    packer = BlockPacker(seq_len, writer)
    for tokens in documents:
        packer.add(tokens)
    return packer.finish()
