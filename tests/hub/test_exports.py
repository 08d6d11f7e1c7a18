"""The bank and the probe set exported as Hub datasets: real splits, every row, and a card that
states the content hash, the canary and the no-probe-text guarantee."""

from __future__ import annotations

import json
from collections import Counter

import pytest


@pytest.fixture(scope="module")
def bank_folder(tmp_path_factory):
    from py4.problems.export import export_bank

    out = tmp_path_factory.mktemp("bank") / "dataset"
    return out, export_bank(out)


def test_the_bank_loads_back_split_by_split_with_its_tests_intact(bank_folder):
    from datasets import load_dataset

    from py4.problems.bank import load_bank
    from py4.problems.schema import Problem

    out, summary = bank_folder
    problems = load_bank()
    assert summary["rows"] == dict(Counter(p.split for p in problems))
    loaded = load_dataset(str(out))
    assert {split: len(rows) for split, rows in loaded.items()} == summary["rows"]
    row = loaded["test_heldout"][0]
    original = next(p for p in problems if p.id == row["id"])
    back = Problem.model_validate({**row, "tests": json.loads(row["tests"]),
                                   "provenance": json.loads(row["provenance"])})
    assert back == original


def test_the_bank_card_states_hash_canary_and_no_probe_text(bank_folder):
    from huggingface_hub import DatasetCard

    from py4.problems.schema import CANARY

    out, summary = bank_folder
    card = DatasetCard.load(out / "README.md")
    assert card.data.py4["canary"] == CANARY and card.data.py4["content_sha256"] == summary["content_sha256"]
    assert "rule probe" in card.text and "bank_leaks" in card.text


def test_the_probe_set_exports_as_one_test_split(tmp_path):
    from datasets import load_dataset

    from py4.problems.probe_set.build import load_probes
    from py4.probes.export import export_probes

    summary = export_probes(tmp_path / "probes")
    records = load_probes()
    loaded = load_dataset(str(tmp_path / "probes"))
    assert summary["rows"] == {"test": len(records)} and len(loaded["test"]) == len(records)
    assert json.loads(loaded["test"][0]["check"]) == records[0]["check"]


def test_a_bank_that_holds_probe_text_is_not_exported(tmp_path, monkeypatch):
    import py4.problems.probe_set.verify as verify
    from py4.hub.dataset_folder import DatasetExportError
    from py4.problems.export import export_bank

    monkeypatch.setattr(verify, "bank_leaks", lambda problems: {"generated/x": ["P4-01/00/bare"]})
    with pytest.raises(DatasetExportError, match="rule-probe text"):
        export_bank(tmp_path / "out")
    assert not (tmp_path / "out").exists()
