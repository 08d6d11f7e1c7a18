"""The packed-dataset writer produces what Dataset.save_to_disk produces."""

from __future__ import annotations

import json

import datasets
import numpy as np

from py4.data.packed_io import PackedDatasetWriter, load_packed


def rows(n: int, length: int) -> list[dict]:
    return [{k: np.arange(i, i + length, dtype=np.int32) for k in ("input_ids", "labels", "position_ids")}
            for i in range(n)]


def test_layout_matches_save_to_disk(tmp_path):
    writer = PackedDatasetWriter(tmp_path / "ours", max_shard_bytes=200)  # force several shards
    writer.write_rows(rows(5, 7))
    writer.write_blocks(*(np.arange(24, dtype=np.int32).reshape(3, 8),) * 3)
    writer.write_rows(rows(2, 3))
    digest = writer.finish()
    ours = load_packed(tmp_path / "ours")
    assert len(list((tmp_path / "ours").glob("data-*-of-*.arrow"))) > 1
    assert not (tmp_path / "ours" / ".work").exists()

    reference = datasets.Dataset.from_list(ours.to_list(), features=ours.features)
    reference._fingerprint = digest[:16]  # the fingerprint we write (content hash)
    reference.save_to_disk(tmp_path / "ref", num_shards=len(ours.cache_files))
    assert ours.to_list() == load_packed(tmp_path / "ref").to_list()
    assert ours.features == reference.features
    for name in ("state.json", "dataset_info.json"):
        assert json.loads((tmp_path / "ours" / name).read_text()) == json.loads((tmp_path / "ref" / name).read_text())


def test_empty_dataset_loads(tmp_path):
    PackedDatasetWriter(tmp_path / "empty").finish()
    assert len(load_packed(tmp_path / "empty")) == 0
