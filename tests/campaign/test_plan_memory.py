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
    # the stated assumptions, not benchmarks/gpu/measured.json (whose figures move the total)
    monkeypatch.setattr("py4.campaign.memory_plan.read_measured", lambda *args, **kwargs: None)
    result = _campaign("plan", CAMPAIGN, "--only", "glm45_air/iso/midtrain", f"out_dir={tmp_path}",
                       "stage_overrides.midtrain=[optimisation.master_weights=fp32]")
    text = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert "glm45_air/iso/midtrain: 179.8 GiB per GPU > 139.0 GiB" in text
    assert "change optimisation.master_weights: bf16" in text


def test_measured_figures_replace_the_assumptions(monkeypatch):
    """benchmarks/gpu/measured.json's throughput and peaks (the schema in memory_plan's docstring)
    replace the stated assumptions for that model's runs, and the plan says they were measured."""
    from py4.campaign.dag import build_dag, select
    from py4.campaign.memory_plan import plan_runs
    from py4.campaign.spec import load_campaign

    monkeypatch.chdir(ROOT)
    spec = load_campaign(CAMPAIGN, [])
    nodes = select(build_dag(spec, check=True), "gemma4_31b/iso/midtrain")
    (assumed,) = plan_runs(spec, nodes, None)
    measured = {"source": "gpu check", "date": "2026-12-04", "gpu_total_bytes": 150_000_000_000,
                "tokens_per_s_per_gpu": {"gemma4_31b": 1000.0}, "logits_bytes_per_token": {"gemma4_31b": 1e6},
                "block_activation_bytes_per_token": {"gemma4_31b": 2e5}}
    (plan,) = plan_runs(spec, nodes, measured)
    out = plan.to_json()
    assert out["throughput_source"] == "measured: gpu check (2026-12-04)" and out["gpu_bytes"] == 150_000_000_000
    assert out["gpu_hours"] == round(plan.tokens / 1000.0 / 3600, 1)
    tokens = plan.plan.run.micro_batch * plan.plan.run.seq_len
    assert plan.plan.memory.logits == int(tokens * 1e6)
    assert plan.plan.memory.state == assumed.plan.memory.state  # the exact part does not move
    per_parameter = out["bytes_per_parameter"]
    assert (per_parameter["weights"], per_parameter["gradients"], per_parameter["frozen_weights"]) == (4, 4, 0)
    assert 8.0 <= per_parameter["optimizer"] < 8.001  # fused AdamW: two fp32 moments (+ a step scalar per tensor)
