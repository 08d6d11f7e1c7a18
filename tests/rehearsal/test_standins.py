"""The rehearsal's stand-ins load back as the campaign's classes, with their templates and files, and
keep the real architectures (``PINNED_CONFIGS``: the pinned repos' config.json) except for sizes."""

from __future__ import annotations

import json

import pytest

from py4.rehearsal.standins import (FAMILIES, FAMILY_CLASSES, FAMILY_CONFIGS, GEMMA4_MEDIA_TOKENS, GEMMA4_PROCESSORS,
                                    SIZE_CHANGES, build_standin, build_tokenizer, chat_template_text,
                                    real_text_config)

pytestmark = pytest.mark.smoke


@pytest.fixture(scope="module")
def standins(tmp_path_factory):
    root = tmp_path_factory.mktemp("standins")
    return {(family, kind): build_standin(family, kind, root / f"{family}-{kind}", seed=0)
            for family in FAMILIES for kind in ("base", "it")}


def _meta_model(family: str, layers: int | None = None):
    import torch
    from transformers import AutoModelForCausalLM

    tokenizer = build_tokenizer(family)
    config = FAMILY_CONFIGS[family](tokenizer, **({"num_hidden_layers": layers} if layers else {}))
    with torch.device("meta"):
        return AutoModelForCausalLM.from_config(config)


@pytest.mark.parametrize("family", ["gemma4", "gemma4_12b"])
def test_gemma4_standin_attention_has_the_real_head_dims_and_kv_heads_per_layer_type(family):
    real = real_text_config(family)
    model = _meta_model(family)
    text = model.config.get_text_config(decoder=True)
    assert text.layer_types == real["layer_types"][:len(text.layer_types)]
    assert {"sliding_attention", "full_attention"} <= set(text.layer_types)
    layers = model.model.language_model.layers
    for kind, layer in zip(text.layer_types, layers, strict=True):
        attn = layer.self_attn
        head_dim = real["global_head_dim"] if kind == "full_attention" else real["head_dim"]
        kv_heads = real["num_global_key_value_heads"] if kind == "full_attention" else real["num_key_value_heads"]
        assert attn.q_proj.out_features == real["num_attention_heads"] * head_dim, (kind, "q")
        assert attn.k_proj.out_features == kv_heads * head_dim, (kind, "k")
        # attention_k_eq_v: the full-attention layers have no v_proj (keys are the values)
        assert (getattr(attn, "v_proj", None) is None) == (kind == "full_attention" and real["attention_k_eq_v"])
    # per-layer embeddings as the real config has them (hidden_size_per_layer_input 0: none)
    assert text.hidden_size_per_layer_input == real["hidden_size_per_layer_input"] == 0
    assert not any("per_layer" in name for name, _ in model.named_parameters())
    assert model.config.tie_word_embeddings == real["tie_word_embeddings"]
    assert text.final_logit_softcapping == real["final_logit_softcapping"]


def test_the_12b_standin_is_the_unified_class():
    model = _meta_model("gemma4_12b")
    assert type(model).__name__ == "Gemma4UnifiedForConditionalGeneration"
    assert model.config.model_type == "gemma4_unified"
    names = [name for name, _ in model.named_modules()]
    assert not any("vision_tower" in name for name in names)  # encoder-free: embedders, no tower
    assert any(name.startswith("model.embed_vision") for name in names)


@pytest.mark.parametrize("family", sorted(SIZE_CHANGES))
def test_standin_config_differs_from_the_real_one_only_in_its_listed_sizes(family):
    from py4.rehearsal.standins import standin_text_fields

    real = real_text_config(family)
    fields = standin_text_fields(family, vocab=1152)
    changed = {k for k in real if k not in ("model_type", "architectures") and fields.get(k) != real[k]}
    assert changed <= set(SIZE_CHANGES[family]) | {"layer_types"}
    if "layer_types" in real:
        assert fields["layer_types"] == real["layer_types"][:fields["num_hidden_layers"]]


