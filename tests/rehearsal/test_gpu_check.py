"""The GPU check (py4.rehearsal.gpu_check) in its tiny CPU mode: the same code paths as on the device."""

from __future__ import annotations

import json

import pytest

from py4.rehearsal import gpu_check, gpu_probes
from py4.rehearsal.gpu_check import DEFAULT_STEPS, FULL, TINY, run_checks


def _steps(out) -> dict[str, dict]:
    """Each step's own JSON (what the device tool brings back), by step name."""
    report = json.loads((out / "gpu_check_report.json").read_text())
    return {step["step"]: json.loads((out / f"{step['step']}.json").read_text()) for step in report["steps"]}


def _meta_model(spec):
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    config = getattr(transformers, spec.config_class)(**spec.fields)
    with torch.device("meta"):
        return AutoModelForCausalLM.from_config(config)


def test_gemma4_31b_probe_has_the_real_widths_head_dims_and_vocabulary():
    spec = gpu_probes.gemma4_31b_spec(tiny=False)
    model = _meta_model(spec)
    assert spec.tokens == 8192 and spec.real_layer_counts == {"sliding_attention": 50, "full_attention": 10}
    sliding, full = model.model.layers
    # 32 heads; sliding: head_dim 256, 16 KV heads; full: head_dim 512, 4 KV heads, keys as values
    assert (sliding.self_attn.q_proj.out_features, sliding.self_attn.k_proj.out_features) == (32 * 256, 16 * 256)
    assert (full.self_attn.q_proj.out_features, full.self_attn.k_proj.out_features) == (32 * 512, 4 * 512)
    assert getattr(full.self_attn, "v_proj", None) is None and sliding.self_attn.v_proj is not None
    assert model.model.embed_tokens.weight.shape == (262_144, 5376)
    assert model.lm_head.weight.shape == (262_144, 5376) and model.config.tie_word_embeddings


def test_glm45_probe_is_one_moe_layer_with_128_experts_top_8():
    spec = gpu_probes.glm45_moe_spec(tiny=False)
    model = _meta_model(spec)
    assert spec.tokens == 8192 and spec.real_layer_counts == {"dense": 1, "moe": 45}
    [layer] = model.model.layers
    assert type(layer.mlp).__name__ == "Glm4MoeMoE"
    assert model.config.n_routed_experts == 128 and model.config.num_experts_per_tok == 8
    assert layer.mlp.experts.gate_up_proj.shape[0] == 128
    assert model.lm_head.weight.shape == (151_552, 4096)


@pytest.mark.smoke
def test_fsdp2_build_is_the_12b_class_at_the_real_vocabulary():
    import torch
    from transformers import AutoModelForCausalLM

    from py4.rehearsal.standins import build_tokenizer

    config = gpu_check.gemma4_check_config(build_tokenizer("gemma4_12b"), FULL)
    text = config.text_config
    assert (text.vocab_size, text.hidden_size, text.num_hidden_layers) == (262_144, 512, 6)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    assert type(model).__name__ == "Gemma4UnifiedForConditionalGeneration"


def test_measured_figures_come_from_gpu_probes_only(tmp_path):
    facts = {"device": "NVIDIA H200", "tokens": 8192, "gpu_total_bytes": 150_000_000_000,
             "model_step_estimate": {"tokens_per_s_with_activation_checkpointing": 2000.0},
             "logits_loss": {"own_peak_gib": 8.0},
             "per_layer_type": {"sliding_attention": {"own_peak_gib": 2.0},
                                "full_attention": {"own_peak_gib": 3.0}},
             "step_peak_above_start_gib": 10.0, "weights_and_grads_gib": 12.0}
    (tmp_path / "layers_gemma4_31b.json").write_text(json.dumps({"status": "done", "facts": facts}))
    (tmp_path / "layer_glm45_moe.json").write_text(json.dumps({"status": "done", "facts": {**facts, "device": "cpu"}}))
    figures = gpu_check.measured_figures(tmp_path, "test", "2026-12-04")
    assert figures["tokens_per_s_per_gpu"] == {"gemma4_31b": 2000.0}
    assert figures["logits_bytes_per_token"] == {"gemma4_31b": 8 * 2**30 / 8192}
    assert figures["block_activation_bytes_per_token"] == {"gemma4_31b": 3 * 2**30 / 8192}
    assert figures["peak_bytes"] == {"gemma4_31b": 22 * 2**30}
    assert figures["gpu_total_bytes"] == 150_000_000_000


