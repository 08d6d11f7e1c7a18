"""Which server an evaluation gets: per-model adapter engines, vLLM architectures and the text-only copy.

The CPU rehearsal serves every evaluation with vLLM except GLM-4.5's adapters (their LoRA runs the
MoE on Triton) and serves Gemma-4 as vLLM's text-only ``Gemma4ForCausalLM`` from a copy of its folder
without the vision and audio tensors (configs/rehearsal/python4.yaml, ``boundaries``).
"""

from __future__ import annotations

import json
import shlex

import pytest

from py4.evaluate.serve import ServeConfig, ServerPlan, plan_server, servable_copy

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


def test_architecture_serves_a_text_only_copy_with_hf_overrides_and_keeps_the_rest_of_the_command():
    config = _config(architecture={"gemma": "Gemma4ForCausalLM"}, language_model_only={"gemma": True})
    plan = plan_server(config, "/r/gemma/eft_4/model", name="gemma/iso/eft_4", base="/r/gemma/sft/model",
                       model_key="gemma", scratch="/r/eval/x/served_model")
    argv = plan.argv
    assert argv[:3] == [VLLM, "serve", "/r/eval/x/served_model"]  # the copy of the base, not the base
    assert json.loads(argv[argv.index("--hf-overrides") + 1]) == {"architectures": ["Gemma4ForCausalLM"]}
    assert "--language-model-only" in argv and argv[argv.index("--tool-call-parser") + 1] == "gemma4"
    assert argv[argv.index("--lora-modules") + 1] == "gemma-iso-eft_4=/r/gemma/eft_4/model"  # the adapter as it is
    assert (plan.servable_copy, plan.architecture, plan.base) == ("/r/eval/x/served_model", "Gemma4ForCausalLM",
                                                                  "/r/gemma/sft/model")
    assert shlex.split(plan.command) == argv  # the JSON survives the recorded command line
    glm = plan_server(config, "/r/glm/sft/model", name="glm/iso/sft", model_key="glm")
    assert "--hf-overrides" not in glm.argv and glm.servable_copy is None


@pytest.mark.parametrize(("fields", "message"), [
    ({"engine": "transformers", "adapter_engine": {"glm": "vllm"}}, "executable: engine vllm"),
    ({"engine": "vllm", "executable": VLLM, "architecture": {"gemma": "Gemma4ForCausalLM; rm"}}, "architecture.gemma"),
])
def test_serve_config_refuses_a_vllm_engine_without_its_program_and_an_architecture_that_is_no_class(fields, message):
    with pytest.raises(ValueError, match=message):
        ServeConfig(**fields)


def _write_folder(folder, shards: dict[str, dict]) -> None:
    import torch
    from safetensors.torch import save_file

    folder.mkdir(parents=True)
    weight_map = {}
    for shard, names in shards.items():
        save_file({n: torch.full((2, 3), float(i), dtype=torch.bfloat16) for i, n in enumerate(names)},
                  folder / shard, metadata={"format": "pt"})
        weight_map.update({n: shard for n in names})
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": 1},
                                                                     "weight_map": weight_map}))
    (folder / "config.json").write_text('{"architectures": ["Gemma4UnifiedForConditionalGeneration"]}')
    (folder / "tokenizer.json").write_text("{}")
    (folder / "checkpoint-2").mkdir()


def test_text_only_copy_keeps_every_file_and_the_language_model_tensors_and_drops_the_towers(tmp_path):
    from safetensors.torch import load_file

    base = tmp_path / "sft"
    _write_folder(base, {
        "model-00001-of-00002.safetensors": {"model.language_model.embed_tokens.weight": 0,
                                             "model.vision_embedder.patch_dense.weight": 0},
        "model-00002-of-00002.safetensors": {"model.language_model.layers.0.mlp.up_proj.weight": 0,
                                             "model.embed_vision.embedding_projection.weight": 0,
                                             "model.vision_tower.encoder.weight": 0,
                                             "model.audio_tower.conv.weight": 0,
                                             "model.embed_audio.embedding_projection.weight": 0}})
    plan = ServerPlan([VLLM, "serve"], "http://h:1/v1", "x.base", weights=str(tmp_path / "adapter"), base=str(base),
                      servable_copy=str(tmp_path / "served_model"), architecture="Gemma4ForCausalLM", engine="vllm")
    copy = servable_copy(plan)

    shards = ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")
    kept = {**load_file(copy / shards[0]), **load_file(copy / shards[1])}
    assert sorted(kept) == ["model.language_model.embed_tokens.weight",
                            "model.language_model.layers.0.mlp.up_proj.weight"]
    original = {**load_file(base / shards[0]), **load_file(base / shards[1])}
    assert all(kept[n].dtype == original[n].dtype and kept[n].equal(original[n]) for n in kept)
    index = json.loads((copy / "model.safetensors.index.json").read_text())
    assert sorted(index["weight_map"]) == sorted(kept)
    assert index["metadata"]["total_size"] == sum(t.numel() * t.element_size() for t in kept.values())
    for name in ("config.json", "tokenizer.json"):
        assert (copy / name).read_bytes() == (base / name).read_bytes()
    assert not (copy / "checkpoint-2").exists()
    record = json.loads((copy / "py4_served_copy.json").read_text())
    assert record["dropped_tensors"] == 5 and record["architecture"] == "Gemma4ForCausalLM"
