"""Dataset folders in the Hub's layout: what `datasets.load_dataset(folder)` and the Hub's card
parser read back, and the refusals that keep an export from clobbering other files."""

from __future__ import annotations

import json

import pytest

from py4.hub.dataset_folder import DatasetCard, DatasetExportError, write_dataset


def _card(**fields) -> DatasetCard:
    return DatasetCard(pretty_name="t", summary="s", license="apache-2.0", how_made={"command": "x"}, **fields)


def test_splits_load_back_with_datasets_and_the_card_parses(tmp_path):
    from datasets import load_dataset
    from huggingface_hub import DatasetCard as HubCard

    rows = {"train": [{"id": "a", "tests": [{"args": [1, "x"]}]}, {"id": "b", "tests": [{"args": ["y"]}]}],
            "test_heldout": [{"id": "c", "tests": []}]}
    summary = write_dataset(tmp_path / "ds", rows, _card(json_columns=["tests"], guarantees=["no probes"]))
    assert summary["rows"] == {"train": 2, "test_heldout": 1}
    loaded = load_dataset(str(tmp_path / "ds"))
    assert sorted(loaded) == ["test_heldout", "train"]
    assert [json.loads(t) for t in loaded["train"]["tests"]] == [r["tests"] for r in rows["train"]]
    card = HubCard.load(tmp_path / "ds" / "README.md")
    assert card.data.license == "apache-2.0"
    assert card.data.py4["content_sha256"] == summary["content_sha256"]
    assert [f["split"] for f in card.data.configs[0]["data_files"]] == ["train", "test_heldout"]
    assert "no probes" in card.text


def test_the_card_states_the_features_and_split_sizes_datasets_reads(tmp_path):
    """The card's ``dataset_info``, parsed as the Hub and ``datasets`` parse it, is the schema every
    split loads with: a column null throughout one split takes the type it has in another."""
    from datasets import load_dataset
    from datasets.info import DatasetInfosDict
    from huggingface_hub import DatasetCard as HubCard

    rows = {"train": [{"id": "a", "score": 0.5, "rules": ["P4-01"], "note": "x"}, {"id": "b", "score": 1.0,
                                                                                  "rules": [], "note": None}],
            "test": [{"id": "c", "score": 2.0, "rules": ["P4-02", "P4-03"], "note": None}]}
    write_dataset(tmp_path / "ds", rows, _card())
    card = HubCard.load(tmp_path / "ds" / "README.md")
    info = DatasetInfosDict.from_dataset_card_data(card.data)["default"]
    loaded = load_dataset(str(tmp_path / "ds"))
    assert {name: str(feature) for name, feature in info.features.items()} == {
        "id": "Value('string')", "score": "Value('float64')", "rules": "List(Value('string'))",
        "note": "Value('string')"}
    assert all(loaded[split].features == info.features for split in rows)
    assert {s.name: s.num_examples for s in info.splits.values()} == {"train": 2, "test": 1}
    assert info.download_size == sum(p.stat().st_size for p in (tmp_path / "ds" / "data").iterdir())


def test_the_content_hash_follows_the_rows(tmp_path):
    first = write_dataset(tmp_path / "a", {"train": [{"x": 1}]}, _card())
    second = write_dataset(tmp_path / "b", {"train": [{"x": 2}]}, _card())
    again = write_dataset(tmp_path / "c", {"train": [{"x": 1}]}, _card())
    assert first["content_sha256"] != second["content_sha256"]
    assert first["content_sha256"] == again["content_sha256"]


def test_a_folder_with_other_files_is_refused_unless_forced(tmp_path):
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "notes.txt").write_text("mine")
    with pytest.raises(DatasetExportError, match="notes.txt.*--force"):
        write_dataset(tmp_path / "ds", {"train": [{"x": 1}]}, _card())
    write_dataset(tmp_path / "ds", {"train": [{"x": 1}]}, _card(), force=True)
    assert (tmp_path / "ds" / "notes.txt").read_text() == "mine"
    write_dataset(tmp_path / "ds2", {"train": [{"x": 1}]}, _card())
    write_dataset(tmp_path / "ds2", {"train": [{"x": 2}]}, _card())  # a previous export is ours to replace


def test_an_empty_split_and_a_bad_split_name_are_refused(tmp_path):
    with pytest.raises(DatasetExportError, match="no rows"):
        write_dataset(tmp_path / "a", {"train": []}, _card())
    with pytest.raises(DatasetExportError, match="letters, digits"):
        write_dataset(tmp_path / "b", {"test-heldout": [{"x": 1}]}, _card())
