"""configs/train/smoke/grpo.yaml names runs the smoke campaign makes, so that `py4 train grpo
--config …` after `make demo` finds its adapter (a run the campaign does not make fails on it)."""

from __future__ import annotations

from pathlib import Path

from py4.campaign.dag import build_dag
from py4.campaign.spec import load_campaign
from py4.config import read_yaml

ROOT = Path(__file__).resolve().parents[2]


def test_smoke_grpo_defaults_are_the_campaign_grpo_inputs():
    config = read_yaml(ROOT / "configs/train/smoke/grpo.yaml")
    spec = load_campaign(ROOT / "configs/campaign/smoke.yaml")  # out_dir: campaign-out/smoke, as the config
    grpo = next(n for n in build_dag(spec) if n.stage == "grpo")
    given = dict(a.split("=", 1) for a in grpo.argv if "=" in a)
    assert config["model"]["path"] == given["model.path"]
    assert config["adapter"] == given["adapter"]
