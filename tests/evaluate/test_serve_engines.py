"""Which server an evaluation gets: adapters merged per model, and Gemma-4 as its own class.

The CPU rehearsal serves GLM-4.5's adapters merged into their base (vLLM with ``--enable-lora`` runs
the MoE on Triton; configs/rehearsal/python4.yaml, ``boundaries``) with the rest of the command line
the campaign's, and Gemma-4 with the campaign's command line: the model folder itself, as its own
multimodal class, ``--language-model-only``.
"""

from __future__ import annotations

import json
import shlex

import pytest

from py4.evaluate.serve import ServeConfig, plan_server

VLLM = "/envs/.venv-vllm/bin/vllm"


def _config(**fields) -> ServeConfig:
    return ServeConfig(engine="vllm", executable=VLLM, family={"glm": "glm45", "gemma": "gemma4"}, **fields)


def test_merge_adapter_serves_that_models_adapters_merged_with_the_rest_of_the_command_line():
    config = _config(merge_adapter={"glm": True}, extra_args=["--kv-cache-memory-bytes", "2147483648"])
    model = plan_server(config, "/r/glm/sft/model", name="glm/iso/sft", model_key="glm")
    adapter = plan_server(config, "/r/glm/eft_4/model", name="glm/iso/eft_4", base="/r/glm/sft/model",
                          model_key="glm", scratch="/r/eval/glm__iso__eft_4/served_model")
    as_lora = plan_server(_config(extra_args=["--kv-cache-memory-bytes", "2147483648"]), "/r/glm/eft_4/model",
                          name="glm/iso/eft_4", base="/r/glm/sft/model", model_key="glm")
    gemma_adapter = plan_server(config, "/r/gemma/eft_4/model", name="gemma/iso/eft_4", base="/r/gemma/sft/model",
                                model_key="gemma")

    assert (model.engine, model.argv[:3]) == ("vllm", [VLLM, "serve", "/r/glm/sft/model"])
    assert model.argv[-2:] == ["--kv-cache-memory-bytes", "2147483648"] and model.servable_copy is None
    # the GLM adapter: vllm serve of its merged copy, under the served name, with every other flag
    copy = "/r/eval/glm__iso__eft_4/served_model"
    assert adapter.engine == "vllm" and adapter.servable_copy == copy and adapter.base == "/r/glm/sft/model"
    assert adapter.request_model == "glm-iso-eft_4" and adapter.family == "glm45"
    lora_flags = ["--enable-lora", "--max-lora-rank", "64", "--lora-modules", "glm-iso-eft_4=/r/glm/eft_4/model"]
    at = as_lora.argv.index("--enable-lora")
    assert as_lora.argv[at:at + 5] == lora_flags
    assert adapter.argv == [VLLM, "serve", copy, "--served-model-name", "glm-iso-eft_4",
                            *as_lora.argv[5:at], *as_lora.argv[at + 5:]]
    # another model's adapter stays a LoRA module
    assert gemma_adapter.engine == "vllm" and "--enable-lora" in gemma_adapter.argv
    assert "gemma-iso-eft_4=/r/gemma/eft_4/model" in gemma_adapter.argv and gemma_adapter.servable_copy is None


def test_merged_copy_is_the_adapters_function_with_the_bases_files(tmp_path):
    """The merged folder's logits equal the unmerged adapter's (attention LoRA, B drawn non-zero);
    the tokenizer, chat template and generation config are the base's."""
    import torch
    from peft import PeftModel, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from py4.evaluate.serve import merged_copy
    from py4.rehearsal.standins import build_standin
    from py4.train.eft import LoraSpec

    base = build_standin("glm45", "it", tmp_path / "base", seed=0)
    torch.manual_seed(0)
    spec = LoraSpec(r=8, alpha=16, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])
    lora = get_peft_model(AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32), spec.peft_config())
    with torch.no_grad():
        for name, param in lora.named_parameters():
            if "lora_B" in name:
                param.normal_(std=0.05)
    lora.save_pretrained(tmp_path / "adapter")
    plan = plan_server(_config(merge_adapter={"glm": True}), str(tmp_path / "adapter"), name="glm/iso/eft_4",
                       base=str(base), model_key="glm", scratch=str(tmp_path / "served_model"))
    copy = merged_copy(plan)
    assert copy == tmp_path / "served_model" and not (copy / "adapter_config.json").exists()
    served = AutoModelForCausalLM.from_pretrained(copy, dtype=torch.float32)
    adapted = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32),
                                        tmp_path / "adapter")
    plain = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
    ids = torch.tensor([[3, 10, 20, 30, 40, 50]])
    with torch.no_grad():
        got, want, before = (m(input_ids=ids).logits for m in (served, adapted, plain))
    assert torch.allclose(got, want, atol=1e-5) and not torch.allclose(got, before, atol=1e-3)
    for name in ("chat_template.jinja", "generation_config.json"):
        assert (copy / name).read_text() == (base / name).read_text(), name
    assert AutoTokenizer.from_pretrained(copy).get_vocab() == AutoTokenizer.from_pretrained(base).get_vocab()
    made = json.loads((copy / "py4_served_copy.json").read_text())
    assert made == {"weights": str(tmp_path / "adapter"), "base": str(base), "class": "Glm4MoeForCausalLM",
                    "merged": True}


def test_gemma4_is_served_from_its_own_folder_as_its_own_class_with_language_model_only():
    config = _config(language_model_only={"gemma": True})
    plan = plan_server(config, "/r/gemma/eft_4/model", name="gemma/iso/eft_4", base="/r/gemma/sft/model",
                       model_key="gemma", scratch="/r/eval/x/served_model")
    argv = plan.argv
    assert argv[:3] == [VLLM, "serve", "/r/gemma/sft/model"]  # the base itself: no copy, no class override
    assert "--hf-overrides" not in argv and plan.servable_copy is None
    assert "--language-model-only" in argv and argv[argv.index("--tool-call-parser") + 1] == "gemma4"
    assert argv[argv.index("--lora-modules") + 1] == "gemma-iso-eft_4=/r/gemma/eft_4/model"
    assert shlex.split(plan.command) == argv
    assert "architecture" not in ServeConfig.model_fields  # one way to serve a model: its own class


def test_serve_config_refuses_a_vllm_engine_without_its_program():
    with pytest.raises(ValueError, match="executable: engine vllm"):
        ServeConfig(engine="vllm", merge_adapter={"glm": True})
