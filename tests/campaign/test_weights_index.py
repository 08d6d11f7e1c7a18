"""WEIGHTS_INDEX.md: a graft's row has its content hash (the graft records
per-shard hashes, not outputs.model.sha256), and midtrain / graft rows name their external
parents (the pretrained base; the -it model and its base)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from py4.campaign.dag import build_dag
from py4.campaign.ledgers import weights_index
from py4.campaign.spec import load_campaign
from py4.runs import RunRecorder

ROOT = Path(__file__).resolve().parents[2]


def _row(text: str, run_id: str) -> list[str]:
    line = next(ln for ln in text.splitlines() if ln.startswith(f"| `{run_id}` |"))
    return [c.strip() for c in line.strip("|").split("|")]


def _nodes(tmp_path):
    spec = load_campaign(ROOT / "configs/campaign/smoke.yaml", [f"out_dir={tmp_path}/c"])
    return spec, {n.id: n for n in build_dag(spec)}


def test_graft_rows_have_the_digest_of_their_shards_and_their_parents(tmp_path):
    spec, nodes = _nodes(tmp_path)
    graft = nodes["tiny/iso/graft"]
    shards = {"model-00002-of-00002.safetensors": {"size": 10, "sha256": "b" * 64},
              "model-00001-of-00002.safetensors": {"size": 20, "sha256": "a" * 64}}
    with RunRecorder(graft.run_dir, None, "graft") as rec:  # what py4.graft.engine records
        rec.add_input("mid", path=f"{tmp_path}/c/tiny/iso/midtrain/model", hash_content=False, sha256="1" * 64)
        rec.add_input("it", path=f"{tmp_path}/c/assets/it", hash_content=False, sha256="2" * 64)
        rec.add_input("base", path=f"{tmp_path}/c/assets/base", hash_content=False, sha256="3" * 64)
        rec.add_output("model", graft.run_dir, hash_content=False, total_size=30, shards=shards,
                       index="model.safetensors.index.json")
    row = _row(weights_index(list(nodes.values()), spec.out_dir, spec.name), "tiny/iso/graft")
    expected = hashlib.sha256(b"".join(f"{name}\0{shards[name]['sha256']}\n".encode() for name in sorted(shards)))
    assert row[2] == "done" and row[4] == expected.hexdigest()[:12]
    assert "`tiny/iso/midtrain`" in row[5]
    assert f"it: {tmp_path}/c/assets/it" in row[5] and f"base: {tmp_path}/c/assets/base" in row[5]


def test_midtrain_rows_name_the_pretrained_base(tmp_path):
    spec, nodes = _nodes(tmp_path)
    text = weights_index(list(nodes.values()), spec.out_dir, spec.name)
    # Not built yet: the base the command names.
    assert f"base: {tmp_path}/c/assets/base" in _row(text, "tiny/iso/midtrain")[5]
    mid = nodes["tiny/iso/midtrain"]
    Path(mid.run_dir, "model").mkdir(parents=True)
    Path(mid.run_dir, "model", "model.safetensors").write_bytes(b"w")
    with RunRecorder(mid.run_dir, None, "midtrain") as rec:  # what py4.train.packed records
        rec.add_input("model", hash_content=False, hub_id="google/gemma-4-12b-pt", revision="abc123")
        rec.add_output("model", Path(mid.run_dir, "model"))
    row = _row(weights_index(list(nodes.values()), spec.out_dir, spec.name), "tiny/iso/midtrain")
    assert row[5] == "base: google/gemma-4-12b-pt@abc123"  # the run's own record wins
    assert len(row[4]) == 12
    # The graft (not built) names its parents from its command.
    graft = _row(weights_index(list(nodes.values()), spec.out_dir, spec.name), "tiny/iso/graft")
    assert graft[2] == "not built" and f"it: {tmp_path}/c/assets/it" in graft[5]


def test_a_midtrain_row_names_the_base_its_last_model_path_override_gives(tmp_path):
    # Overrides resolve in order, the last one winning (py4.config.apply_overrides), in the ledger
    # as in the run: a run with several model.path overrides names the last.
    from py4.campaign.ledgers import external_parents
    from py4.overrides import overrides

    spec, nodes = _nodes(tmp_path)
    mid = nodes["tiny/iso/midtrain"]
    mid.overrides += overrides({"model.path": f"{tmp_path}/first", "model.revision": None})
    mid.overrides += overrides({"model.path": f"{tmp_path}/last"})
    assert external_parents(mid, {}) == [("base", f"{tmp_path}/last")]
    mid.overrides += overrides({"model.revision": "abc123"})  # a pin the command gives is shown too
    assert external_parents(mid, {}) == [("base", f"{tmp_path}/last@abc123")]
    # A folder that exists loads as it is (the loader ignores the revision): the ledger does not pin it.
    Path(tmp_path, "last").mkdir()
    assert external_parents(mid, {}) == [("base", f"{tmp_path}/last")]
