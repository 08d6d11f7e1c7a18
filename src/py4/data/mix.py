"""The midtraining mix: N copies of the Python-4 corpus shuffled into an equal-token stream
of replay text, packed into ``seq_len`` blocks (``py4 data mix``).

Steps, each streamed in bounded memory:

1. **Corpus** (corpus arm): every document encoded once with the run's tokenizer
   (``[BOS] text [EOS]``) and appended to a flat on-disk token store; ``C`` = its tokens.
2. **Replay**: documents drawn as a seeded sample of the whole source (as the campaign drew
   Dolmino: every shard pooled in a seeded order through a shuffle buffer, or the sources in
   proportion: :mod:`py4.data.replay_sample`; the built-in stdlib replay in its own order) and
   encoded until they hold exactly
   ``round(C x copies x replay_ratio)`` tokens (the control arm: a given target, or the
   ``total_mix_tokens`` of a corpus arm's manifest); the last document is cut to hit the
   target exactly and the cut is recorded. ``total_mix_tokens = C x copies + replay``.
3. **Shuffle**: the stream's entries are the ``copies x D_corpus`` corpus entries
   (entry ``e`` is corpus document ``e mod D_corpus``, copy ``e div D_corpus``) followed
   by the ``D_replay`` replay documents; their order is
   ``numpy.random.default_rng(seed).permutation(n_entries)``. Only this index (8 bytes
   an entry) and the document offsets are in memory; tokens are read from the store.
4. **Pack**: the shuffled documents are concatenated and cut into ``seq_len`` blocks,
   every token supervised (:mod:`py4.data.pack_text`); the remainder is recorded.
   ``documents: apart`` restarts the position ids at every document (attention stays
   inside a document), ``concatenated`` numbers every row 0..seq_len-1.
"""

from __future__ import annotations

import os
import shutil
import time
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from py4.data.configs import MixConfig
from py4.data.outputs import write_outputs
from py4.data.pack_text import BlockPacker
from py4.data.packed_io import PackedDatasetWriter, read_data_manifest
from py4.data.progress import progress_bar
from py4.data.replay_sample import SampleRecord, sample_documents
from py4.data.documents import Document
from py4.data.sources import describe_source, iter_corpus, iter_text_source, read_corpus_manifest
from py4.data.tokens import DataError, DocumentEncoder, encode_documents, load_tokenizer
from py4.runs import RunRecorder, file_sha256, tree_sha256

__all__ = ["TokenStore", "mix_order", "replay_documents", "run_mix"]


class TokenStore:
    """Documents' token ids appended to one flat int32 file; read back with ``os.pread``.

    Reading with ``pread`` rather than a memory map keeps the resident set flat: mapped
    file pages count towards a process's RSS, page-cache reads do not.
    """

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(path, "wb")  # noqa: SIM115 - the writer's file until close()
        self._lengths = array("q")
        self.tokens = 0
        self._offsets: np.ndarray | None = None
        self._fd: int | None = None

    def append(self, tokens: np.ndarray) -> None:
        self._fh.write(np.ascontiguousarray(tokens, dtype=np.int32).tobytes())
        self._lengths.append(len(tokens))
        self.tokens += len(tokens)

    def __len__(self) -> int:
        return len(self._lengths)

    def seal(self) -> None:
        """Finish writing; from now on ``doc(i)`` reads document ``i``."""
        self._fh.close()
        self._offsets = np.zeros(len(self._lengths) + 1, dtype=np.int64)
        np.cumsum(np.frombuffer(self._lengths, dtype=np.int64), out=self._offsets[1:])
        self._fd = os.open(self.path, os.O_RDONLY)

    def doc(self, index: int) -> np.ndarray:
        start, end = int(self._offsets[index]), int(self._offsets[index + 1])
        data = os.pread(self._fd, (end - start) * 4, start * 4)
        return np.frombuffer(data, dtype=np.int32)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _tokenize_corpus(corpus: str, encoder: DocumentEncoder, basis: DocumentEncoder | None, store: TokenStore,
                     batch: int) -> dict[str, Any]:
    basis_tokens = 0
    with progress_bar("corpus: tokenizing") as advance:
        for _, tokens, count in encode_documents(iter_corpus(corpus), encoder, batch, basis):
            store.append(tokens)
            basis_tokens += count
            advance(len(tokens))
    if len(store) == 0:
        raise DataError(f"corpus {corpus}: no documents")
    return {"docs": len(store), "tokens": store.tokens, "basis_tokens": basis_tokens}


