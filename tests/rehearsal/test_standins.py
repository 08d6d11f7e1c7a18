"""The rehearsal's stand-ins load back as the campaign's classes, with their templates and files."""

from __future__ import annotations

import json

import pytest

from py4.rehearsal.standins import FAMILY_CLASSES, build_standin, chat_template_text

pytestmark = pytest.mark.smoke


@pytest.fixture(scope="module")
def standins(tmp_path_factory):
    root = tmp_path_factory.mktemp("standins")
    return {(family, kind): build_standin(family, kind, root / f"{family}-{kind}", seed=0)
            for family in ("gemma4", "glm45") for kind in ("base", "it")}


def _tensor_names(folder) -> set[str]:
    from safetensors import safe_open

    names = set()
    for shard in folder.glob("*.safetensors"):
        with safe_open(str(shard), framework="pt") as handle:
            names.update(handle.keys())
    return names


@pytest.mark.parametrize("family", ["gemma4", "glm45"])
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
    if family == "gemma4":
        assert text.startswith("<bos><|turn>user\n") and "<|turn>model\nhello<turn|>" in text
        assert tokenizer.convert_tokens_to_ids("<|tool_call>") != tokenizer.unk_token_id
    else:
        assert text.startswith("[gMASK]<sop><|user|>") and "<|assistant|>" in text
        assert tokenizer.convert_tokens_to_ids("<arg_key>") is not None
    # Each template marker is one token, as in the real vocabularies.
    for marker in (("<|turn>", "<turn|>", "<|tool_call>", '<|"|>') if family == "gemma4"
                   else ("<|user|>", "<|assistant|>", "<tool_call>", "<arg_value>")):
        assert len(tokenizer.encode(marker, add_special_tokens=False)) == 1, marker

    ids = tokenizer(text, return_tensors="pt").input_ids
    with torch.no_grad():
        logits = model(input_ids=ids).logits
    assert logits.shape[-1] >= len(tokenizer)


def test_gemma4_standin_has_its_vision_tower(standins):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(standins[("gemma4", "it")])
    names = [name for name, _ in model.named_modules()]
    assert any(name.startswith("model.vision_tower.encoder.layers.") for name in names)
    assert any(type(m).__name__ == "Gemma4ClippableLinear" for m in model.modules())
    assert any(name.startswith("model.language_model.layers.") for name in names)


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
