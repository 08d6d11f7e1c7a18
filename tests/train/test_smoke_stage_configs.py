"""The smoke stage configs (configs/train/smoke/) run by hand after `make demo`: each
default input path is the one the smoke campaign's DAG gives that stage's node (its iso arm; the
prop arm for GRPO, which the campaign runs there), and each default output is no campaign run's
folder, so a run by hand neither resumes nor overwrites one of the campaign's.

midtrain.yaml is the README's by-hand chain instead: it reads what ``py4 data mix --config
configs/data/smoke/mix_iso.yaml`` writes (README "The pipeline, one stage at a time")."""

from __future__ import annotations

from pathlib import Path

import pytest

from py4.config import load_config
from py4.stages import config_type

ROOT = Path(__file__).resolve().parents[2]
SMOKE = "configs/campaign/smoke.yaml"

# stage config -> (the campaign node it stands for, its input fields, its output field)
BY_HAND = {
    "configs/train/smoke/sft.yaml": ("tiny/iso/sft", ["model.path", "model.tokenizer_path", "data.path",
                                                     "data.schedule"], "run.output_dir"),
    "configs/train/smoke/eft_dose.yaml": ("tiny/iso/eft_dose_32", ["replay_settings.parent.path",
                                                                   "replay_settings.instructions.path"], "out"),
    "configs/train/smoke/eft.yaml": ("tiny/iso/eft_32", ["model.path", "data.path"], "run.output_dir"),
    "configs/train/smoke/grpo.yaml": ("tiny/prop/grpo", ["model.path", "adapter"], "run.output_dir"),
}


@pytest.fixture(scope="module")
def dag():
    from py4.campaign.dag import build_dag
    from py4.campaign.spec import load_campaign

    return {node.id: node for node in build_dag(load_campaign(ROOT / SMOKE))}


def _value(config, dotted: str):
    for part in dotted.split("."):
        config = getattr(config, part)
    return config.path if hasattr(config, "path") and not isinstance(config, str) else config


@pytest.mark.parametrize("path", sorted(BY_HAND))
def test_inputs_are_what_the_smoke_campaign_gives_the_stage(dag, path):
    node_id, inputs, _ = BY_HAND[path]
    node = dag[node_id]
    assert node.config == path
    config = load_config(config_type(node.stage), ROOT / path)
    given = {o.key: o.value for o in node.overrides}
    for field in inputs:
        assert field in given, f"{node_id} no longer sets {field}: check {path}'s inputs by hand"
        assert _value(config, field) == given[field], f"{path}: {field}"


@pytest.mark.parametrize("path", sorted(BY_HAND))
def test_outputs_are_no_campaign_runs_folder(dag, path):
    node_id, _, output = BY_HAND[path]
    config = load_config(config_type(dag[node_id].stage), ROOT / path)
    out = Path(_value(config, output))
    assert out.parts[:2] == ("campaign-out", "smoke")
    assert all(Path(n.run_dir) not in (out, *out.parents) for n in dag.values()), out


def test_midtrain_reads_what_the_readme_chain_mixes():
    from py4.data.configs import MixConfig

    midtrain = load_config(config_type("midtrain"), ROOT / "configs/train/smoke/midtrain.yaml")
    mix = load_config(MixConfig, ROOT / "configs/data/smoke/mix_iso.yaml")
    assert midtrain.data.path == mix.out_dir
    assert midtrain.data.schedule == f"{mix.out_dir}/step_schedule.json"
