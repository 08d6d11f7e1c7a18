"""The GRPO trainer's vLLM weight sync: exact merged weights, a frozen base left bit-identical.

The walk under test is TRL 1.16's own ``VLLMGeneration`` (an instance made without its
``__init__``, which would start vLLM) with py4's override, on a real PEFT LoRA model in bf16;
TRL's unmodified walk (merge, stream, unmerge) is run the same way to show the drift the override
removes. 130 walks, the count the drift was measured over: the LoRA weights change between syncs as
training changes them, and each segment's first sync walks twice (metadata, then weights).
"""

from __future__ import annotations

import pytest
import torch

from accelerate import Accelerator
from peft import LoraConfig, get_peft_model
from trl.distributed import DistributedBackend
from trl.generation.vllm_generation import VLLMGeneration

from py4.train.weight_sync import WeightSyncError, exact_sync_class, use_exact_sync

CYCLES = 130


class Block(torch.nn.Module):
    def __init__(self, size: int):
        super().__init__()
        self.proj = torch.nn.Linear(size, size, bias=True)
        self.head = torch.nn.Linear(size, 4, bias=False)


def lora_model(size: int, rank: int, seed: int = 0):
    torch.manual_seed(seed)
    base = Block(size).to(torch.bfloat16)
    model = get_peft_model(base, LoraConfig(r=rank, lora_alpha=2 * rank, target_modules=["proj"], lora_bias=True))
    train_step(model, 0)
    return model


def train_step(model, step: int) -> None:
    """A stand-in optimiser step: new LoRA weights (the base is never trained)."""
    gen = torch.Generator().manual_seed(1000 + step)
    for name, param in model.named_parameters():
        if "lora_" in name:
            param.data = (torch.randn(param.shape, generator=gen) * 0.02).to(param.dtype)


def generation(model, cls=VLLMGeneration):
    """TRL's VLLMGeneration (or py4's subclass) around ``model``, without starting vLLM."""
    gen = object.__new__(cls)
    gen.model, gen.accelerator = model, Accelerator(cpu=True)
    gen._dist = DistributedBackend(gen.accelerator)
    return gen


def reference(model, base: dict[str, torch.Tensor] | None = None) -> dict[str, torch.Tensor]:
    """W + scale·B·A (and b + scale·b_B) in fp32, cast once — computed here from the modules; with
    ``base`` (:func:`frozen`'s), from those base weights and the model's LoRA."""
    layer = model.base_model.model.proj
    base = base or frozen(model)
    scale = layer.scaling["default"]
    w = base["base_model.model.proj.base_layer.weight"].float() + (
        layer.lora_B["default"].weight.float() @ layer.lora_A["default"].weight.float()) * scale
    b = base["base_model.model.proj.base_layer.bias"].float() + layer.lora_B["default"].bias.float() * scale
    return {"proj.weight": w.to(torch.bfloat16), "proj.bias": b.to(torch.bfloat16),
            "head.weight": base["base_model.model.head.weight"]}


def frozen(model) -> dict[str, torch.Tensor]:
    return {n: p.detach().clone() for n, p in model.named_parameters() if "lora_" not in n}


def sync_cycles(model, gen) -> tuple[dict, int]:
    """Run CYCLES walks (two per segment start), a training step between syncs; the base after, and
    how many walks sent exactly the reference merge of the weights they saw (TRL's names)."""
    exact, step = 0, 0
    for cycle in range(CYCLES):
        ref = reference(model)
        sent = dict(gen._iter_named_params())
        exact += sorted(sent) == sorted(ref) and all(
            sent[n].dtype == torch.bfloat16 and torch.equal(sent[n], ref[n]) for n in ref)
        if cycle not in (0, 64):  # the first sync of each segment walks twice (metadata, then weights)
            step += 1
            train_step(model, step)
    return frozen(model), exact


@pytest.mark.parametrize("size,rank", [(256, 16)])
def test_exact_sync_leaves_the_base_bit_identical_and_sends_the_reference_merge(size, rank):
    model = lora_model(size, rank)
    before = frozen(model)
    after, exact = sync_cycles(model, generation(model, exact_sync_class(VLLMGeneration)))
    assert all(torch.equal(before[n], after[n]) for n in before)
    assert exact == CYCLES


def test_trl_merge_unmerge_walk_drifts_the_bf16_base():
    """The unmodified TRL walk on the same model and schedule moves the frozen base (so the test above
    can fail): PEFT merges and unmerges in bf16."""
    model = lora_model(256, 16)
    before = frozen(model)
    after, exact = sync_cycles(model, generation(model))
    assert exact < CYCLES
    weight = "base_model.model.proj.base_layer.weight"
    assert not torch.equal(before[weight], after[weight])
    assert (before[weight] != after[weight]).float().mean() > 0.001


