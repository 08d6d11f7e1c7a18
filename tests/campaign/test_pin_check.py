"""The login node's check of the pinned models (`py4.campaign.pin_check`) on a Hugging Face cache laid
out as huggingface_hub lays it out: a sharded checkpoint needs every shard its index names, a folder
the campaign names by path is no Hub reference; the tokenizers the stage configs name and, offline,
the streamed datasets are checked too. (The whole check before a real Slurm submission:
tests/campaign/test_slurm_cluster.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from py4.campaign.pin_check import model_missing
from py4.campaign.spec import HubPin
from py4.rehearsal.hub_cache import install_snapshot


def _sharded(folder: Path, shards: list[str], present: list[str]) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    index = {"metadata": {}, "weight_map": {f"layer.{i}.weight": s for i, s in enumerate(shards)}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    for name in present:
        (folder / name).write_bytes(b"weights")
    return folder


def test_a_sharded_checkpoint_needs_every_shard_its_index_names(tmp_path):
    cache = tmp_path / "hub"
    shards = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    install_snapshot(cache, "org/half", "1234abcd", _sharded(tmp_path / "half", shards, shards[:1]))
    install_snapshot(cache, "org/whole", "1234abcd", _sharded(tmp_path / "whole", shards, shards))
    said = model_missing(HubPin(hub_id="org/half", revision="1234abcd"), cache)
    assert said is not None and said.startswith(f"1 of its 2 weight files are not in the Hugging Face cache "
                                                f"(first: {shards[1]})")
    assert model_missing(HubPin(hub_id="org/whole", revision="1234abcd"), cache) is None
    assert "not in the Hugging Face cache" in (model_missing(HubPin(hub_id="org/whole", revision="0badc0de"), cache)
                                               or "")
    assert "no revision" in (model_missing(HubPin(hub_id="org/whole"), cache) or "")


def test_a_folder_is_not_a_hub_reference(tmp_path):
    from py4.config import is_hub_id

    (tmp_path / "model").mkdir()
    assert not is_hub_id("{out}/assets/base")
    assert not is_hub_id(str(tmp_path / "model"))
    assert not is_hub_id("campaign-out/smoke/assets/base")
    assert is_hub_id("google/gemma-4-12b")
    assert is_hub_id("zai-org/GLM-4.5-Air") and is_hub_id("unsloth/gemma-3-12b-pt")
    for not_an_id in ("owner/na me", "owner/name/extra", "-owner/name", "owner/", "/name", "owner"):
        assert not is_hub_id(not_an_id), not_an_id


def test_an_unreadable_weight_index_is_one_line_naming_the_file(tmp_path):
    """The index is read by the one reader of weight indexes (`py4.fileio.read_weight_map`)."""
    cache = tmp_path / "hub"
    folder = _sharded(tmp_path / "bad", ["model-00001-of-00001.safetensors"], [])
    (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {"lm_head.weight": ["a", "b"]}}))
    snapshot = install_snapshot(cache, "org/bad", "1234abcd", folder)
    said = model_missing(HubPin(hub_id="org/bad", revision="1234abcd"), cache) or ""
    assert said.startswith("its model.safetensors.index.json in the cache is unreadable")
    assert f"{snapshot / 'model.safetensors.index.json'}: weight_map: expected a mapping of tensor names" in said


ROOT = Path(__file__).resolve().parents[2]
CAMPAIGN = ROOT / "configs/campaign/python4.yaml"


def _folder(path: Path, files: dict[str, bytes]) -> Path:
    path.mkdir(parents=True)
    for name, data in files.items():
        (path / name).write_bytes(data)
    return path


@pytest.mark.timeout(900)  # two `py4 campaign run` processes, each building the campaign's DAG (~25 s idle)
def test_the_login_node_checks_the_stage_configs_tokenizers_and_the_streamed_datasets(tmp_path):
    """`py4 campaign run python4.yaml --backend slurm --dry-run` in an offline shell: with every pinned
    model in the cache, a tokenizer only a stage config names (the corpus's count tokenizer) missing,
    another without its vocabulary file, and the SFT data (Dolci) not prepared in the datasets cache,
    one line names those three and nothing is submitted; with them added, the dry run goes on."""
    from py4.campaign.spec import load_campaign
    from py4.rehearsal.assets import campaign_hub_refs
    from py4.rehearsal.datasets import DOLCI_ID, DOLMINO_ID, dolci_rows, dolmino_rows, install_dataset

    spec = load_campaign(CAMPAIGN)
    hub, prepared = tmp_path / "hub", tmp_path / "datasets"
    model = _folder(tmp_path / "model", {"config.json": b"{}", "model.safetensors": b"weights",
                                         "tokenizer_config.json": b"{}", "tokenizer.json": b"{}"})
    tokenizer = _folder(tmp_path / "tokenizer", {"tokenizer_config.json": b"{}", "tokenizer.json": b"{}"})
    config_only = _folder(tmp_path / "config_only", {"tokenizer_config.json": b"{}"})
    pins = {(pin.hub_id, pin.revision) for m in spec.models.values() for pin in (m.base, m.it, m.it_base)}
    for repo, revision in pins:
        install_snapshot(hub, repo, revision, model)
    refs = {(ref.repo_id, ref.revision) for ref in campaign_hub_refs(spec)} - pins  # named by a stage config only
    absent, partial = ("unsloth/gemma-3-12b-pt", "54ba4a26"), ("google/gemma-4-12b-it", "707f0a3b")
    assert {absent, partial} <= refs
    for repo, revision in refs - {absent, partial}:
        install_snapshot(hub, repo, revision, tokenizer)
    install_snapshot(hub, *partial, config_only)
    install_dataset(prepared, DOLMINO_ID, spec.replay.revision, dolmino_rows(4))
    env = {**os.environ, "HF_HUB_CACHE": str(hub), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "HF_DATASETS_CACHE": str(prepared), "HF_HOME": str(tmp_path / "hf")}

    def dry_run():
        py4 = str(Path(sys.executable).parent / "py4")
        return subprocess.run([py4, "campaign", "run", str(CAMPAIGN), "--backend", "slurm", "--dry-run",
                               "--out", str(tmp_path / "out")], capture_output=True, text=True, env=env, cwd=ROOT,
                              timeout=600)

    refused = dry_run()
    assert refused.returncode == 2 and "sbatch" not in refused.stdout, refused.stdout + refused.stderr
    [line] = [x for x in refused.stderr.splitlines() if x.startswith("error: ")]
    problems = line.removeprefix("error: ").split("; ")
    assert len(problems) == 3, problems
    assert any(p.startswith("corpus: tokenizer.name_or_path of configs/corpus/") and f"({absent[0]}@{absent[1]}): "
               "its tokenizer_config.json is not in the Hugging Face cache" in p for p in problems), problems
    assert any(f"({partial[0]}@{partial[1]}): its tokenizer_config.json is in the Hugging Face cache but neither "
               "tokenizer.json nor tokenizer.model" in p for p in problems), problems
    assert any("instructions.hub_id of configs/data/campaign/" in p and f"({DOLCI_ID}@{spec.sft_data.revision}): "
               "streamed, and this shell is offline" in p for p in problems), problems

    install_snapshot(hub, *absent, tokenizer)
    install_snapshot(hub, *partial, tokenizer)
    install_dataset(prepared, DOLCI_ID, spec.sft_data.revision, dolci_rows(4, 1))
    submitted = dry_run()
    assert submitted.returncode == 0, submitted.stderr
    assert "sbatch" in submitted.stdout
