"""Which server each of the rehearsal's evaluations gets (configs/rehearsal/python4.yaml).

vllm serve of ``.venv-vllm`` for every evaluation, with the campaign's command line: Gemma-4's the
model folder itself, its own multimodal class, ``--language-model-only``; GLM-4.5's adapters merged
into their base instead of served as LoRA modules (the ``glm_moe_lora`` boundary, which changes those
nine evaluation nodes and nothing else); the boundaries named with their reasons. The plans are the
campaign's own (``plan_server`` with the rehearsal's ``evaluation.serve``), as the DAG makes them.
"""

from __future__ import annotations

import pytest

from py4.evaluate.serve import plan_server
from py4.rehearsal.rehearse import Layout, load_rehearsal, rehearsal_nodes, rehearsal_spec

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


def test_glm_evaluations_are_served_by_vllm_its_adapters_merged(serve):
    model, adapter = _plan(serve[1], "glm45_air", False), _plan(serve[1], "glm45_air", True)
    assert model.engine == "vllm" and model.argv[:3] == [".venv-vllm/bin/vllm", "serve", "/c/glm45_air/iso/sft/model"]
    assert "--hf-overrides" not in model.argv and model.servable_copy is None
    assert model.argv[model.argv.index("--tensor-parallel-size") + 1] == "1"
    # the adapter: the same vllm serve of its merged copy, no LoRA module
    assert adapter.engine == "vllm" and adapter.argv[:3] == [".venv-vllm/bin/vllm", "serve", "/c/eval/x/served_model"]
    assert adapter.servable_copy == "/c/eval/x/served_model" and "--enable-lora" not in adapter.argv
    assert adapter.argv[adapter.argv.index("--kv-cache-memory-bytes") + 1] == str(2 << 30)
    assert adapter.argv[adapter.argv.index("--reasoning-parser") + 1] == "glm45"


def _servers(config, tmp_path):
    layout = Layout(tmp_path)
    return {n.id: n for n in rehearsal_nodes(rehearsal_spec(config, CAMPAIGN, layout), config, layout)}


def _served(node):
    return node.server, node.overrides, node.options


def test_the_glm_lora_boundary_changes_the_servers_of_glm_adapter_evaluations_only(tmp_path):
    """The rehearsal's DAG with the boundary against the one without it (the campaign's serving):
    the nodes that differ are GLM-4.5's EFT adapter evaluations, one per arm and dose above 0, and in
    them the server's folder and LoRA flags only."""
    config = load_rehearsal("configs/rehearsal/python4.yaml")
    without = config.model_copy(update={"boundaries": {k: b for k, b in config.boundaries.items()
                                                       if k != "glm_moe_lora"}})
    bounded, campaign = _servers(config, tmp_path / "a"), _servers(without, tmp_path / "a")
    assert bounded.keys() == campaign.keys()
    spec = rehearsal_spec(config, CAMPAIGN, Layout(tmp_path / "a"))
    doses = [*(d for d in spec.eft.doses if d > 0), spec.eft.matrix_dose]
    covered = {f"eval:glm45_air/{arm}/eft_{dose}" for arm in spec.arms for dose in doses}
    changed = {i for i, n in bounded.items() if _served(n) != _served(campaign[i])}
    with_lora = {i for i, n in campaign.items() if n.server and "--enable-lora" in n.server.argv}
    assert changed == covered == {i for i in with_lora if i.startswith("eval:glm45_air/")} and len(covered) == 9
    for node_id in covered:
        plan, lora = bounded[node_id].server, campaign[node_id].server
        flags = ["--enable-lora", "--max-lora-rank", "64", "--lora-modules", f"{plan.request_model}={plan.weights}"]
        assert lora.argv == [plan.argv[0], "serve", plan.base, "--served-model-name", f"{plan.request_model}.base",
                             *plan.argv[5:plan.argv.index("--kv-cache-memory-bytes")], *flags,
                             *plan.argv[plan.argv.index("--kv-cache-memory-bytes"):]]
        assert plan.argv[2] == plan.servable_copy and plan.argv[4] == plan.request_model
        assert (plan.engine, plan.weights, plan.base) == (lora.engine, lora.weights, lora.base)


def test_each_boundary_is_named_with_its_reason(serve):
    boundaries = serve[0].boundaries
    assert "glm_moe_lora" in boundaries and not {"eval_server", "gemma4_multimodal_class"} & set(boundaries)
    assert "Triton" in boundaries["glm_moe_lora"].why and "eft_" in boundaries["glm_moe_lora"].why
    assert serve[1].engine == "vllm"
