"""The GPU check (py4.rehearsal.gpu_check) in its tiny CPU mode: the same code path as on the device."""

from __future__ import annotations

import json

import pytest

from py4.rehearsal import gpu_check
from py4.rehearsal.gpu_check import FULL, TINY, run_checks


def _steps(report: dict) -> dict[str, dict]:
    return {step["step"]: step for step in report["steps"]}


@pytest.mark.smoke
def test_full_scale_config_is_the_1b_gemma4_of_the_outline():
    import torch
    from transformers import AutoModelForCausalLM

    from py4.rehearsal.standins import build_tokenizer
    from py4.train.eft import LoraSpec, expected_adapted_modules

    config = gpu_check.gemma4_check_config(build_tokenizer("gemma4"), FULL)
    text = config.text_config
    assert (text.vocab_size, text.hidden_size, text.num_hidden_layers) == (262_144, 1536, 18)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    assert type(model).__name__ == "Gemma4ForConditionalGeneration"
    assert 0.9e9 < sum(p.numel() for p in model.parameters()) < 1.2e9
    # 18 layers × 7 projections, less the v_proj of the 3 full-attention layers (attention_k_eq_v).
    spec = LoraSpec(target_scope=r"language_model\.layers\.\d+\.(self_attn|mlp)")
    assert expected_adapted_modules(config, spec) == 18 * 7 - 3


@pytest.mark.smoke
def test_build_and_large_graft_report(tmp_path):
    report = run_checks(tmp_path, TINY, ("build", "graft_large"), budget_s=600)
    steps = _steps(report)
    assert report["ok"], json.dumps(report, indent=2)
    build = steps["build"]["facts"]
    assert build["class"] == "Gemma4ForConditionalGeneration"
    assert build["base_dtypes"] == {"BF16": build["base_dtypes"]["BF16"]} and build["base_shards"] > 1
    large = steps["graft_large"]["facts"]
    assert large["grafted"] > 0 and large["out_dtypes"] == {"BF16": large["grafted"]}
    assert large["peak_rss_gib"] > 0 and large["verified"] > 0
    assert (tmp_path / "GPU_CHECK_REPORT.md").read_text().count("| done |") == 2
    assert json.loads((tmp_path / "gpu_check_report.json").read_text())["scale"] == "tiny"


@pytest.mark.smoke
def test_a_failed_step_is_recorded_its_dependents_skipped_and_the_rest_runs(tmp_path):
    # No midtraining output: the graft fails, packed attention (which reads the graft) is skipped.
    report = run_checks(tmp_path, TINY, ("graft", "packed_attention", "graft_large"), budget_s=600)
    steps = _steps(report)
    assert not report["ok"]
    assert steps["graft"]["status"] == "failed" and "midtrain" in steps["graft"]["error"]
    assert "Traceback" in steps["graft"]["log"]
    assert steps["packed_attention"]["status"] == "skipped" and "graft" in steps["packed_attention"]["error"]
    assert steps["graft_large"]["status"] == "done"
    assert "## graft: failed" in (tmp_path / "GPU_CHECK_REPORT.md").read_text()


@pytest.mark.smoke
def test_a_step_over_its_timeout_is_killed_and_recorded(tmp_path):
    result = gpu_check.run_step("build", gpu_check.Work(tmp_path), TINY, timeout=0.5)
    assert result.status == "timeout" and "budget" in result.error
    assert not (tmp_path / "facts" / "build.json").exists()


@pytest.mark.smoke
@pytest.mark.slow
def test_whole_check_in_tiny_mode(tmp_path):
    report = run_checks(tmp_path, TINY, budget_s=1200)
    steps = _steps(report)
    assert report["ok"], json.dumps(report, indent=2)
    midtrain = steps["midtrain"]["facts"]
    first, resumed = midtrain["first_run"], midtrain["resumed_run"]
    assert first["loading"]["fsdp"] and first["loading"]["world_size"] == 1
    assert first["global_step"] == 4 and len(first["losses"]) == 4
    assert resumed["resumed_from"].endswith("checkpoint-2") and len(resumed["losses"]) == 2
    assert midtrain["resumed_losses_match"]
    assert set(resumed["saved_dtypes"]) == {"BF16"}
    assert resumed["weights"]["tensors_changed"] > 0
    assert steps["graft"]["facts"]["grafted"] > 0
    packed = steps["packed_attention"]["facts"]
    assert packed["max_abs_diff_packed_vs_alone"] <= packed["tolerance"]
    assert packed["max_abs_diff_running_positions_vs_alone"] > packed["tolerance"]
    sft = steps["sft"]["facts"]
    assert sft["global_step"] == 1 and sft["weights"]["tensors_changed"] > 0
    assert sft["supervised_tokens"]["supervised"] * 2 == sft["supervised_tokens"]["tokens"]
    lora = steps["lora"]["facts"]
    assert lora["expected_adapted_modules"] == 6 * 7 - 1  # the one full-attention layer has no v_proj
    short, long = TINY.lora_lengths
    assert lora[f"tokens_{short}"]["global_step"] == 2 and lora[f"tokens_{long}"]["global_step"] == 1
    assert lora["merge"]["max_abs_diff_merged_vs_unmerged"] <= lora["merge"]["tolerance"]
    assert lora["merge"]["max_abs_diff_adapter_vs_none"] > 0