def replay_documents(config: MixConfig, record: SampleRecord | None = None) -> Iterator[Document]:
    """The replay stream the mix reads: a seeded sample of a Hub or local source (``record`` says what
    it read), the built-in stdlib replay as it comes."""
    if config.replay.builtin is not None:
        return iter_text_source(config.replay)
    return sample_documents(config.replay, config.seed, config.replay_shuffle_buffer, record, config.replay_order)


def _tokenize_replay(config: MixConfig, encoder: DocumentEncoder, basis: DocumentEncoder | None, store: TokenStore,
                     target: int, record: SampleRecord | None = None) -> dict[str, Any]:
    """Replay documents until ``target`` tokens in the counting basis.

    With one tokenizer the last document is cut to hit the target exactly; with a
    separate counting tokenizer whole documents are taken and the overshoot recorded
    (a cut in one tokenization is not a cut in the other).
    """
    cut = basis_tokens = 0
    stream = encode_documents(replay_documents(config, record), encoder, config.encode_batch_docs, basis)
    used: dict[str, int] = {}
    with progress_bar("replay: tokenizing", total=target) as advance:
        for doc, tokens, count in stream:
            used[doc.source] = used.get(doc.source, 0) + 1
            need = target - basis_tokens
            if basis is None and len(tokens) >= need:
                cut = len(tokens) - need
                store.append(tokens[:need])
                basis_tokens += need
                advance(need)
                break
            store.append(tokens)
            basis_tokens += count
            advance(count)
            if basis_tokens >= target:
                break
    if record is not None:  # documents read ahead by the encoder's batches are not used
        for name, entry in record.sources.items():
            entry["docs_used"] = used.get(f"replay/{name}", 0)
    if basis_tokens < target:
        raise DataError(f"replay source ran out: {basis_tokens} tokens of the {target} needed "
                        f"({describe_source(config.replay)})")
    return {"docs": len(store), "tokens": store.tokens, "basis_tokens": basis_tokens, "target_tokens": target,
            "last_doc_tokens_cut": cut, "basis_overshoot_tokens": basis_tokens - target}


def mix_order(corpus_docs: int, copies: int, replay_docs: int, seed: int) -> np.ndarray:
    """The shuffled entry order (see the module docstring for what an entry is)."""
    return np.random.default_rng(seed).permutation(corpus_docs * copies + replay_docs)


def _control_target(config: MixConfig) -> int:
    if config.control_target_tokens is not None:
        return config.control_target_tokens
    manifest = read_data_manifest(config.control_target_manifest)
    total = manifest.get("basis_total_mix_tokens", manifest.get("total_mix_tokens"))
    if not isinstance(total, int) or total < 1:
        raise DataError(f"{config.control_target_manifest}: no positive integer basis_total_mix_tokens to match")
    return total


def _corpus_input(corpus: str) -> dict[str, Any]:
    manifest = read_corpus_manifest(corpus)
    entry = {"path": corpus, "sha256": tree_sha256(corpus, exclude=()),
             "manifest_sha256": file_sha256(Path(corpus) / "manifest.json")}
    for key in ("name", "version", "revision", "docs", "tokens", "tokenizer", "content_sha256"):
        if key in manifest:
            entry[f"manifest_{key}"] = manifest[key]
    return entry


def _pack_in_order(order: np.ndarray, corpus: TokenStore | None, copies: int, replay: TokenStore,
                   packer: BlockPacker) -> None:
    corpus_docs = len(corpus) if corpus is not None else 0
    corpus_entries = corpus_docs * copies
    with progress_bar("packing", total=len(order), unit="docs") as advance:
        for start in range(0, len(order), 65536):  # slices: a Python list of every entry would not be small
            for entry in order[start:start + 65536].tolist():
                if entry < corpus_entries:
                    packer.add(corpus.doc(entry % corpus_docs))
                else:
                    packer.add(replay.doc(entry - corpus_entries))
            advance(min(65536, len(order) - start))