def test_glm45_standin_keeps_the_real_routing():
    real = real_text_config("glm45")
    config = _meta_model("glm45").config
    for key in ("num_experts_per_tok", "n_shared_experts", "first_k_dense_replace", "num_attention_heads",
                "num_key_value_heads", "head_dim", "attention_bias", "norm_topk_prob",
                "routed_scaling_factor", "num_nextn_predict_layers", "tie_word_embeddings", "n_group", "topk_group"):
        assert getattr(config, key) == real[key], key
    # transformers 5 keeps partial_rotary_factor in rope_parameters
    assert config.rope_parameters["partial_rotary_factor"] == real["partial_rotary_factor"]
    assert config.n_routed_experts > config.num_experts_per_tok  # top-8 still chooses among experts


@pytest.mark.parametrize(("family", "layers", "eft_config", "expected"), [
    ("gemma4_12b", 48, "configs/train/gemma4_12b/eft.yaml", 48 * 7 - 8),
    ("gemma4", 60, "configs/train/gemma4_31b/eft.yaml", 60 * 7 - 10),
    ("glm45", 46, "configs/train/glm45_air/eft.yaml", 46 * 4),
])
def test_adapted_module_counts_on_the_standin_names_with_the_real_layer_count(family, layers, eft_config, expected):
    from py4.config import read_yaml
    from py4.train.eft import LoraSpec, check_lora_targets, expected_adapted_modules

    real = real_text_config(family)
    assert real["num_hidden_layers"] == layers
    spec = LoraSpec(**read_yaml(eft_config)["lora"])
    model = _meta_model(family, layers=layers)
    assert len(check_lora_targets(model, spec)) == expected_adapted_modules(model.config, spec) == expected


