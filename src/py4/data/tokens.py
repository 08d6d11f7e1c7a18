"""Tokenizer loading and document encoding with the run's tokenizer.

Every token count in the data pipeline (corpus tokens, replay tokens, ``total_mix_tokens``)
is a count of what :class:`DocumentEncoder` produces: a document's text tokens without
the tokenizer's own post-processing, with the BOS token in front and the EOS token at
the end when the tokenizer has them and the config asks for them. The campaign's
counting basis was "BOS included" (Gemma-3 tokenizer), which is ``add_bos=True``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from py4.data.errors import DataError

__all__ = ["DataError", "load_tokenizer", "DocumentEncoder", "encode_documents", "batched", "prefetched"]


def load_tokenizer(name_or_path: str, revision: str | None = None) -> Any:
    """Load a fast tokenizer from a local folder or a Hub id (at ``revision``).

    Raises DataError when it cannot be loaded or is not a fast (Rust-backed) tokenizer:
    packing relies on batched Rust encoding and on assistant masks from the chat template.
    """
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    _require_local_folder(name_or_path)
    try:
        tokenizer = AutoTokenizer.from_pretrained(name_or_path, revision=revision)
    except (OSError, ValueError) as exc:
        raise DataError(f"tokenizer {name_or_path!r} (revision {revision}): cannot load: {exc}") from None
    if not isinstance(tokenizer, PreTrainedTokenizerFast):
        raise DataError(f"tokenizer {name_or_path!r}: expected a fast tokenizer "
                        f"(PreTrainedTokenizerFast), got {type(tokenizer).__name__}")
    return tokenizer


# What `py4 smoke assets --out DIR` writes: a missing one of these is named with that command.
_SMOKE_ASSETS = ("tokenizer", "base", "it")


def _require_local_folder(name_or_path: str) -> None:
    """A path that is not a Hub id (``owner/name``) must be a folder here; raises DataError naming
    it — and, for a smoke asset, the command that builds it — instead of a Hub 'Repo id' error."""
    path = Path(name_or_path).expanduser()
    hub_id = not name_or_path.startswith((".", "/", "~")) and name_or_path.count("/") == 1
    if hub_id or path.exists():
        return
    hint = ""
    if path.name in _SMOKE_ASSETS:
        hint = (f"; build the smoke assets first: py4 smoke assets --out {path.parent} "
                "--config configs/train/smoke/smoke_assets.yaml (or make demo)")
    raise DataError(f"tokenizer {name_or_path!r}: no such folder{hint}")


class DocumentEncoder:
    """Encodes documents as ``[BOS] + text tokens + [EOS]`` in batches (Rust, no offsets)."""

    def __init__(self, tokenizer: Any, add_bos: bool = True, add_eos: bool = True):
        self.tokenizer = tokenizer
        self._backend = tokenizer.backend_tokenizer
        self.bos_id = tokenizer.bos_token_id if add_bos else None
        self.eos_id = tokenizer.eos_token_id if add_eos else None
        self._prefix = [self.bos_id] if self.bos_id is not None else []
        self._suffix = [self.eos_id] if self.eos_id is not None else []

    def describe(self) -> dict[str, Any]:
        """The separators actually used (recorded in manifests)."""
        return {
            "bos_token": self.tokenizer.bos_token if self.bos_id is not None else None,
            "bos_token_id": self.bos_id,
            "eos_token": self.tokenizer.eos_token if self.eos_id is not None else None,
            "eos_token_id": self.eos_id,
        }

    def encode_batch(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Token ids (int32) of each text with its separators."""
        encodings = self._backend.encode_batch_fast(list(texts), add_special_tokens=False)
        prefix, suffix = self._prefix, self._suffix
        return [np.asarray(prefix + enc.ids + suffix, dtype=np.int32) for enc in encodings]

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        extra = len(self._prefix) + len(self._suffix)
        encodings = self._backend.encode_batch_fast(list(texts), add_special_tokens=False)
        return [len(enc.ids) + extra for enc in encodings]


def batched(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    """Lists of ``size`` items (the last one shorter), streaming."""
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def prefetched(items: Iterable[Any], depth: int = 2) -> Iterator[Any]:
    """Iterate ``items`` in a background thread, ``depth`` items ahead, in order.

    Reading and JSON parsing (Python) then overlap with Rust encoding, which releases the
    GIL. An exception raised by ``items`` is re-raised here, in the consumer.
    """
    import queue
    import threading

    done = object()
    box: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                if stop.is_set():
                    return
                box.put(item)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, never swallowed
            box.put(_Raised(exc))
            return
        box.put(done)

    thread = threading.Thread(target=produce, name="py4-data-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            item = box.get()
            if item is done:
                return
            if isinstance(item, _Raised):
                raise item.exc
            yield item
    finally:
        stop.set()
        while thread.is_alive():  # unblock a producer waiting on a full queue
            try:
                box.get_nowait()
            except queue.Empty:
                thread.join(timeout=0.05)


class _Raised:
    def __init__(self, exc: BaseException):
        self.exc = exc


def encode_documents(docs: Iterable[Any], encoder: DocumentEncoder, batch: int,
                     basis: DocumentEncoder | None = None) -> Iterator[tuple[Any, np.ndarray, int]]:
    """(document, run-tokenizer ids, count in the counting basis) for each document
    (anything with a ``text``), encoded ``batch`` documents at a time; the next batch is
    read in a background thread meanwhile."""
    for chunk in prefetched(batched(docs, batch)):
        texts = [d.text for d in chunk]
        encoded = encoder.encode_batch(texts)
        counts = basis.count_batch(texts) if basis is not None else [len(t) for t in encoded]
        yield from zip(chunk, encoded, counts, strict=True)