def _tokenize_inputs(config: MixConfig, encoder: DocumentEncoder, basis: DocumentEncoder | None,
                     work: Path) -> dict[str, Any]:
    """Steps 1-2: the corpus and replay token stores, and their counts."""
    corpus_store = None
    corpus_counts = {"docs": 0, "tokens": 0, "basis_tokens": 0}
    if config.arm == "corpus":
        corpus_store = TokenStore(work / "corpus.bin")
        corpus_counts = _tokenize_corpus(config.corpus, encoder, basis, corpus_store, config.encode_batch_docs)
        corpus_store.seal()
        target = round(corpus_counts["basis_tokens"] * config.copies * config.replay_ratio)
    else:
        target = _control_target(config)
    replay_store = TokenStore(work / "replay.bin")
    sample = (SampleRecord(config.seed, config.replay_shuffle_buffer, config.replay_order)
              if config.replay.builtin is None else None)
    replay_counts = _tokenize_replay(config, encoder, basis, replay_store, target, sample)
    replay_store.seal()
    return {"corpus_store": corpus_store, "corpus": corpus_counts, "replay_store": replay_store,
            "replay": replay_counts, "copies": config.copies if corpus_store is not None else 0,
            "replay_sample": sample.to_json() if sample is not None else None}


def _pack_mix(config: MixConfig, streams: dict[str, Any], out: Path) -> tuple[Any, str, int]:
    """Steps 3-4: shuffle and pack; returns (pack stats, content hash, entries)."""
    corpus_store, replay_store = streams["corpus_store"], streams["replay_store"]
    order = mix_order(streams["corpus"]["docs"], streams["copies"], streams["replay"]["docs"], config.seed)
    writer = PackedDatasetWriter(out)
    try:
        packer = BlockPacker(config.seq_len, writer, documents=config.documents)
        _pack_in_order(order, corpus_store, streams["copies"], replay_store, packer)
        stats = packer.finish()
        for store in (corpus_store, replay_store):
            if store is not None:
                store.release()
        digest = writer.finish()
    except BaseException:
        writer.abort()
        raise
    return stats, digest, int(len(order))


def _mix_manifest(config: MixConfig, tokenizer: Any, encoder: DocumentEncoder, inputs: dict[str, Any],
                  streams: dict[str, Any], stats: Any, digest: str, entries: int) -> dict[str, Any]:
    corpus, replay, copies = streams["corpus"], streams["replay"], streams["copies"]
    total_mix_tokens = corpus["tokens"] * copies + replay["tokens"]
    basis_total = corpus["basis_tokens"] * copies + replay["basis_tokens"]
    if stats.tokens_in != total_mix_tokens or stats.packed_tokens + stats.remainder_tokens != total_mix_tokens:
        raise AssertionError(f"token accounting broken: {stats} vs total {total_mix_tokens}")  # a bug, not input
    return {
        "kind": "midtrain_mix", "arm": config.arm, "seq_len": config.seq_len, "seed": config.seed,
        "copies": copies, "replay_ratio": config.replay_ratio,
        "tokenizer": {"name": config.tokenizer, "revision": config.tokenizer_revision,
                      "class": type(tokenizer).__name__, "vocab_size": len(tokenizer), **encoder.describe()},
        "count_tokenizer": {"name": config.count_tokenizer or config.tokenizer,
                            "revision": config.count_tokenizer_revision if config.count_tokenizer
                            else config.tokenizer_revision},
        "inputs": inputs,
        "counts": {"corpus_docs": corpus["docs"], "corpus_tokens": corpus["tokens"],
                   "corpus_basis_tokens": corpus["basis_tokens"], "corpus_tokens_all_copies": corpus["tokens"] * copies,
                   "replay_docs": replay["docs"], "replay_tokens": replay["tokens"],
                   "replay_basis_tokens": replay["basis_tokens"], "replay_target_basis_tokens": replay["target_tokens"],
                   "replay_last_doc_tokens_cut": replay["last_doc_tokens_cut"],
                   "replay_basis_overshoot_tokens": replay["basis_overshoot_tokens"],
                   "entries": entries, "sequences": stats.blocks,
                   "packed_tokens": stats.packed_tokens, "remainder_tokens": stats.remainder_tokens},
        "total_mix_tokens": total_mix_tokens,
        "basis_total_mix_tokens": basis_total,
        # The corpus's own count (py4 corpus generate counts with the same DocumentEncoder);
        # equal when the tokenizer and separators are the same. Recorded, not enforced.
        "corpus_manifest_tokens": inputs.get("corpus", {}).get("manifest_tokens"),
        "corpus_tokens_match_manifest": (inputs.get("corpus", {}).get("manifest_tokens") == corpus["basis_tokens"]
                                         if "corpus" in inputs else None),
        "shuffle": {"algorithm": "numpy.random.default_rng(seed).permutation(n_entries); entries = corpus "
                                 "copies (e -> doc e mod D, copy e div D) then replay docs", "seed": config.seed},
        "replay_sample": streams["replay_sample"],
        "packing": _packing_record(config),
        "content_sha256": digest,
        "expected": {"total_mix_tokens": config.expected_total_mix_tokens, "max_steps": config.expected_max_steps},
    }