def _tensor_names(folder) -> set[str]:
    from safetensors import safe_open

    names = set()
    for shard in folder.glob("*.safetensors"):
        with safe_open(str(shard), framework="pt") as handle:
            names.update(handle.keys())
    return names


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("kind", ["base", "it"])
def test_standin_loads_with_the_campaign_class_and_template(standins, family, kind):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = standins[(family, kind)]
    model = AutoModelForCausalLM.from_pretrained(folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    assert type(model).__name__ == FAMILY_CLASSES[family]
    assert model.dtype == torch.bfloat16
    assert tokenizer.chat_template == chat_template_text(family)
    assert len(list(folder.glob("model-*.safetensors"))) > 1
    assert json.loads((folder / "model.safetensors.index.json").read_text())["weight_map"]

    conversation = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    text = tokenizer.apply_chat_template(conversation, tokenize=False)
    if family.startswith("gemma4"):
        assert text.startswith("<bos><|turn>user\n") and "<|turn>model\nhello<turn|>" in text
        assert tokenizer.convert_tokens_to_ids("<|tool_call>") != tokenizer.unk_token_id
    else:
        assert text.startswith("[gMASK]<sop><|user|>") and "<|assistant|>" in text
        assert tokenizer.convert_tokens_to_ids("<arg_key>") is not None
    # Each template marker is one token, as in the real vocabularies.
    for marker in (("<|turn>", "<turn|>", "<|tool_call>", '<|"|>') if family.startswith("gemma4")
                   else ("<|user|>", "<|assistant|>", "<tool_call>", "<arg_value>")):
        assert len(tokenizer.encode(marker, add_special_tokens=False)) == 1, marker

    ids = tokenizer(text, return_tensors="pt").input_ids
    with torch.no_grad():
        logits = model(input_ids=ids).logits
    assert logits.shape[-1] >= len(tokenizer)
    # what the folder is made of, and that its template and tokenizer are not the pinned revision's own
    record = json.loads((folder / "standin.json").read_text())
    assert record["class"] == FAMILY_CLASSES[family] and record["real_model"]
    assert record["files"]["chat_template.jinja"]["pinned"] is False


def test_gemma4_standin_has_its_vision_tower(standins):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(standins[("gemma4", "it")])
    names = [name for name, _ in model.named_modules()]
    assert any(name.startswith("model.vision_tower.encoder.layers.") for name in names)
    assert any(type(m).__name__ == "Gemma4ClippableLinear" for m in model.modules())
    assert any(name.startswith("model.language_model.layers.") for name in names)


@pytest.mark.parametrize("family", ["gemma4", "gemma4_12b"])
@pytest.mark.parametrize("kind", ["base", "it"])
def test_gemma4_standin_has_the_processor_files_and_media_tokens_its_processor_reads(standins, family, kind):
    """vLLM's multimodal Gemma-4 classes build the processor when they start: its settings come from
    processor_config.json, its media tokens from the tokenizer (tests/real_vllm builds it in .venv-vllm)."""
    from transformers import AutoTokenizer

    folder = standins[(family, kind)]
    processor = json.loads((folder / "processor_config.json").read_text())
    assert processor == GEMMA4_PROCESSORS[family]
    assert processor["processor_class"] == {"gemma4": "Gemma4Processor", "gemma4_12b": "Gemma4UnifiedProcessor"}[family]
    vision = json.loads((folder / "config.json").read_text())["vision_config"]
    for key in ("patch_size", "pooling_kernel_size"):  # what the image processor's patching assumes
        assert vision.get(key, processor["image_processor"][key]) == processor["image_processor"][key]
    tokenizer = AutoTokenizer.from_pretrained(folder)
    plain = build_tokenizer(family)
    for role, token in GEMMA4_MEDIA_TOKENS.items():
        assert getattr(tokenizer, role) == token
        assert getattr(tokenizer, f"{role}_id") == plain.convert_tokens_to_ids(token)
    assert len(tokenizer) == len(plain)
    record = json.loads((folder / "standin.json").read_text())
    assert record["files"]["processor_config.json"]["pinned"] is False


def test_glm45_standin_has_no_processor_files(standins):
    assert not (standins[("glm45", "it")] / "processor_config.json").exists()


def test_glm45_standin_files_carry_the_mtp_layer_that_transformers_drops(standins):
    from transformers import AutoModelForCausalLM

    folder = standins[("glm45", "base")]
    config = json.loads((folder / "config.json").read_text())
    mtp_prefix = f"model.layers.{config['num_hidden_layers']}."
    in_files = {n for n in _tensor_names(folder) if n.startswith(mtp_prefix)}
    assert {mtp_prefix + "eh_proj.weight", mtp_prefix + "enorm.weight", mtp_prefix + "hnorm.weight",
            mtp_prefix + "shared_head.norm.weight", mtp_prefix + "mlp.experts.0.gate_proj.weight"} <= in_files
    index = json.loads((folder / "model.safetensors.index.json").read_text())["weight_map"]
    assert in_files <= set(index)

    model = AutoModelForCausalLM.from_pretrained(folder)
    assert not any(n.startswith(mtp_prefix) for n in model.state_dict())
    assert len([m for m in model.modules() if type(m).__name__ == "Glm4MoeDecoderLayer"]) == \
        config["num_hidden_layers"]


def test_it_differs_from_base_by_a_seeded_delta_and_builds_are_deterministic(standins, tmp_path):
    from safetensors.torch import load_file

    def weights(folder):
        out = {}
        for shard in sorted(folder.glob("*.safetensors")):
            out.update(load_file(shard))
        return out

    base, it = weights(standins[("glm45", "base")]), weights(standins[("glm45", "it")])
    assert base.keys() == it.keys()
    buffers = ("e_score_correction_bias",)  # router bias: a buffer, not a trained weight
    assert all(not base[n].equal(it[n]) for n in base if not n.endswith(buffers))
    again = weights(build_standin("glm45", "base", tmp_path / "again", seed=0))
    assert again.keys() == base.keys() and all(again[n].equal(base[n]) for n in base)


def test_the_rehearsal_report_names_each_file_that_is_not_the_pinned_one(standins, tmp_path):
    from py4.rehearsal.report import not_proven, write_report

    found = not_proven(standins[("gemma4_12b", "it")].parent)
    assert set(found) == {f"{family}-{kind}" for family in FAMILIES for kind in ("base", "it")}
    assert "trl/chat_templates/gemma4_v5.jinja" in found["gemma4_12b-it"]["chat_template.jinja"]
    assert "google/gemma-4-12B-it" in found["gemma4_12b-it"]["chat_template.jinja"]
    report = {"campaign": "c.yaml", "out": str(tmp_path), "seconds": 0, "counts": {}, "boundaries": {},
              "nodes": [], "not_proven": found}
    _, md = write_report(report, tmp_path)
    text = md.read_text()
    assert "## Not proven here" in text and "glm45-it `chat_template.jinja`: trl/chat_templates/glm4moe.jinja" in text
