"""`py4 campaign preflight` offline, against a Hugging Face cache laid out as the Hub's (the rehearsal's
hub_cache layout, pinned short revisions included) and holding what preflight fetches: the pinned
models' config.json (their real architecture fields, py4.train.model_shape.PINNED_CONFIGS), -it
tokenizers carrying the chat templates TRL recognises, a safetensors index and headers. No network.

The checks run on the real components: TRL's template recognition, py4's tool-call parsers on the
template's own rendering, PEFT's target rule over the names transformers builds (328 / 410 / 184),
the memory plan. A template one character off, a tensor whose shape differs between base and -it,
or an adapted module the checkpoint lacks each turn the runs they concern to no-go."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from py4.campaign.dag import build_dag, select
from py4.campaign.preflight import pinned_models, run_checks
from py4.campaign.spec import load_campaign
from py4.rehearsal.hub_cache import install_snapshot
from py4.train.model_shape import HEADERS_FILE, PINNED_CONFIGS, model_shape

ROOT = Path(__file__).resolve().parents[2]
FAMILY = {"gemma4_12b": "gemma4", "gemma4_31b": "gemma4", "glm45_air": "glm45"}


@pytest.fixture(scope="module")
def tokenizers():
    import trl.chat_template_utils as trl_templates

    from py4.rehearsal.standins import build_tokenizer

    out = {}
    for family, template in (("gemma4", trl_templates.gemma4_chat_template),
                             ("glm45", trl_templates.glm4moe_chat_template)):
        tokenizer = build_tokenizer(family)
        tokenizer.chat_template = template  # the exact text TRL 1.16 ships and recognises
        out[family] = tokenizer
    return out


def _headers(config: dict) -> dict:
    return json.loads(_headers_text(json.dumps(config, sort_keys=True)))


@functools.lru_cache(maxsize=8)
def _headers_text(config_text: str) -> str:
    """The safetensors headers of ``config``'s model: every tensor transformers builds, in bf16."""
    config = json.loads(config_text)
    shape = model_shape(config)
    import torch
    from transformers import AutoModelForCausalLM
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(
            CONFIG_MAPPING[config["model_type"]](**{k: v for k, v in config.items() if k != "model_type"}))
    tensors = {n: {"dtype": "BF16", "shape": list(p.shape)} for n, p in model.named_parameters()}
    assert len(tensors) == len(shape.tensors)
    return json.dumps({"model.safetensors": tensors})


def _cache(tmp_path, tokenizers, monkeypatch, edit=None) -> Path:
    """The cache preflight leaves: every pinned reference of python4.yaml, ``edit(key, pin, folder)`` last."""
    import huggingface_hub.constants as hub_constants

    spec = load_campaign(ROOT / "configs/campaign/python4.yaml", [f"out_dir={tmp_path / 'out'}"])
    cache = tmp_path / "hub"
    for key, refs in pinned_models(spec).items():
        for repo, revision in refs:
            folder = tmp_path / "src" / repo.replace("/", "--") / str(revision)
            folder.mkdir(parents=True, exist_ok=True)
            config = PINNED_CONFIGS[repo]["config"]
            (folder / "config.json").write_text(json.dumps(config))
            tokenizers[FAMILY[key]].save_pretrained(str(folder))
            headers = _headers(config)
            (folder / HEADERS_FILE).write_text(json.dumps(headers))
            weight_map = {name: "model.safetensors" for name in headers["model.safetensors"]}
            (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
            if edit is not None:
                edit(key, repo, folder)
            install_snapshot(cache, repo, revision, folder, main=False)
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    monkeypatch.chdir(ROOT)
    return cache


def _report(tmp_path, only="gemma4_31b/prop/grpo*"):
    spec = load_campaign(ROOT / "configs/campaign/python4.yaml", [f"out_dir={tmp_path / 'out'}"])
    nodes = build_dag(spec, check=True)
    return run_checks(spec, select(nodes, only))


def test_preflight_goes_on_the_pinned_metadata(tmp_path, tokenizers, monkeypatch):
    _cache(tmp_path, tokenizers, monkeypatch)
    report = _report(tmp_path)
    failed = [c.to_json() for c in report.checks if not c.ok]
    assert not failed, failed
    lora = {c.model: c.detail for c in report.checks if c.name == "EFT LoRA targets"}
    assert lora == {"gemma4_12b": "328 adapted modules (recorded 328)",
                    "gemma4_31b": "410 adapted modules (recorded 410)",
                    "glm45_air": "184 adapted modules (recorded 184)"}
    grpo = [c for c in report.checks if c.name == "GRPO template (TRL)"]
    assert [c.model for c in grpo] == ["gemma4_31b"] and "add_response_schema" in grpo[0].detail
    assert report.runs and all(r["go"] for r in report.runs) and report.go
    assert all(r["config_source"].startswith("HF cache") for r in report.runs)  # the plan used the fetched config


def test_a_template_trl_does_not_know_stops_grpo(tmp_path, tokenizers, monkeypatch):
    def edit(key, repo, folder):
        if repo == "google/gemma-4-31B-it":
            config = json.loads((folder / "tokenizer_config.json").read_text())
            if "chat_template" in config:
                config["chat_template"] = config["chat_template"].replace("<start_of_turn>", "<start_of_turn> ", 1)
                (folder / "tokenizer_config.json").write_text(json.dumps(config))
            template = folder / "chat_template.jinja"
            if template.exists():
                template.write_text(template.read_text().replace("<|turn>", "<|turn> ", 1))

    _cache(tmp_path, tokenizers, monkeypatch, edit)
    report = _report(tmp_path)
    (grpo,) = [c for c in report.checks if c.name == "GRPO template (TRL)"]
    assert not grpo.ok and "add_response_schema" in grpo.detail
    assert report.runs and not any(r["go"] for r in report.runs)
    assert all("TRL's GRPO template check failed" in r["why"] for r in report.runs)


def test_graft_and_lora_disagreements_are_named(tmp_path, tokenizers, monkeypatch):
    def edit(key, repo, folder):
        if repo == "zai-org/GLM-4.5-Air":
            headers = json.loads((folder / HEADERS_FILE).read_text())
            headers["model.safetensors"]["model.embed_tokens.weight"]["shape"] = [151553, 4096]
            (folder / HEADERS_FILE).write_text(json.dumps(headers))
            index = json.loads((folder / "model.safetensors.index.json").read_text())
            del index["weight_map"]["model.layers.3.self_attn.q_proj.weight"]
            (folder / "model.safetensors.index.json").write_text(json.dumps(index))

    _cache(tmp_path, tokenizers, monkeypatch, edit)
    report = _report(tmp_path, only="glm45_air/iso/eft_256")
    checks = {(c.model, c.name): c for c in report.checks}
    graft = checks[("glm45_air", "graft base vs -it")]
    assert not graft.ok and "model.embed_tokens.weight" in graft.detail
    lora = checks[("glm45_air", "EFT LoRA targets")]
    assert not lora.ok and "model.layers.3.self_attn.q_proj" in lora.detail
    assert [r["go"] for r in report.runs] == [False]