def _packing_record(config: MixConfig) -> dict[str, Any]:
    separators = "+".join([*(["BOS"] if config.add_bos else []), "text", *(["EOS"] if config.add_eos else [])])
    if config.documents == "apart":
        positions = "restart at 0 at every document and at every row"
        attention = "within a document only (block-causal from the restarting position ids)"
    else:
        positions = "0..seq_len-1 per row"
        attention = "causal over the whole row, across document boundaries"
    return {"documents": config.documents, "labels": "all tokens supervised", "position_ids": positions,
            "attention": attention, "separators": f"{separators} per document"}


def run_mix(config: MixConfig) -> dict[str, Any]:
    """Build the mix and write the packed dataset, ``manifest.json`` and ``step_schedule.json``.

    Returns the data manifest. Raises DataError on bad inputs (missing corpus manifest,
    malformed shard line, a replay source too small for the target) and ValueError when
    an ``expected_*`` campaign record is not reproduced.
    """
    out = Path(config.out_dir)
    work = out / ".work-tokens"
    started = time.monotonic()
    with RunRecorder(out, config, kind="data.mix") as run:
        tokenizer = load_tokenizer(config.tokenizer, config.tokenizer_revision)
        encoder = DocumentEncoder(tokenizer, add_bos=config.add_bos, add_eos=config.add_eos)
        basis = None
        if config.count_tokenizer is not None:
            basis = DocumentEncoder(load_tokenizer(config.count_tokenizer, config.count_tokenizer_revision),
                                    add_bos=config.add_bos, add_eos=config.add_eos)
        inputs: dict[str, Any] = {"replay": describe_source(config.replay)}
        if config.arm == "corpus":
            inputs["corpus"] = _corpus_input(config.corpus)
        streams = _tokenize_inputs(config, encoder, basis, work)
        stats, digest, entries = _pack_mix(config, streams, out)
        if not config.keep_work:
            shutil.rmtree(work, ignore_errors=True)
        manifest = _mix_manifest(config, tokenizer, encoder, inputs, streams, stats, digest, entries)
        manifest["seconds"] = round(time.monotonic() - started, 3)
        total = manifest["total_mix_tokens"]
        schedule = write_outputs(out, manifest, config.schedule, config.seq_len, total, config.expected_max_steps)
        if config.expected_total_mix_tokens is not None and total != config.expected_total_mix_tokens:
            raise DataError(f"total_mix_tokens {total} differs from the expected {config.expected_total_mix_tokens}")
        for name, entry in inputs.items():
            run.add_input(name, path=entry.get("path"), hub_id=entry.get("hub_id"), revision=entry.get("revision"),
                          hash_content=False, details=entry)
        run.add_output("packed", out, hash_content=False, content_sha256=digest, rows=stats.blocks)
        run.set(total_mix_tokens=total, schedule=schedule.to_json() if schedule else None)
    return manifest
