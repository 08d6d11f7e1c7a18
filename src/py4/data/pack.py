"""``py4 data pack``: packing without mixing.

- ``format: chat`` (SFT): an instruction source (Hub id + revision, or a local folder in
  the same format), filtered, rendered with the chat template and packed with
  assistant-only labels (:mod:`py4.data.pack_chat`). The schedule's token total is the
  packed rows x ``seq_len`` (each row is one sequence slot of a step).
- ``format: text``: text sources packed in order into ``seq_len`` blocks, every token
  supervised (the midtraining packing without a corpus or shuffle).
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

from py4.data.configs import PackConfig
from py4.data.instructions import load_instruction_source
from py4.data.outputs import write_outputs
from py4.data.pack_chat import ChatPackStats, FirstFitPacker, check_chat_template, fit_conversation
from py4.data.pack_text import BlockPacker
from py4.data.packed_io import PackedDatasetWriter
from py4.data.progress import progress_bar
from py4.data.render_pool import rendered_batches
from py4.data.sources import describe_source, iter_text_source
from py4.data.tokens import DataError, DocumentEncoder, batched, encode_documents, load_tokenizer
from py4.runs import RunRecorder

__all__ = ["run_pack", "pack_chat_source", "pack_text_sources"]


def pack_chat_source(config: PackConfig, tokenizer: Any, writer: PackedDatasetWriter) -> dict[str, Any]:
    """Pack the configured instruction source into ``writer``; return the counts."""
    template = check_chat_template(tokenizer, config.chat_template_family)  # the family's training template if needed
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    if pad_id is None and config.pad_to_seq_len:
        raise DataError("the tokenizer has neither a pad nor an EOS token to pad packed rows with")
    source = load_instruction_source(config.instructions)
    stats = ChatPackStats()
    packer = FirstFitPacker(config.seq_len, writer, stats, pad_id=pad_id, pad_to_seq_len=config.pad_to_seq_len,
                            open_bins=config.open_bins)
    template_kwargs = dict(config.chat_template_kwargs)
    stopped_at_limit = False
    batches = rendered_batches(batched(source, config.render_batch), tokenizer, template_kwargs, config.num_proc)
    with progress_bar("rendering + packing", unit="conversations") as advance:
        for chunk, rendered in batches:
            for conversation, whole in zip(chunk, rendered, strict=True):
                for piece in fit_conversation(tokenizer, conversation, whole, config.seq_len,
                                              config.long_conversations, stats, template_kwargs):
                    packer.add(piece)  # writes at most one row
                if config.max_sequences is not None and stats.rows >= config.max_sequences:
                    stopped_at_limit = True
                    break
            advance(len(chunk))
            if stopped_at_limit:
                batches.close()  # stops the workers
                break
    unwritten = packer.finish(config.max_sequences)
    if stats.rows == 0:
        raise DataError(f"no packed rows: the source gave {source.rows_kept} usable conversations")
    counts = {k: v for k, v in vars(stats).items() if k != "reasons"}
    counts["pieces_unwritten_at_max_sequences"] = unwritten
    counts["stopped_at_max_sequences"] = stopped_at_limit
    return {"source": source.stats, "counts": counts, "training_template": template}


def pack_text_sources(config: PackConfig, tokenizer: Any, writer: PackedDatasetWriter) -> dict[str, Any]:
    """Pack the configured text sources, in order, into ``seq_len`` blocks."""
    encoder = DocumentEncoder(tokenizer, add_bos=config.add_bos, add_eos=config.add_eos)
    packer = BlockPacker(config.seq_len, writer, max_blocks=config.max_sequences)
    docs = 0
    def documents():
        for spec in config.text:
            for _, tokens, _ in encode_documents(iter_text_source(spec), encoder, config.render_batch):
                yield tokens

    with progress_bar("tokenizing + packing") as advance:
        for tokens in documents():
            packer.add(tokens)
            docs += 1
            advance(len(tokens))
            if packer.full:
                break
    stats = packer.finish()
    if stats.blocks == 0:
        raise DataError(f"no packed rows: {stats.tokens_in} tokens are less than one sequence of {config.seq_len}")
    return {"separators": encoder.describe(),
            "counts": {"docs": docs, "tokens_in": stats.tokens_in, "sequences": stats.blocks,
                       "packed_tokens": stats.packed_tokens, "remainder_tokens": stats.remainder_tokens,
                       "tokens_beyond_max_sequences": stats.tokens_beyond_max_blocks}}


def _check_expected_rows(config: PackConfig, result: dict[str, Any]) -> None:
    """Compare the filter's counts with the campaign's record when the whole source was read."""
    read_whole = not result["counts"]["stopped_at_max_sequences"] and config.instructions.max_rows is None
    for key, expected in (("rows_total", config.expected_rows_total), ("rows_kept", config.expected_rows_kept)):
        if read_whole and expected is not None and result["source"][key] != expected:
            raise DataError(f"{key} {result['source'][key]} differs from the expected {expected}")


def run_pack(config: PackConfig) -> dict[str, Any]:
    """Pack and write the dataset, ``manifest.json`` and (when configured) ``step_schedule.json``.

    Returns the data manifest. Raises DataError on bad inputs or a template without
    generation markers, ValueError when an ``expected_*`` campaign record is not met.
    """
    out = Path(config.out_dir)
    started = time.monotonic()
    with RunRecorder(out, config, kind="data.pack") as run:
        tokenizer = load_tokenizer(config.tokenizer, config.tokenizer_revision)
        if config.chat_template is not None:
            try:
                tokenizer.chat_template = Path(config.chat_template).read_text(encoding="utf-8")
            except OSError as exc:
                raise DataError(f"chat_template {config.chat_template}: cannot read: {exc}") from None
        writer = PackedDatasetWriter(out)
        try:
            if config.format == "chat":
                result = pack_chat_source(config, tokenizer, writer)
                inputs = {"instructions": describe_source(config.instructions)}
            else:
                result = pack_text_sources(config, tokenizer, writer)
                inputs = {f"text_{i}": describe_source(s) for i, s in enumerate(config.text)}
            digest = writer.finish()
        except BaseException:
            writer.abort()
            raise
        if config.format == "chat":
            _check_expected_rows(config, result)
        rows = writer.rows
        schedule_tokens = rows * config.seq_len if (config.format == "text" or config.pad_to_seq_len) else writer.tokens
        manifest = {
            "kind": "sft_pack" if config.format == "chat" else "text_pack", "seq_len": config.seq_len,
            "tokenizer": {"name": config.tokenizer, "revision": config.tokenizer_revision,
                          "class": type(tokenizer).__name__, "vocab_size": len(tokenizer),
                          "chat_template": config.chat_template,
                          "chat_template_sha256": hashlib.sha256(str(tokenizer.chat_template).encode()).hexdigest()},
            "inputs": inputs, **result, "rows": rows, "row_tokens": writer.tokens,
            "total_tokens": schedule_tokens, "content_sha256": digest,
            "expected": {"rows_total": config.expected_rows_total, "rows_kept": config.expected_rows_kept,
                         "max_steps": config.expected_max_steps},
            "seconds": round(time.monotonic() - started, 3),
        }
        if config.format == "chat":
            manifest["packing"] = {"labels": "assistant tokens only (chat template generation blocks)",
                                   "position_ids": "restart at 0 for every conversation piece and for padding",
                                   "long_conversations": config.long_conversations, "open_bins": config.open_bins,
                                   "pad_to_seq_len": config.pad_to_seq_len}
        schedule = write_outputs(out, manifest, config.schedule, config.seq_len, schedule_tokens,
                                 config.expected_max_steps)
        for name, entry in inputs.items():
            run.add_input(name, path=entry.get("path"), hub_id=entry.get("hub_id"), revision=entry.get("revision"),
                          hash_content=False, details=entry)
        run.add_output("packed", out, hash_content=False, content_sha256=digest, rows=rows)
        run.set(rows=rows, schedule=schedule.to_json() if schedule else None)
    return manifest
