"""The login node's check of the pinned models (`py4.campaign.pin_check`) on a Hugging Face cache laid
out as huggingface_hub lays it out: a sharded checkpoint needs every shard its index names, a folder
the campaign names by path is no Hub reference. (The whole check before a real Slurm submission:
tests/campaign/test_slurm_cluster.py.)"""

from __future__ import annotations

import json
from pathlib import Path

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
