"""Writing and reading packed datasets on disk, in bounded memory.

A packed dataset is what ``datasets.Dataset.save_to_disk`` writes, with int32 list
columns ``input_ids``, ``labels`` (-100 = not supervised) and ``position_ids``, plus the
pipeline's ``manifest.json`` next to it. Rows are appended in batches to Arrow shards in
``save_to_disk``'s own format and moved into place at the end, so memory holds one batch
at a time whatever the corpus size. The dataset's fingerprint is the SHA-256
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
    """Appends packed rows batch by batch, straight into ``save_to_disk``'s layout.

    Shards are written with ``datasets.arrow_writer.ArrowWriter`` (what ``save_to_disk``
    uses) as ``.work/shard-NNNNN.arrow`` and renamed to ``data-NNNNN-of-MMMMM.arrow`` by
    ``finish()``, which also writes ``state.json`` and ``dataset_info.json`` exactly as
    ``Dataset.save_to_disk`` does. No second copy of the data is ever made, and nothing
    is memory-mapped back, so memory stays at one batch.
    """

    def __init__(self, out_dir: str | Path, max_shard_bytes: int = 500 * 1024 * 1024):
        self.out_dir = Path(out_dir)
        self.work_dir = self.out_dir / ".work"
        shutil.rmtree(self.work_dir, ignore_errors=True)
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.max_shard_bytes = max_shard_bytes
        self._features = _features()
        self._schema = self._features.arrow_schema
        self._shards: list[Path] = []
        self._writer = None
        self._shard_bytes = 0
        self._hash = hashlib.sha256()
        self.rows = 0
        self.tokens = 0

    def _write(self, arrays: list[pa.Array], rows: int, tokens: int) -> None:
        from datasets.arrow_writer import ArrowWriter

        if self._writer is None or self._shard_bytes >= self.max_shard_bytes:
            self._close_shard()
            path = self.work_dir / f"shard-{len(self._shards):05d}.arrow"
            self._shards.append(path)
            self._writer = ArrowWriter(features=self._features, path=str(path))
            self._shard_bytes = 0
        table = pa.Table.from_arrays(arrays, schema=self._schema)
        self._writer.write_table(table)
        self._shard_bytes += table.nbytes
        self.rows += rows
        self.tokens += tokens

    def _close_shard(self) -> None:
        if self._writer is not None:
            self._writer.finalize()
            self._writer.close()
            self._writer = None

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
        self._write(arrays, len(rows), int(lengths.sum()))

    def write_blocks(self, input_ids: np.ndarray, labels: np.ndarray, position_ids: np.ndarray) -> None:
        """Append equal-length rows given as 2-D int32 arrays (rows x seq_len)."""
        n, length = input_ids.shape
        if n == 0:
            return
        offsets = pa.array(np.arange(0, n * length + 1, length, dtype=np.int32))
        arrays = []
        for name, block in zip(COLUMNS, (input_ids, labels, position_ids), strict=True):
            flat = np.ascontiguousarray(block, dtype=np.int32).reshape(-1)
            self._hash.update(name.encode())
            self._hash.update(flat.tobytes())
            arrays.append(pa.ListArray.from_arrays(offsets, pa.array(flat)))
        self._write(arrays, n, n * length)

    @property
    def content_sha256(self) -> str:
        return self._hash.hexdigest()

    def finish(self) -> str:
        """Move the shards into ``out_dir`` with ``save_to_disk``'s names and metadata;
        return the content hash (also the dataset's fingerprint, first 16 hex digits)."""
        import datasets

        self._close_shard()
        if not self._shards:  # an empty dataset still gets one (empty) shard
            from datasets.arrow_writer import ArrowWriter

            writer = ArrowWriter(features=self._features, path=str(self.work_dir / "shard-00000.arrow"))
            writer.finalize()
            writer.close()
            self._shards.append(self.work_dir / "shard-00000.arrow")
        for stale in self.out_dir.glob("data-*.arrow"):
            stale.unlink()
        total = len(self._shards)
        names = [f"data-{i:05d}-of-{total:05d}.arrow" for i in range(total)]
        for shard, name in zip(self._shards, names, strict=True):
            shard.replace(self.out_dir / name)
        digest = self.content_sha256
        # The same state and info files, written the same way, as Dataset.save_to_disk.
        state = {"_data_files": [{"filename": n} for n in names], "_fingerprint": digest[:16],
                 "_format_columns": None, "_format_kwargs": {}, "_format_type": None,
                 "_output_all_columns": False, "_split": None}
        (self.out_dir / datasets.config.DATASET_STATE_JSON_FILENAME).write_text(
            json.dumps(state, indent=2, sort_keys=True), encoding="utf-8")
        from datasets.utils.py_utils import asdict  # the helper save_to_disk uses

        info = asdict(datasets.DatasetInfo(features=self._features))
        (self.out_dir / datasets.config.DATASET_INFO_FILENAME).write_text(
            json.dumps({k: info[k] for k in sorted(info)}, indent=2), encoding="utf-8")
        shutil.rmtree(self.work_dir, ignore_errors=True)
        return digest

    def abort(self) -> None:
        try:
            self._close_shard()
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
    """A packed dataset's (or a mix's) ``manifest.json``; raises DataError naming the file (and
    the line of malformed JSON)."""
    from py4.data.tokens import DataError
    from py4.fileio import read_json_object

    file = Path(path)
    if file.is_dir():
        file = file / DATA_MANIFEST
    return read_json_object(file, missing="no data manifest (py4 data mix / py4 data pack writes it)",
                            error=DataError)
