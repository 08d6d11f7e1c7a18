"""Writing and reading packed datasets on disk, in bounded memory.

A packed dataset is what ``datasets.Dataset.save_to_disk`` writes, with int32 list
columns ``input_ids``, ``labels`` (-100 = not supervised) and ``position_ids``, plus the
pipeline's ``manifest.json`` next to it. Rows are appended in batches to an Arrow stream
file under ``<out>/.work/`` and saved with ``save_to_disk`` at the end, so memory holds
one batch at a time whatever the corpus size. The dataset's fingerprint is the SHA-256
of the token streams, so the same inputs and seed give byte-identical files.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

__all__ = ["COLUMNS", "PackedDatasetWriter", "load_packed", "read_data_manifest", "DATA_MANIFEST"]

COLUMNS = ("input_ids", "labels", "position_ids")
DATA_MANIFEST = "manifest.json"
IGNORE_INDEX = -100


def _features():
    import datasets

    return datasets.Features({name: datasets.List(datasets.Value("int32")) for name in COLUMNS})


class PackedDatasetWriter:
    """Appends packed rows batch by batch; ``finish()`` saves the dataset to ``out_dir``."""

    def __init__(self, out_dir: str | Path):
        self.out_dir = Path(out_dir)
        self.work_dir = self.out_dir / ".work"
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self._path = self.work_dir / "packed.arrow"
        schema = pa.schema([pa.field(name, pa.list_(pa.int32())) for name in COLUMNS])
        self._sink = pa.OSFile(str(self._path), "wb")
        self._writer = pa.ipc.new_stream(self._sink, schema)
        self._hash = hashlib.sha256()
        self.rows = 0
        self.tokens = 0

    def write_rows(self, rows: Sequence[dict[str, np.ndarray]]) -> None:
        """Append rows given as dicts of 1-D int32 arrays of equal length per row."""
        if not rows:
            return
        lengths = np.fromiter((len(r["input_ids"]) for r in rows), dtype=np.int64, count=len(rows))
        offsets = np.zeros(len(rows) + 1, dtype=np.int32)
        np.cumsum(lengths, out=offsets[1:])
        arrays = []
        for name in COLUMNS:
            values = np.concatenate([np.asarray(r[name], dtype=np.int32) for r in rows])
            self._hash.update(name.encode())
            self._hash.update(values.tobytes())
            arrays.append(pa.ListArray.from_arrays(pa.array(offsets), pa.array(values)))
        self._writer.write_batch(pa.RecordBatch.from_arrays(arrays, names=list(COLUMNS)))
        self.rows += len(rows)
        self.tokens += int(lengths.sum())

    def write_blocks(self, input_ids: np.ndarray, labels: np.ndarray, position_ids: np.ndarray) -> None:
        """Append equal-length rows given as 2-D int32 arrays (rows x seq_len)."""
        n, length = input_ids.shape
        if n == 0:
            return
        offsets = pa.array(np.arange(0, n * length + 1, length, dtype=np.int32))
        arrays = []
        for name, block in zip(COLUMNS, (input_ids, labels, position_ids)):
            flat = np.ascontiguousarray(block, dtype=np.int32).reshape(-1)
            self._hash.update(name.encode())
            self._hash.update(flat.tobytes())
            arrays.append(pa.ListArray.from_arrays(offsets, pa.array(flat)))
        self._writer.write_batch(pa.RecordBatch.from_arrays(arrays, names=list(COLUMNS)))
        self.rows += n
        self.tokens += n * length

    @property
    def content_sha256(self) -> str:
        return self._hash.hexdigest()

    def finish(self) -> str:
        """Save the dataset into ``out_dir`` (``save_to_disk`` layout); return its content hash."""
        import datasets
        from datasets.table import MemoryMappedTable

        self._writer.close()
        self._sink.close()
        table = MemoryMappedTable.from_file(str(self._path))
        digest = self.content_sha256
        dataset = datasets.Dataset(table, info=datasets.DatasetInfo(features=_features()), fingerprint=digest[:16])
        for stale in self.out_dir.glob("data-*.arrow"):
            stale.unlink()
        dataset.save_to_disk(str(self.out_dir))
        del dataset, table
        shutil.rmtree(self.work_dir, ignore_errors=True)
        return digest

    def abort(self) -> None:
        try:
            self._writer.close()
            self._sink.close()
        finally:
            shutil.rmtree(self.work_dir, ignore_errors=True)


def load_packed(path: str | Path) -> Any:
    """Load a packed dataset (memory-mapped); raises DataError if it lacks the packed columns."""
    import datasets

    from py4.data.tokens import DataError

    try:
        dataset = datasets.load_from_disk(str(path))
    except FileNotFoundError as exc:
        raise DataError(f"{path}: not a saved dataset ({exc})") from None
    missing = [c for c in COLUMNS if c not in dataset.column_names]
    if missing:
        raise DataError(f"{path}: missing packed column(s) {missing}; has {dataset.column_names}")
    return dataset


def read_data_manifest(path: str | Path) -> dict[str, Any]:
    """A packed dataset's (or a mix's) ``manifest.json``; raises DataError if unreadable."""
    from py4.data.tokens import DataError

    file = Path(path)
    if file.is_dir():
        file = file / DATA_MANIFEST
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise DataError(f"{file}: cannot read the data manifest: {exc}") from None
