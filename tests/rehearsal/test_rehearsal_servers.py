"""Which server each of the rehearsal's evaluations gets (configs/rehearsal/python4.yaml).

vllm serve of ``.venv-vllm`` for every evaluation but GLM-4.5's adapters; Gemma-4 with the campaign's
command line (the model folder itself, its own multimodal class, ``--language-model-only``); the
boundaries named with their reasons. The plans are the
campaign's own (``plan_server`` with the rehearsal's ``evaluation.serve``), as the DAG makes them.
"""

from __future__ import annotations

import pytest

from py4.evaluate.serve import plan_server
from py4.rehearsal.rehearse import Layout, load_rehearsal, rehearsal_spec

CAMPAIGN = "configs/campaign/python4.yaml"


@pytest.fixture(scope="module")
def serve(tmp_path_factory):
    config = load_rehearsal("configs/rehearsal/python4.yaml")
    spec = rehearsal_spec(config, CAMPAIGN, Layout(tmp_path_factory.mktemp("rehearsal")))
    return config, spec.evaluation.serve


def _plan(serve, key: str, adapter: bool):
    if adapter:
        return plan_server(serve, f"/c/{key}/iso/eft_4/model", name=f"{key}/iso/eft_4", base=f"/c/{key}/iso/sft/model",
                           model_key=key, scratch="/c/eval/x/served_model")
    return plan_server(serve, f"/c/{key}/iso/sft/model", name=f"{key}/iso/sft", model_key=key,
                       scratch="/c/eval/x/served_model")


@pytest.mark.parametrize("key", ["gemma4_12b", "gemma4_31b"])
@pytest.mark.parametrize("adapter", [False, True])
def test_gemma4_evaluations_are_served_by_vllm_as_its_own_class(serve, key, adapter):
    plan = _plan(serve[1], key, adapter)
    assert plan.engine == "vllm" and plan.argv[:3] == [".venv-vllm/bin/vllm", "serve", f"/c/{key}/iso/sft/model"]
    argv = plan.argv
    assert "--hf-overrides" not in argv and plan.servable_copy is None
    assert "--language-model-only" in argv and argv[argv.index("--tool-call-parser") + 1] == "gemma4"
    assert ("--enable-lora" in argv) == adapter
    assert argv[argv.index("--kv-cache-memory-bytes") + 1] == str(2 << 30)


def test_glm_evaluations_are_served_by_vllm_except_its_adapters(serve):
    model, adapter = _plan(serve[1], "glm45_air", False), _plan(serve[1], "glm45_air", True)
    assert model.engine == "vllm" and model.argv[:3] == [".venv-vllm/bin/vllm", "serve", "/c/glm45_air/iso/sft/model"]
    assert "--hf-overrides" not in model.argv and model.servable_copy is None
    assert model.argv[model.argv.index("--tensor-parallel-size") + 1] == "1"
    assert adapter.engine == "transformers" and "transformers.cli.transformers" in adapter.argv
    assert "--kv-cache-memory-bytes" not in adapter.argv  # vLLM's flags stay with vLLM


def test_each_boundary_is_named_with_its_reason(serve):
    boundaries = serve[0].boundaries
    assert "glm_moe_lora" in boundaries and not {"eval_server", "gemma4_multimodal_class"} & set(boundaries)
    assert "Triton" in boundaries["glm_moe_lora"].why and "eft_" in boundaries["glm_moe_lora"].why
    assert serve[1].engine == "vllm"