def test_use_exact_sync_swaps_the_walk_of_a_vllm_trainer_only():
    model = lora_model(32, 4)

    class Trainer:
        use_vllm, vllm_generation = True, generation(model)

    assert use_exact_sync(Trainer) and type(Trainer.vllm_generation).__qualname__.startswith("ExactSync")
    assert isinstance(Trainer.vllm_generation, VLLMGeneration)
    assert use_exact_sync(Trainer)  # a second call keeps the one subclass
    assert type(Trainer.vllm_generation).__mro__[1] is VLLMGeneration

    class Plain:
        use_vllm = False

    assert not use_exact_sync(Plain)


def test_dora_is_refused_rather_than_sent_wrong():
    torch.manual_seed(0)
    model = get_peft_model(Block(16).to(torch.bfloat16), LoraConfig(r=2, target_modules=["proj"], use_dora=True))
    gen = generation(model, exact_sync_class(VLLMGeneration))
    with pytest.raises(WeightSyncError, match="variant"):
        list(gen._iter_named_params())


@pytest.mark.slow
def test_exact_sync_at_full_width():
    model = lora_model(4096, 64)
    before = frozen(model)
    after, exact = sync_cycles(model, generation(model, exact_sync_class(VLLMGeneration)))
    assert all(torch.equal(before[n], after[n]) for n in before)
    assert exact == CYCLES


class ServerClient:
    """``trl vllm-serve``'s client as TRL's server-mode sync uses it: the tensors it was sent."""

    def __init__(self):
        self.pushes, self.metadata = [], None

    def update_named_params(self, metadata, named_params):
        self.metadata = metadata
        self.pushes.append({name: tensor.clone() for name, tensor in named_params})

    def reset_prefix_cache(self):
        pass


class ColocatedModel:
    """vLLM's model in the trainer's process as TRL's colocate sync feeds it (``load_weights``, one
    tensor at a time, as on a GPU)."""

    def __init__(self):
        self.pushes: list[dict] = []

    def load_weights(self, weights):
        self.pushes[-1].update({name: tensor.clone() for name, tensor in weights})


def synced(model, cls, mode: str):
    """TRL's ``sync_weights`` in ``mode`` around ``model``, into a recording server or engine."""
    from types import SimpleNamespace

    gen = generation(model, cls)
    gen.mode, gen.enable_sleep_mode, gen._weight_metadata = mode, False, None
    gen.vllm_client = ServerClient()
    engine = ColocatedModel()
    runner = SimpleNamespace(model_runner=SimpleNamespace(model=engine))
    gen.llm = SimpleNamespace(reset_prefix_cache=lambda: None,
                              llm_engine=SimpleNamespace(model_executor=SimpleNamespace(driver_worker=runner)))
    return gen, (gen.vllm_client.pushes if mode == "server" else engine.pushes)


@pytest.mark.parametrize("mode", ["server", "colocate"])
@pytest.mark.parametrize("exact", [True, False], ids=["py4", "trl"])
def test_every_sync_of_either_mode_sends_the_reference_merge_and_keeps_the_base(mode, exact, monkeypatch):
    """130 syncs through TRL's own ``sync_weights`` (server mode: metadata walk, then the push; colocate
    as on a GPU: ``load_weights`` per tensor), a training step between: with py4's walk the base is
    bit-identical and each sync delivered the reference merge of the untouched base and the LoRA of
    that step (the policy being trained); TRL's walk fails both on the same run."""
    from py4.train import weight_sync

    monkeypatch.setattr(weight_sync, "colocated_on_cpu", lambda: False)
    model = lora_model(256, 16)
    before = frozen(model)
    gen, pushes = synced(model, exact_sync_class(VLLMGeneration) if exact else VLLMGeneration, mode)
    matching = 0
    for step in range(CYCLES):
        ref = reference(model, before)
        if mode == "colocate":
            pushes.append({})
        gen.sync_weights()
        matching += sorted(pushes[-1]) == sorted(ref) and all(torch.equal(pushes[-1][n], ref[n]) for n in ref)
        train_step(model, step + 1)
    assert len(pushes) == CYCLES
    unchanged = all(torch.equal(before[n], frozen(model)[n]) for n in before)
    if exact:
        assert unchanged and matching == CYCLES
        if mode == "server":
            assert gen.vllm_client.metadata == [(n, "bfloat16", list(ref[n].shape)) for n in ref]
    else:
        assert not unchanged and matching < CYCLES
