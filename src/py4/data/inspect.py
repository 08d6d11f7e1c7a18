"""``py4 data inspect``: decode a packed row and show which tokens are supervised.

Like ``axolotl preprocess --debug``: the row is split into segments where
``position_ids`` restart (one per document, conversation piece, or padding); each
segment is decoded with supervised runs wrapped in ``[[`` ``]]`` (and shown green on a
terminal), followed by optional per-token lines ``index id label position token``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from rich.text import Text

from py4.data.packed_io import IGNORE_INDEX, load_packed, read_data_manifest
from py4.data.tokens import DataError, load_tokenizer

__all__ = ["inspect_packed_row", "segments_of", "OPEN", "CLOSE"]

OPEN, CLOSE = "[[", "]]"


def segments_of(position_ids: np.ndarray) -> list[tuple[int, int]]:
    """(start, end) of each run where position ids count up from a restart at 0."""
    starts = [0] + [i for i in range(1, len(position_ids)) if position_ids[i] <= position_ids[i - 1]]
    ends = starts[1:] + [len(position_ids)]
    return list(zip(starts, ends, strict=True))


def _runs(mask: np.ndarray) -> list[tuple[int, int, bool]]:
    runs, start = [], 0
    for i in range(1, len(mask) + 1):
        if i == len(mask) or mask[i] != mask[start]:
            runs.append((start, i, bool(mask[start])))
            start = i
    return runs


def _tokenizer_for(dataset_dir: Path, name: str | None, revision: str | None) -> Any:
    if name is None:
        manifest = read_data_manifest(dataset_dir)
        info = manifest.get("tokenizer") or {}
        name, revision = info.get("name"), info.get("revision")
        if not name:
            raise DataError(f"{dataset_dir}: manifest.json names no tokenizer; pass one")
    return load_tokenizer(name, revision)


def inspect_packed_row(dataset_dir: str | Path, index: int = 0, *, tokenizer: Any = None,
                       tokenizer_name: str | None = None, tokenizer_revision: str | None = None,
                       max_tokens: int | None = None, show_tokens: bool = False) -> Text:
    """A rich Text describing one packed row (``.plain`` for plain text).

    Raises DataError when the folder is not a packed dataset or ``index`` is out of range.
    """
    dataset_dir = Path(dataset_dir)
    dataset = load_packed(dataset_dir)
    if not 0 <= index < len(dataset):
        raise DataError(f"{dataset_dir}: row {index} out of range (0..{len(dataset) - 1})")
    if tokenizer is None:
        tokenizer = _tokenizer_for(dataset_dir, tokenizer_name, tokenizer_revision)
    row = dataset[index]
    ids = np.asarray(row["input_ids"], dtype=np.int64)
    labels = np.asarray(row["labels"], dtype=np.int64)
    positions = np.asarray(row["position_ids"], dtype=np.int64)
    mismatched = int(((labels != IGNORE_INDEX) & (labels != ids)).sum())
    limit = len(ids) if max_tokens is None else min(max_tokens, len(ids))
    supervised = labels != IGNORE_INDEX
    out = Text()
    out.append(f"row {index} of {len(dataset)}: {len(ids)} tokens, {int(supervised.sum())} supervised, "
               f"{len(segments_of(positions))} segment(s)", style="bold")
    if mismatched:
        out.append(f"  WARNING: {mismatched} labels differ from input_ids", style="bold red")
    out.append(f"\nsupervised text is shown as {OPEN}...{CLOSE}\n")
    for number, (start, end) in enumerate(segments_of(positions)):
        if start >= limit:
            out.append(f"... ({len(ids) - limit} more tokens)\n", style="dim")
            break
        end = min(end, limit)
        seg_supervised = int(supervised[start:end].sum())
        out.append(f"\n--- segment {number}: tokens {start}..{end - 1}, {seg_supervised} supervised ---\n",
                   style="cyan")
        for a, b, is_supervised in _runs(supervised[start:end]):
            text = tokenizer.decode(ids[start + a:start + b].tolist(), skip_special_tokens=False)
            if is_supervised:
                out.append(OPEN + text + CLOSE, style="bold green")
            else:
                out.append(text, style="dim")
        out.append("\n")
    if show_tokens:
        out.append(f"\n{'index':>6} {'id':>7} {'label':>7} {'pos':>6}  token\n", style="bold")
        for i in range(limit):
            token = tokenizer.convert_ids_to_tokens(int(ids[i]))
            out.append(f"{i:>6} {ids[i]:>7} {labels[i]:>7} {positions[i]:>6}  {token!r}\n",
                       style="green" if supervised[i] else None)
    return out
