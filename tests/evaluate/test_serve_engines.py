"""Which server an evaluation gets: per-model adapter engines, and Gemma-4 as its own class.

The CPU rehearsal serves every evaluation with vLLM except GLM-4.5's adapters (their LoRA runs the
MoE on Triton; configs/rehearsal/python4.yaml, ``boundaries``), and Gemma-4 with the campaign's
command line: the model folder itself, as its own multimodal class, ``--language-model-only``.
"""

from __future__ import annotations

import shlex

import pytest

from py4.evaluate.serve import ServeConfig, plan_server

VLLM = "/envs/.venv-vllm/bin/vllm"


def _config(**fields) -> ServeConfig:
    return ServeConfig(engine="vllm", executable=VLLM, family={"glm": "glm45", "gemma": "gemma4"}, **fields)


def test_adapter_engine_serves_that_models_adapters_only_and_extra_args_go_to_the_configs_engine():
    config = _config(adapter_engine={"glm": "transformers"}, extra_args=["--kv-cache-memory-bytes", "2147483648"])
    model = plan_server(config, "/r/glm/sft/model", name="glm/iso/sft", model_key="glm")
    adapter = plan_server(config, "/r/glm/eft_4/model", name="glm/iso/eft_4", base="/r/glm/sft/model",
                          model_key="glm", scratch="/r/eval/glm__iso__eft_4/served_model")
    gemma_adapter = plan_server(config, "/r/gemma/eft_4/model", name="gemma/iso/eft_4", base="/r/gemma/sft/model",
                                model_key="gemma")

    assert (model.engine, model.argv[:3]) == ("vllm", [VLLM, "serve", "/r/glm/sft/model"])
    assert model.argv[-2:] == ["--kv-cache-memory-bytes", "2147483648"] and model.servable_copy is None
    # the GLM adapter: transformers serve of its merged copy, without vLLM's flags
    assert adapter.engine == "transformers" and adapter.argv[1:5] == ["-m", "transformers.cli.transformers", "serve",
                                                                      "/r/eval/glm__iso__eft_4/served_model"]
    assert "--kv-cache-memory-bytes" not in adapter.argv
    assert adapter.servable_copy == "/r/eval/glm__iso__eft_4/served_model"
    assert adapter.request_model == adapter.servable_copy and adapter.family == "glm45"
    # another model's adapter stays a LoRA module on vLLM
    assert gemma_adapter.engine == "vllm" and "--enable-lora" in gemma_adapter.argv
    assert "gemma-iso-eft_4=/r/gemma/eft_4/model" in gemma_adapter.argv


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
        ServeConfig(engine="transformers", adapter_engine={"glm": "vllm"})
