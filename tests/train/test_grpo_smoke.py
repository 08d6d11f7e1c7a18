"""GRPO on the tiny -it model with the episodes package's environment: tools are called, rewards come
from the environment, only the continued warm-start LoRA trains, and a run stopped at a step
resumes from its checkpoint (the 32 + 32 schedule in miniature)."""

from __future__ import annotations

import json

import pytest

from train_helpers import ParamSnapshot

pytestmark = pytest.mark.smoke


@pytest.fixture(scope="module")
def warm_start_adapter(smoke_assets, tmp_path_factory):
    """An untrained LoRA on the -it model (B = 0), standing in for the EFT-512 warm start."""
    import torch
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM

    from py4.train.eft import LoraSpec

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(smoke_assets / "it", dtype=torch.float32)
    out = tmp_path_factory.mktemp("adapter")
    get_peft_model(model, LoraSpec(r=8, alpha=16).peft_config()).save_pretrained(out)
    return out


def _config(smoke_assets, adapter, out, stop_at_step=None):
    from py4.train.grpo import GRPOStageConfig

    return GRPOStageConfig.model_validate({
        "model": {"path": str(smoke_assets / "it")},
        "adapter": str(adapter),
        "episode": {"max_tool_calls": 2, "token_budget": 96, "max_turn_tokens": 96},
        "problems": {"split": "grpo", "limit": 2, "epochs": 1},
        "grpo": {"num_generations": 4, "problems_per_step": 1, "max_prompt_length": 1024,
                 "stop_at_step": stop_at_step},
        "optimisation": {"learning_rate": 1e-3, "lr_scheduler": "constant", "min_lr_rate": None, "warmup": 0,
                         "weight_decay": 0.0, "optim": "adamw_torch", "seed": 424242, "micro_batch": 2,
                         "grad_accum": 2, "max_steps": 2},
        "run": {"output_dir": str(out), "logging_steps": 1, "save_steps": 1, "report_to": [], "progress_bar": False},
    })


def test_grpo_calls_tools_takes_rewards_from_the_environment_and_trains_only_the_lora(
        smoke_assets, warm_start_adapter, tmp_path):
    from py4.train import grpo

    snapshot = ParamSnapshot()
    first = grpo.run(_config(smoke_assets, warm_start_adapter, tmp_path / "run", stop_at_step=1),
                     callbacks=[snapshot])
    assert first.global_step == 1
    manifest = json.loads((tmp_path / "run" / "run_manifest.json").read_text())
    assert manifest["reward_functions"] == ["note_completion_lengths", "Py4Environment"]
    logged = manifest["reward_log"][0]
    assert logged["tools/call_frequency"] > 0, "no tool call in any rollout"
    env_reward = logged["rewards/Py4Environment/mean"]
    assert -0.25 <= env_reward <= 1.0 and logged["reward"] == pytest.approx(env_reward)
    assert manifest["adapted_modules"] == 14
    assert snapshot.trainable and all("lora_" in n for n in snapshot.trainable) and not snapshot.changed_frozen
    if logged["rewards/Py4Environment/std"] > 0:  # Dr. GRPO: equal rewards in a group give zero advantage
        assert snapshot.changed, "rewards differed but no parameter moved"

    second = grpo.run(_config(smoke_assets, warm_start_adapter, tmp_path / "run"))
    assert second.resumed_from.endswith("checkpoint-1") and second.global_step == 2
