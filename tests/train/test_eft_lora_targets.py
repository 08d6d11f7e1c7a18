"""The campaign's LoRA targets on Gemma-4 and GLM-4.5 stand-ins.

Gemma-4's vision tower has q/k/v/o and MLP projections of the same names as the language
model's, but they are ``Gemma4ClippableLinear``, which PEFT refuses as LoRA targets. The
campaign's EFT configs must adapt the language model's linears only, and the count of
adapted modules must be what the model config implies (the campaign recorded 328 / 410 / 184).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from py4.config import load_config, read_yaml
from py4.train import common

pytestmark = pytest.mark.smoke
ROOT = Path(__file__).resolve().parents[2]
GEMMA4_EFT = ["configs/train/gemma4_12b/eft.yaml", "configs/train/gemma4_31b/eft.yaml",
              "configs/train/gemma4_31b/eft512_warmstart.yaml"]
GLM_EFT = "configs/train/glm45_air/eft.yaml"


@pytest.fixture(scope="module")
def standins(tmp_path_factory) -> dict[str, Path]:
    """The rehearsal's -it stand-ins (GLM's with its MTP layer in the shards), as folders."""
    from py4.rehearsal.standins import build_standin

    root = tmp_path_factory.mktemp("standins")
    return {family: build_standin(family, "it", root / family, seed=0) for family in ("gemma4", "glm45")}


def load(folder: Path):
    """The stand-in as py4 train eft loads a parent (float32 on CPU)."""
    from py4.train import loading

    return loading.load_model(loading.ModelSource(path=str(folder)), loading.device_settings(False))


def model_at_depth(family: str, layers: int):
    """A tiny stand-in of ``family`` with ``layers`` decoder layers (the widths do not change the counts)."""
    from transformers import AutoModelForCausalLM

    from py4.rehearsal import standins

    tokenizer = standins.build_tokenizer(family)
    config_of = standins.gemma4_config if family == "gemma4" else standins.glm45_config
    return AutoModelForCausalLM.from_config(config_of(tokenizer, num_hidden_layers=layers))


def campaign_lora(path: str):
    from py4.train.eft import EFTConfig

    return load_config(EFTConfig, ROOT / path).lora


def lora_names(peft_model) -> list[str]:
    """Names (in the base model) of the modules PEFT gave a LoRA."""
    prefix = "base_model.model."
    return [name.removeprefix(prefix) for name, module in peft_model.named_modules()
            if hasattr(module, "lora_A") and len(module.lora_A)]


def linears_named(model, pattern: str, projections: list[str]) -> list[str]:
    """The model's plain Linear modules under ``pattern`` (a name prefix regex) named as a projection."""
    import re

    return [name for name, module in model.named_modules()
            if type(module) is torch.nn.Linear and re.match(pattern, name) and name.rsplit(".", 1)[-1] in projections]


def test_a_plain_projection_list_hits_the_vision_tower_and_peft_refuses_it(standins):
    # Why the campaign configs need a scope: the list alone also names the vision tower's
    # Gemma4ClippableLinear modules. py4 says so before PEFT does, naming the lora fields.
    from peft import get_peft_model

    from py4.train.eft import LoraSpec, check_lora_targets

    model = load(standins["gemma4"])
    with pytest.raises(common.TrainingGuardError, match=r"lora\.target_scope.*vision_tower.*Gemma4ClippableLinear"):
        check_lora_targets(model, LoraSpec())
    with pytest.raises(ValueError, match="Gemma4ClippableLinear"):
        get_peft_model(model, LoraSpec().peft_config())


@pytest.mark.parametrize("path", GEMMA4_EFT)
def test_campaign_gemma4_lora_adapts_exactly_the_language_model_linears(standins, path):
    from peft import get_peft_model

    from py4.train.eft import check_lora_targets, expected_adapted_modules

    spec = campaign_lora(path)
    model = load(standins["gemma4"])
    language = linears_named(model, r"model\.language_model\.layers\.\d+\.", spec.target_modules)
    # 6 layers x 7, less the v_proj of the one full-attention layer (attention_k_eq_v)
    assert expected_adapted_modules(model.config, spec) == len(language) == 41
    assert check_lora_targets(model, spec) == language
    peft_model = get_peft_model(model, spec.peft_config())  # raised "Gemma4ClippableLinear … not supported"
    assert lora_names(peft_model) == language
    assert not any("vision" in name for name, p in peft_model.named_parameters() if p.requires_grad)


def test_campaign_glm_lora_is_attention_only_and_spares_the_experts_and_mtp(standins):
    from peft import get_peft_model

    from py4.train.eft import check_lora_targets, expected_adapted_modules

    spec = campaign_lora(GLM_EFT)
    model = load(standins["glm45"])  # its shards hold the MTP layer model.layers.2.*; not loaded
    layers = model.config.num_hidden_layers
    attention = linears_named(model, r"model\.layers\.\d+\.self_attn\.", spec.target_modules)
    assert {int(name.split(".")[2]) for name in attention} == set(range(layers))
    assert expected_adapted_modules(model.config, spec) == len(attention) == layers * 4
    assert check_lora_targets(model, spec) == attention
    peft_model = get_peft_model(model, spec.peft_config())
    assert lora_names(peft_model) == attention
    assert not peft_model.peft_config["default"].target_parameters  # no remap onto the packed experts
    trainable = [name for name, p in peft_model.named_parameters() if p.requires_grad]
    assert trainable and all(".self_attn." in name and "lora_" in name for name in trainable)


