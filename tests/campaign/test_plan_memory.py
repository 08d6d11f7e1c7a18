"""`py4 campaign plan` shows each training run's memory per GPU, host RAM, disk and GPU-hours (text and
--json), and refuses at plan time a run that cannot fit its GPUs, naming the run, the figure and
the knob: GLM-4.5-Air's full fine-tuning with accelerate's fp32 master weights (the campaign's own
configs keep them in bf16 and fit)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from py4.cli import app

ROOT = Path(__file__).resolve().parents[2]
CAMPAIGN = ROOT / "configs/campaign/python4.yaml"


def _campaign(*args: str):
    return CliRunner().invoke(app, ["campaign", *[str(a) for a in args]])


def test_plan_json_gives_each_training_runs_memory(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    result = _campaign("plan", CAMPAIGN, "--json", "--only", "glm45_air/iso/midtrain", f"out_dir={tmp_path}")
    assert result.exit_code == 0, result.output
    (item,) = [i for i in json.loads(result.output) if i["id"] == "glm45_air/iso/midtrain"]
    plan = item["memory_plan"]
    assert plan["parameters"] == 106_852_245_504 and plan["master_weights"] == "bf16" and plan["fits"]
    state = plan["bytes_per_gpu"]
    assert state["state"] == state["weights"] + state["gradients"] + state["optimizer"]
    assert state["total"] <= plan["gpu_bytes"] and plan["gpu_hours"] > 0 and plan["disk_bytes"] > 0
    assert plan["host_ram_rank0_bytes"] == 2 * plan["parameters"]  # bf16 load on rank 0, no fp32 copy


def test_plan_refuses_a_run_that_cannot_fit(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    result = _campaign("plan", CAMPAIGN, "--only", "glm45_air/iso/midtrain", f"out_dir={tmp_path}",
                       "stage_overrides.midtrain=[optimisation.master_weights=fp32]")
    text = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert "glm45_air/iso/midtrain: 179.8 GiB per GPU > 139.0 GiB" in text
    assert "change optimisation.master_weights: bf16" in text
