"""Midtraining packing: token streams cut into fixed ``seq_len`` blocks, every token supervised.

Documents arrive already encoded (``[BOS] text [EOS]``, see :mod:`py4.data.tokens`) and
are concatenated in the order given; the stream is cut into blocks of exactly
``seq_len`` tokens with ``labels == input_ids``. The only tokens lost are the final
``remainder`` (< ``seq_len``), which is recorded: ``packed_tokens + remainder_tokens
(+ tokens_beyond_max_blocks, when a row limit is set) == tokens_in`` always holds.

How documents share a block is a choice (``documents``), and it lives in the position ids:

- ``concatenated``: ``position_ids = 0 .. seq_len-1`` in every block. The model sees one
  long causal sequence; a token attends to every earlier token of the block, whatever
  document it came from.
- ``apart``: position ids restart at 0 at every document start, and at the start of every
  block (the piece of a document cut at a block boundary starts again at 0 in the next
  block). With ``position_ids`` and no ``attention_mask`` (``py4.train.packed``'s
  collator), transformers' ``find_packed_sequence_indices`` reads each restart as a new
  sequence and builds a block-causal mask (sdpa/eager; flash-attention derives its
  sequence lengths from the same ids), so no token attends across a document boundary
  and a token's logits do not depend on what was packed before it (tested per model
  class in tests/data/test_pack_documents.py). Restarting a continued piece at 0 rather
  than at its offset in the document changes nothing for rotary embeddings, which see
  only relative positions, and it is the same convention as a split SFT conversation.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from py4.data.errors import DataError
from py4.data.packed_io import PackedDatasetWriter

__all__ = ["BlockPacker", "BlockPackStats", "pack_token_stream", "DOCUMENT_MODES", "block_positions"]

DOCUMENT_MODES = ("apart", "concatenated")


@dataclass
class BlockPackStats:
    tokens_in: int
    blocks: int
    packed_tokens: int
    remainder_tokens: int
    tokens_beyond_max_blocks: int = 0


def block_positions(offsets: np.ndarray) -> np.ndarray:
    """Position ids of ``apart`` blocks from each token's offset inside its document.

    ``offsets`` is (rows x seq_len): 0 at a document's first token, counting up. Tokens
    before a row's first document start continue a document from the previous row; they
    restart at 0 too, so that every row is self-contained.
    """
    continued = ~np.logical_or.accumulate(offsets == 0, axis=1)
    return offsets - np.where(continued, offsets[:, :1], 0)


class BlockPacker:
    """Accumulates token arrays and writes full blocks in batches of ``blocks_per_batch``.

    ``documents`` is ``apart`` or ``concatenated`` (see the module docstring).
    """

    def __init__(self, seq_len: int, writer: PackedDatasetWriter, blocks_per_batch: int = 64,
                 max_blocks: int | None = None, documents: str = "concatenated"):
        if documents not in DOCUMENT_MODES:
            raise DataError(f"documents must be one of {', '.join(DOCUMENT_MODES)}, got {documents!r}")
        self.seq_len = seq_len
        self.max_blocks = max_blocks
        self.documents = documents
        self.tokens_beyond = 0
        self.writer = writer
        self.blocks_per_batch = blocks_per_batch
        self._buffer = np.empty(seq_len * blocks_per_batch, dtype=np.int32)
        # apart: each buffered token's offset inside its document (block_positions makes the ids).
        self._offsets = np.empty_like(self._buffer) if documents == "apart" else None
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
            if self._offsets is not None:
                self._offsets[self._fill:self._fill + take] = np.arange(pos, pos + take, dtype=np.int32)
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
        if self._offsets is None:
            positions = self._positions[:full]
        else:
            positions = block_positions(self._offsets[:used].reshape(full, self.seq_len))
        self.writer.write_blocks(blocks, blocks, positions)
        self.blocks += full
        leftover = self._fill - used
        self._buffer[:leftover] = self._buffer[used:self._fill]
        if self._offsets is not None:
            self._offsets[:leftover] = self._offsets[used:self._fill]
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


def pack_token_stream(documents: Iterable[np.ndarray], seq_len: int, writer: PackedDatasetWriter,
                      mode: str = "concatenated") -> BlockPackStats:
    """Pack encoded documents in order; returns the accounting (the writer is not finished)."""
    packer = BlockPacker(seq_len, writer, documents=mode)
    for tokens in documents:
        packer.add(tokens)
    return packer.finish()