@pytest.mark.smoke
def test_layer_probes_and_lora_drift_in_tiny_mode(tmp_path):
    run_checks(tmp_path, TINY, ("layers_gemma4_31b", "layer_glm45_moe", "lora_drift"), budget_s=900,
               work_dir=tmp_path / "work")
    steps = _steps(tmp_path)
    assert all(s["status"] == "done" for s in steps.values()), json.dumps(steps, indent=2)[:3000]
    gemma = steps["layers_gemma4_31b"]["facts"]
    phases = set(gemma["phases"])
    assert {"embed_fwd", "layer0_fwd", "layer1_fwd", "head_fwd", "head_bwd", "layer1_bwd", "layer0_bwd",
            "embed_bwd"} == phases
    assert set(gemma["per_layer_type"]) == {"sliding_attention", "full_attention"}
    assert gemma["sdpa_backends_alone"]["MATH"]["ran"]
    # both head dims (32 sliding, 64 full at tiny sizes) went through scaled-dot-product attention
    dims = {shape[-1] for shapes in gemma["sdpa_ops_default"].values() for shape in shapes}
    assert {32, 64} <= dims
    assert gemma["model_step_estimate"]["layers"] == {"sliding_attention": 50, "full_attention": 10}
    glm = steps["layer_glm45_moe"]["facts"]
    assert glm["layer_types"] == ["moe"] and glm["class"] == "Glm4MoeForCausalLM"
    lora = steps["lora_drift"]["facts"]
    assert lora["cycles"] == 130 and lora["base_dtype"] == "bfloat16"
    assert lora["peft_merge_unmerge"]["base_elements_moved"] > 0  # PEFT's bf16 W + d - d is not W
    assert lora["exact_fp32_cast_once"]["wrote_base"] is False
    assert lora["exact_fp32_cast_once"]["last_merged_max_err_ulps_at_working_magnitude"] <= 0.51
    # what comes back from the device: one JSON per probe and the two reports, no folders
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "work") == sorted(
        ["gpu_check_report.json", "GPU_CHECK_REPORT.md", "layers_gemma4_31b.json", "layer_glm45_moe.json",
         "lora_drift.json"])
    report = json.loads((tmp_path / "gpu_check_report.json").read_text())
    verdicts = {v["stage"]: v["verdict"] for v in report["verdicts"]}
    assert verdicts["GRPO weight sync to vLLM (LoRA merge)"] == "GO"
    assert verdicts["midtraining and SFT (FSDP2, save and resume)"] == "NOT RUN"
    assert "| campaign stage | verdict | why |" in (tmp_path / "GPU_CHECK_REPORT.md").read_text()


def test_default_steps_fit_the_device_limits():
    # one JSON per step + the two reports: at most 8 files come back
    assert len(DEFAULT_STEPS) + 2 <= 8
    assert sum(FULL.step_timeout_s[s] for s in DEFAULT_STEPS) <= 9 * 60


@pytest.mark.smoke
def test_a_failed_step_is_recorded_its_dependents_skipped_and_the_rest_runs(tmp_path):
    # No midtraining output: the graft fails, packed attention (which reads the graft) is skipped.
    report = run_checks(tmp_path, TINY, ("graft", "packed_attention", "lora_drift"), budget_s=600,
                        work_dir=tmp_path / "work")
    steps = _steps(tmp_path)
    assert not report["ok"]
    assert steps["graft"]["status"] == "failed" and "midtrain" in steps["graft"]["error"]
    assert "Traceback" in steps["graft"]["log"]
    assert steps["packed_attention"]["status"] == "skipped" and "graft" in steps["packed_attention"]["error"]
    assert steps["lora_drift"]["status"] == "done"
    assert "## graft: failed" in (tmp_path / "GPU_CHECK_REPORT.md").read_text()


@pytest.mark.smoke
def test_a_step_over_its_timeout_is_killed_and_recorded(tmp_path):
    result = gpu_check.run_step("build", gpu_check.Work(tmp_path), TINY, timeout=0.5)
    assert result.status == "timeout" and "budget" in result.error
    assert json.loads((tmp_path / "build.json").read_text())["status"] == "timeout"


@pytest.mark.smoke
@pytest.mark.slow
def test_fsdp2_save_and_resume_in_tiny_mode(tmp_path):
    report = run_checks(tmp_path, TINY, ("build", "midtrain"), budget_s=1200, work_dir=tmp_path / "work")
    steps = _steps(tmp_path)
    assert report["ok"], json.dumps(steps, indent=2)[:3000]
    assert steps["build"]["facts"]["class"] == "Gemma4UnifiedForConditionalGeneration"
    midtrain = steps["midtrain"]["facts"]
    first, resumed = midtrain["first_run"], midtrain["resumed_run"]
    assert first["loading"]["fsdp"] and first["loading"]["world_size"] == 1
    assert first["global_step"] == 4 and len(first["losses"]) == 4
    assert resumed["resumed_from"].endswith("checkpoint-2") and len(resumed["losses"]) == 2
    assert midtrain["resumed_losses_match"]
    assert set(resumed["saved_dtypes"]) == {"BF16"}
    # the sharded checkpoint: FSDP2's trainable parameters and the optimizer state
    assert set(resumed["checkpoint_dtypes"]) == {"pytorch_model_fsdp_0", "optimizer_0"}
    verdicts = {v["stage"]: v["verdict"] for v in report["verdicts"]}
    assert verdicts["midtraining and SFT (FSDP2, save and resume)"] == "GO"


@pytest.mark.smoke
@pytest.mark.slow
def test_two_grpo_steps_with_tools_in_tiny_mode(tmp_path):
    run_checks(tmp_path, TINY, ("grpo_tools",), budget_s=1200, work_dir=tmp_path / "work")
    grpo = _steps(tmp_path)["grpo_tools"]
    assert grpo["status"] == "done", json.dumps(grpo, indent=2)[:3000]
    assert grpo["facts"]["global_step"] == 2
    assert grpo["facts"]["chat_template"] == "trl/chat_templates/gemma4_v5.jinja"
