"""The memory plan's state bytes (weights, gradients, optimizer state) are exact: each is compared
with the bytes torch (and torchao, when installed) really holds after one optimizer step on CPU,
on a tiny GLM-4.5 MoE model built by transformers (packed 3-D experts, biases, small and large
tensors, so both of torchao's branches, quantized and plain, are met)."""

from __future__ import annotations

import importlib.util

import pytest
import torch

from py4.train.memory import RunShape, estimate, optimizer_state_bytes
from py4.train.model_shape import model_shape

TINY_GLM = {
    "model_type": "glm4_moe", "architectures": ["Glm4MoeForCausalLM"], "attention_bias": True, "head_dim": 32,
    "hidden_size": 128, "intermediate_size": 256, "moe_intermediate_size": 64, "n_routed_experts": 4,
    "n_shared_experts": 1, "num_experts_per_tok": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
    "num_hidden_layers": 2, "first_k_dense_replace": 1, "vocab_size": 512, "partial_rotary_factor": 0.5,
    "tie_word_embeddings": False,
}


def _tensor_bytes(t: torch.Tensor) -> int:
    """Bytes a tensor holds; a tensor subclass (torchao's quantized state) by its inner tensors."""
    if type(t) is not torch.Tensor and hasattr(t, "__tensor_flatten__"):
        names, _ = t.__tensor_flatten__()
        return sum(_tensor_bytes(getattr(t, name)) for name in names)
    return t.numel() * t.element_size()


def _stepped(optim: str, dtype: torch.dtype, tmp_path):
    from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    torch.manual_seed(0)
    config = CONFIG_MAPPING["glm4_moe"](**{k: v for k, v in TINY_GLM.items() if k != "model_type"})
    model = AutoModelForCausalLM.from_config(config).to(dtype)
    args = TrainingArguments(output_dir=str(tmp_path), optim=optim, use_cpu=True, report_to="none")
    cls, kwargs = Trainer.get_optimizer_cls_and_kwargs(args, model)  # the Trainer's own optimizer choice
    optimizer = cls(model.parameters(), **kwargs)
    ids = torch.randint(0, 512, (2, 16))
    model(input_ids=ids, labels=ids).loss.backward()
    optimizer.step()
    return model, optimizer


def _allocated(model, optimizer) -> tuple[int, int, int]:
    params = list(model.parameters())
    state = sum(_tensor_bytes(v) for s in optimizer.state.values() for v in s.values() if torch.is_tensor(v))
    return (sum(_tensor_bytes(p) for p in params),
            sum(_tensor_bytes(p.grad) for p in params if p.grad is not None), state)


OPTIMIZERS = ["adamw_torch", "adamw_torch_fused", "sgd", "adagrad", "rmsprop",
              pytest.param("adamw_torch_8bit", marks=pytest.mark.skipif(
                  importlib.util.find_spec("torchao") is None,
                  reason="torchao is not installed here (the campaign extra): its rule is not checked"))]


@pytest.mark.parametrize("optim", OPTIMIZERS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
def test_state_bytes_equal_what_torch_allocates(optim, dtype, tmp_path):
    model, optimizer = _stepped(optim, dtype, tmp_path)
    numels = tuple(p.numel() for p in model.parameters())
    master = "fp32" if dtype == torch.float32 else "bf16"
    shape = model_shape(TINY_GLM)
    planned = estimate(shape, RunShape(gpus=1, micro_batch=1, seq_len=16, optim=optim, trainable=numels,
                                       frozen_parameters=0, master_weights=master, fsdp=False,
                                       checkpointing=False))
    weights, grads, state = _allocated(model, optimizer)
    assert (planned.weights, planned.gradients, planned.optimizer) == (weights, grads, state)
    assert optimizer_state_bytes(optim, numels, 4 if master == "fp32" else 2) == state


def test_meta_count_is_the_real_models():
    """model_shape builds the config's model on ``meta``: the same tensors as the real model."""
    from transformers import AutoModelForCausalLM
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    config = CONFIG_MAPPING["glm4_moe"](**{k: v for k, v in TINY_GLM.items() if k != "model_type"})
    real = AutoModelForCausalLM.from_config(config)
    shape = model_shape(TINY_GLM)
    assert shape.tensors == tuple((n, p.numel()) for n, p in real.named_parameters())
    assert shape.parameters == sum(p.numel() for p in real.parameters())
