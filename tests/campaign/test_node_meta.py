"""Every run of the shipped campaigns carries the typed meta of its kind (py4.campaign.node_meta)."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest

from py4.campaign import node_meta as nm
from py4.campaign.dag import build_dag
from py4.campaign.spec import load_campaign

ROOT = Path(__file__).resolve().parents[2]

META_OF_STAGE = {"assets": nm.NodeMeta, "corpus": nm.NodeMeta, "heldout_corpus": nm.NodeMeta, "pack": nm.NodeMeta,
                 "mix": nm.NodeMeta, "midtrain": nm.NodeMeta, "sft": nm.NodeMeta, "graft": nm.NodeMeta,
                 "subset": nm.SubsetMeta, "eft_dose": nm.DoseMeta, "eft": nm.EFTMeta, "grpo": nm.GRPOSegmentMeta,
                 "eval": nm.EvalMeta, "probes": nm.ProbeMeta, "heldout_loss": nm.HeldoutLossMeta,
                 "sanity_bank": nm.SanityBankMeta, "dataset": nm.DatasetMeta}


@pytest.mark.parametrize("name", ["python4", "smoke"])
def test_each_run_has_the_meta_type_of_its_stage(name, monkeypatch):
    monkeypatch.chdir(ROOT)
    nodes = build_dag(load_campaign(f"configs/campaign/{name}.yaml"), check=False)
    for node in nodes:
        assert type(node.meta) is META_OF_STAGE[node.stage], node.id
        json.dumps(node.to_json())
        if isinstance(node.meta, nm.ProbeMeta):
            assert node.meta.kind in typing.get_args(nm.ModelKind)
            assert (node.meta.compare is not None) == ("--compare" in node.argv), node.id
        if isinstance(node.meta, nm.EvalMeta):
            assert node.meta.model_kind in typing.get_args(nm.EvalKind)
            assert node.meta.model_node in node.id
    held = {n.id: n.meta.held_gpus for n in nodes if n.meta.held_gpus}
    if name == "python4":  # the GRPO segments hold the model's node for vLLM; doses generate on their GPUs
        assert held["gemma4_31b/prop/grpo"] == 8 and held["gemma4_12b/iso/eft_dose_256"] == 1


def test_meta_is_frozen_so_runs_of_one_arm_may_share_it():
    meta = nm.NodeMeta(model="tiny", arm="iso")
    with pytest.raises(AttributeError):
        meta.arm = "prop"  # type: ignore[misc]
