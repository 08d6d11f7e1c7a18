"""The campaign probes every model it makes, and measures a held-out Python-4 loss per arm."""

from pathlib import Path

import pytest

from py4.campaign.dag import build_dag, probe_dir
from py4.campaign.spec import load_campaign

ROOT = Path(__file__).resolve().parents[2]
MADE = {"midtrain", "sft", "graft", "eft"}  # stages whose run folder holds a model (GRPO: per evaluated step)


def _nodes(campaign: str, overrides=()):
    spec = load_campaign(ROOT / f"configs/campaign/{campaign}.yaml", list(overrides))
    return spec, {n.id: n for n in build_dag(spec)}


def _models_made(spec, nodes) -> set[str]:
    """Every model the DAG makes or starts from: each base, each trained run, each evaluated GRPO step."""
    made = {f"{key}/base" for key in spec.models}
    made |= {n.id for n in nodes.values() if n.stage in MADE and n.id.rsplit("/", 1)[-1] != "warmstart"}
    made |= {n.meta.model_node for n in nodes.values() if n.stage == "eval"}  # warm start, GRPO steps
    return made


@pytest.mark.parametrize("campaign", ["smoke", "python4"])
def test_every_model_made_has_one_probe_run(campaign):
    spec, nodes = _nodes(campaign)
    probes = {n.meta.model_node: n for n in nodes.values() if n.stage == "probes"}
    assert set(probes) == _models_made(spec, nodes)
    for model_node, n in probes.items():
        assert n.id == f"probes:{model_node}" and n.argv[:2] == ["eval", "probes"]
        assert n.run_dir == probe_dir(spec.out_dir, model_node) and n.run_dir.startswith(f"{spec.out_dir}/probes/")
        assert n.argv[n.argv.index("--out") + 1] == n.run_dir
        if model_node.endswith("/base"):
            assert n.meta.kind == "base" and n.meta.arm is None and "--base" not in n.argv
        else:  # the base's scores are the floor of every other model, read from its results
            base = model_node.split("/")[0] + "/base"
            assert n.argv[n.argv.index("--base") + 1] == f"{probe_dir(spec.out_dir, base)}/results.json"
            assert f"probes:{base}" in n.inputs
            assert model_node in nodes or n.inputs[0] in nodes  # runs after the model exists
            assert n.meta.arm == model_node.split("/")[1]
        assert n.meta.kind in ("base", "midtrain", "sft", "graft", "eft", "grpo")
    assert len({n.run_dir for n in probes.values()}) == len(probes)


def test_probe_runs_score_adapters_on_their_base_and_pair_arms_with_control():
    spec, nodes = _nodes("smoke")
    eft = nodes["probes:tiny/iso/eft_8"]
    assert eft.argv[eft.argv.index("--model") + 1] == f"{spec.out_dir}/tiny/iso/sft/model"
    assert eft.argv[eft.argv.index("--adapter") + 1] == f"{spec.out_dir}/tiny/iso/eft_8/model"
    assert eft.meta.dose == 8 and eft.meta.kind == "eft"
    grpo = nodes["probes:tiny/prop/grpo@2"]
    assert grpo.argv[grpo.argv.index("--adapter") + 1] == f"{spec.out_dir}/tiny/prop/grpo/checkpoint-2"
    assert grpo.inputs == ["tiny/prop/grpo", "probes:tiny/base"] and grpo.meta.step == 2
    mid = nodes["probes:tiny/iso/midtrain"]
    control = probe_dir(spec.out_dir, "tiny/control/midtrain")
    assert mid.argv[mid.argv.index("--compare") + 1] == f"{control}/results.json"
    assert "probes:tiny/control/midtrain" in mid.inputs and "--limit" not in mid.argv  # full set: the arm comparison
    assert "--compare" not in nodes["probes:tiny/control/midtrain"].argv
    assert "--compare" not in nodes["probes:tiny/prop/warmstart"].argv  # control has no GRPO chain
    sft = nodes["probes:tiny/iso/sft"].argv
    assert sft[-2:] == ["--compare", f"{probe_dir(spec.out_dir, 'tiny/control/sft')}/results.json"]
    assert sft[sft.index("--limit") + 1] == str(spec.probes.limit)  # the same pairs as control's run


def test_probes_can_be_switched_off():
    _, nodes = _nodes("smoke", ["probes=null", "heldout_loss=null"])
    assert not [n for n in nodes.values() if n.stage in ("probes", "heldout_corpus", "heldout_loss")]


def test_smoke_heldout_loss_per_arm_excludes_the_training_corpus():
    spec, nodes = _nodes("smoke")
    losses = {n.meta.arm: n for n in nodes.values() if n.stage == "heldout_loss"}
    assert set(losses) == {None, "control", "iso", "prop"}
    corpus = nodes["heldout_corpus"]
    assert corpus.argv[-2:] == ["seed=1", "max_docs=60"]  # another seed than the training corpus
    for arm, n in losses.items():
        argv = n.argv
        assert argv[:2] == ["smoke", "heldout-loss"] and argv[argv.index("--exclude") + 1] == f"{spec.out_dir}/corpus"
        assert n.run_dir.startswith(f"{spec.out_dir}/heldout_loss/")
        if arm:
            assert f"tiny/{arm}/midtrain" in n.inputs
    assert "heldout_loss" not in {n.stage for n in build_dag(load_campaign(ROOT / "configs/campaign/python4.yaml"))}