def test_mlp_targets_on_a_mixture_of_experts_model_are_refused(standins):
    from py4.train.eft import LoraSpec, expected_adapted_modules

    config = load(standins["glm45"]).config
    with pytest.raises(common.TrainingGuardError, match=r"lora\.target_modules.*gate_proj.*mixture-of-experts"):
        expected_adapted_modules(config, LoraSpec(target_scope=r"model\.layers\.\d+\.(self_attn|mlp)"))


@pytest.mark.parametrize("model_key, path, family, layers", [
    # 60 layers is the 31B's depth, one full-attention layer in six; 48 layers with the same
    # pattern is what the 12B's recorded 328 implies; GLM-4.5-Air has 46 (+ the dropped MTP layer).
    ("gemma4_12b", GEMMA4_EFT[0], "gemma4", 48),
    ("gemma4_31b", GEMMA4_EFT[1], "gemma4", 60),
    ("gemma4_31b", GEMMA4_EFT[2], "gemma4", 60),
    ("glm45_air", GLM_EFT, "glm45", 46),
])
def test_adapted_counts_at_campaign_depth_match_the_campaign_record(model_key, path, family, layers):
    from peft import get_peft_model

    from py4.train.eft import expected_adapted_modules

    recorded = read_yaml(ROOT / "configs/campaign/python4.yaml")["models"][model_key]["recorded"]["adapted_modules"]
    spec = campaign_lora(path)
    model = model_at_depth(family, layers)
    assert expected_adapted_modules(model.config, spec) == recorded["value"]
    assert len(lora_names(get_peft_model(model, spec.peft_config()))) == recorded["value"]


def test_eft_on_the_gemma4_standin_trains_only_language_model_lora(standins, tmp_path):
    """py4 train eft with the 12B's own EFT config (size-only overrides) on the Gemma-4 stand-in:
    the adapted count is checked and recorded, and training moves the LoRA parameters only (3 steps:
    the first is warm-up at LR 0, the second moves lora_B away from zero, then lora_A gets a gradient).

    The chat template is the smoke one (it has generation markers): TRL's assistant-only loss
    refuses Gemma-4's own template (not this test's subject), the LoRA targets do not
    depend on it."""
    import shutil

    from transformers import AutoTokenizer

    from py4.chat import smoke_format
    from py4.train import eft

    from train_helpers import ParamSnapshot

    model_dir = tmp_path / "parent"
    shutil.copytree(standins["gemma4"], model_dir)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    tokenizer.chat_template = smoke_format.CHAT_TEMPLATE
    tokenizer.save_pretrained(model_dir)
    (model_dir / "chat_template.jinja").write_text(smoke_format.CHAT_TEMPLATE)
    rows = [{"messages": [{"role": "user", "content": f"Say {w}."}, {"role": "assistant", "content": f"{w} {w}."}],
             "tools": None, "source": "replay"} for w in ("one", "two", "three", "four")]
    (tmp_path / "dose").mkdir()
    (tmp_path / "dose" / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = load_config(eft.EFTConfig, ROOT / GEMMA4_EFT[0], [
        f"model.path={model_dir}", f"data.path={tmp_path / 'dose'}", "data.max_length=128",
        "optimisation.micro_batch=2", "optimisation.grad_accum=1", "optimisation.max_steps=3",
        "optimisation.learning_rate=0.01", f"run.output_dir={tmp_path / 'run'}", "run.report_to=[]",
        "run.save_steps=1000", "run.progress_bar=false"])
    snapshot = ParamSnapshot()
    result = eft.run(config, callbacks=[snapshot])

    assert result.global_step == 3 and result.adapted_modules == 41
    snapshot.assert_every_trainable_changed_and_nothing_else()
    assert all("lora_" in n and ".language_model.layers." in n for n in snapshot.trainable)
    manifest = json.loads((tmp_path / "run" / "run_manifest.json").read_text())
    assert manifest["lora"]["adapted_modules"] == 41


@pytest.mark.parametrize("override, field", [("lora.target_scope=(self_attn", "lora.target_scope"),
                                             ("lora.target_modules=[q_proj,experts]", "lora.target_modules")])
def test_a_bad_lora_field_is_refused_naming_file_and_field(override, field):
    from py4.config import ConfigError
    from py4.train.eft import EFTConfig

    with pytest.raises(ConfigError) as caught:
        load_config(EFTConfig, ROOT / GEMMA4_EFT[0], [override])
    assert GEMMA4_EFT[0] in str(caught.value) and field in str(caught.value)
