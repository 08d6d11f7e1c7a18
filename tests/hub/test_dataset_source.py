"""The campaign takes the bank or the probe set by Hub id + revision: the exported folder laid
out in a Hugging Face cache as the Hub client lays it out (``datasets--ORG--NAME/snapshots/
<commit>/``, ``refs/<pin>``), found offline, read back as the very records that were exported.
(The corpus: tests/corpus/test_generate.py, beside its fixture.)"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from py4.campaign.dataset_pins import check_dataset_pins, dataset_folders
from py4.campaign.spec import load_campaign
from py4.config import ConfigError
from py4.hub.dataset_source import DatasetSourceError, pinned_dataset_folder, read_dataset
from py4.rehearsal.hub_cache import install_snapshot

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "configs/campaign/smoke.yaml"
BANK_PIN = ("arcadia-impact/python4-bank", "dd6e3370")
PROBES_PIN = ("arcadia-impact/python4-probes", "582a1a2f")


@pytest.fixture(scope="module")
def hub_cache(tmp_path_factory):
    """A Hugging Face cache holding the exported bank and probe set at their pins."""
    from py4.probes.export import export_probes
    from py4.problems.export import export_bank

    tmp = tmp_path_factory.mktemp("hub")
    export_bank(tmp / "bank")
    export_probes(tmp / "probes")
    cache = tmp / "cache"
    install_snapshot(cache, *BANK_PIN, tmp / "bank", repo_type="dataset")
    install_snapshot(cache, *PROBES_PIN, tmp / "probes", repo_type="dataset")
    return cache


def _spec(tmp_path, *overrides):
    return load_campaign(SMOKE, [f"out_dir={tmp_path}/out", *overrides])


def _pins(bank=BANK_PIN, probes=PROBES_PIN):
    return [f"datasets.bank={{hub_id: {bank[0]}, revision: {bank[1]}}}",
            f"datasets.probes={{hub_id: {probes[0]}, revision: {probes[1]}}}"]


@pytest.fixture(autouse=True)
def _at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_pinned_bank_and_probes_are_found_offline_and_read_back_as_exported(hub_cache, tmp_path):
    from py4.problems.probe_set.build import load_probes
    from py4.probes.export import probes_from_dataset
    from py4.problems.bank import load_bank
    from py4.problems.export import bank_from_dataset

    spec = _spec(tmp_path, *_pins())
    assert check_dataset_pins(spec, hub_cache) == []
    folders = dataset_folders(spec, hub_cache)
    # the snapshot the Hub client resolves the short pin to, through refs/<pin>
    assert folders["bank"].parent.name == "snapshots" and folders["bank"].name.startswith(BANK_PIN[1])
    assert folders["bank"].parent.parent.name == "datasets--arcadia-impact--python4-bank"
    version, problems = bank_from_dataset(folders["bank"])
    assert version == "v1" and problems == load_bank()  # tests and provenance decoded from JSON text
    assert probes_from_dataset(folders["probes"]) == load_probes()  # check decoded


def test_the_bank_of_a_pinned_dataset_installs_as_the_shipped_bank_byte_for_byte(hub_cache, tmp_path):
    from py4.problems.bank import bank_paths, load_bank, load_manifest
    from py4.problems.export import install_bank

    folder = pinned_dataset_folder(*BANK_PIN, hub_cache)
    bank_file = install_bank(folder, tmp_path / "bank")
    shipped_file, _ = bank_paths("v1")
    assert gzip.decompress(bank_file.read_bytes()) == gzip.decompress(shipped_file.read_bytes())
    assert load_manifest("v1", tmp_path / "bank")["jsonl_sha256"] == load_manifest("v1")["jsonl_sha256"]
    assert load_bank("v1", tmp_path / "bank") == load_bank()  # what a stage's bank_dir reads


def test_an_unpinned_dataset_is_refused_when_the_spec_loads(tmp_path):
    with pytest.raises(ConfigError) as err:
        _spec(tmp_path, "datasets.bank={hub_id: arcadia-impact/python4-bank}")
    assert "datasets.bank" in str(err.value) and "no revision" in str(err.value) and "smoke.yaml" in str(err.value)
    with pytest.raises(ConfigError, match="datasets.corpus"):
        _spec(tmp_path, "datasets.corpus={hub_id: arcadia-impact/python4-synthdoc, revision: null}")


def test_a_pin_the_cache_does_not_hold_is_named(hub_cache, tmp_path):
    spec = _spec(tmp_path, *_pins(bank=(BANK_PIN[0], "0badc0de"), probes=("arcadia-impact/nothing", "582a1a2f")))
    problems = check_dataset_pins(spec, hub_cache)
    assert len(problems) == 2
    assert problems[0].startswith(f"datasets.bank ({BANK_PIN[0]}@0badc0de): ")
    assert "not in the Hugging Face cache" in problems[0]
    assert problems[1].startswith("datasets.probes (arcadia-impact/nothing@582a1a2f): ")


def test_a_dataset_of_the_wrong_kind_is_named(hub_cache, tmp_path):
    spec = _spec(tmp_path, *_pins(bank=PROBES_PIN, probes=BANK_PIN))
    problems = check_dataset_pins(spec, hub_cache)
    assert "not a bank export" in problems[0] and "not a probe-set export" in problems[1]


def test_a_folder_whose_shards_are_not_its_cards_is_refused(tmp_path):
    from py4.probes.export import export_probes

    export_probes(tmp_path / "probes")
    assert read_dataset(tmp_path / "probes").splits["test"]
    shard = next((tmp_path / "probes" / "data").glob("test-*.jsonl"))
    lines = shard.read_text().splitlines()
    row = json.loads(lines[0])
    row["p4"] = row["p4"] + " "
    shard.write_text("\n".join([json.dumps(row, sort_keys=True, ensure_ascii=False), *lines[1:]]) + "\n")
    with pytest.raises(DatasetSourceError, match="not the export its card describes"):
        read_dataset(tmp_path / "probes")


def test_campaign_plan_checks_the_pins_in_the_hf_cache(hub_cache, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from py4.cli import app

    monkeypatch.setenv("HF_HUB_CACHE", str(hub_cache))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(hub_cache))

    def plan(*pins):
        return CliRunner().invoke(app, ["campaign", "plan", str(SMOKE), "--out", str(tmp_path / "out"), *pins])

    found = plan(*_pins())
    assert found.exit_code == 0, found.output
    missing = plan(*_pins(probes=(PROBES_PIN[0], "0badc0de")))
    assert missing.exit_code == 2
    assert f"datasets.probes ({PROBES_PIN[0]}@0badc0de)" in missing.output and "datasets.bank" not in missing.output
