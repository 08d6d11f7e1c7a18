"""GRPO on the tiny -it model with the episodes package's environment: tools are called, rewards come
from the environment, every LoRA parameter (and nothing else) trains, and a run stopped at a step
resumes from its checkpoint (the 32 + 32 schedule in miniature).

The tiny model usually earns the same environment reward on every sample of a problem, and under
Dr. GRPO equal rewards give zero advantages (no update). So the runs add, through the stage's
``reward_functions`` hook, a reward that differs across the samples of a group
(``train_helpers.sample_index_reward``); the environment's reward stays in the sum. A sampled
tool call is likely, not certain (another thread count samples other tokens from the same seed),
so the first rollout's completion is forced to a ``run_code`` call
(``train_helpers.FirstRolloutCallsATool``), which the environment runs and rewards.
"""

from __future__ import annotations

import json

import pytest

from train_helpers import FirstRolloutCallsATool, ParamSnapshot

pytestmark = pytest.mark.smoke
INDEX_WEIGHT = 0.1


def _config(smoke_assets, adapter, out, stop_at_step=None, learning_rate=1e-3):
    from py4.train.grpo import GRPOStageConfig

    return GRPOStageConfig.model_validate({
        "model": {"path": str(smoke_assets / "it")},
        "adapter": str(adapter),
        "episode": {"max_tool_calls": 2, "token_budget": 96, "max_turn_tokens": 96},
        "reward_functions": [{"function": "train_helpers:sample_index_reward", "weight": INDEX_WEIGHT}],
        "problems": {"split": "grpo", "limit": 2, "epochs": 1},
        "grpo": {"num_generations": 4, "problems_per_step": 1, "max_prompt_length": 1024,
                 "stop_at_step": stop_at_step},
        "optimisation": {"learning_rate": learning_rate, "lr_scheduler": "constant", "min_lr_rate": None,
                         "warmup": 0, "weight_decay": 0.0, "optim": "adamw_torch", "seed": 424242,
                         "micro_batch": 2, "grad_accum": 2, "max_steps": 2},
        "run": {"output_dir": str(out), "logging_steps": 1, "save_steps": 1, "report_to": [], "progress_bar": False},
    })


def _assert_every_lora_param_and_nothing_else_changed(snapshot: ParamSnapshot) -> None:
    snapshot.assert_every_trainable_changed_and_nothing_else()
    assert all("lora_" in n for n in snapshot.trainable), sorted(n for n in snapshot.trainable if "lora_" not in n)


def test_grpo_calls_tools_takes_rewards_from_the_environment_and_trains_every_lora_param(
        smoke_assets, warm_start_adapter, tmp_path):
    from py4.train import grpo

    snapshot, tool_call = ParamSnapshot(), FirstRolloutCallsATool()
    first = grpo.run(_config(smoke_assets, warm_start_adapter, tmp_path / "run", stop_at_step=1),
                     callbacks=[snapshot, tool_call])
    assert first.global_step == 1 and tool_call.forced  # the first rollout's call was written
    manifest = json.loads((tmp_path / "run" / "run_manifest.json").read_text())
    assert manifest["reward_functions"] == ["note_completion_lengths", "sample_index_reward", "Py4Environment"]
    assert manifest["reward_weights"] == pytest.approx([1.0, INDEX_WEIGHT, 1.0])
    [logged] = manifest["reward_log"]
    assert logged["tools/call_frequency"] > 0, "no tool call in any rollout"  # certain: the first one calls
    # the rounds' Boa work ran batched (grpo.batch_tool_calls defaults to true)
    assert manifest["tool_batching"]["rounds"] > 0 and manifest["tool_batching"]["boa_calls"] > 0
    env_reward = logged["rewards/Py4Environment/mean"]
    assert -0.25 <= env_reward <= 1.0
    # 4 samples of one problem: indices 0..3, so every group has reward variance
    assert logged["rewards/sample_index_reward/mean"] == pytest.approx(1.5)
    assert logged["frac_reward_zero_std"] == 0.0
    assert logged["reward"] == pytest.approx(env_reward + INDEX_WEIGHT * 1.5)
    assert manifest["adapted_modules"] == 14
    _assert_every_lora_param_and_nothing_else_changed(snapshot)
    config_sha256 = {1: manifest["config_sha256"]}  # the first run's config (stop_at_step=1) made checkpoint-1

    resumed = ParamSnapshot()
    second = grpo.run(_config(smoke_assets, warm_start_adapter, tmp_path / "run"), callbacks=[resumed])
    assert second.resumed_from.endswith("checkpoint-1") and second.global_step == 2
    # (the restored Adam moments alone would move them too; the index reward keeps the advantages non-zero)
    _assert_every_lora_param_and_nothing_else_changed(resumed)
    manifest = json.loads((tmp_path / "run" / "run_manifest.json").read_text())
    assert [h["step"] for h in manifest["reward_log"]] == [1, 2]  # step 1's log restored from the checkpoint
    assert -0.25 <= manifest["reward_log"][1]["rewards/Py4Environment/mean"] <= 1.0
    # every checkpoint is a model with its own card (the campaign evaluates and probes grpo@N)
    from huggingface_hub import ModelCard

    config_sha256[2] = manifest["config_sha256"]
    for step in (1, 2):
        card = ModelCard.load(tmp_path / "run" / f"checkpoint-{step}" / "README.md")
        assert card.data.library_name == "peft" and card.data.py4["kind"] == "grpo" and card.data.py4["step"] == step
        assert card.data.py4["config_sha256"] == config_sha256[step] and str(warm_start_adapter) in card.text


def test_reward_function_paths_are_checked():
    from pydantic import ValidationError

    from py4.config import ConfigError, resolve_reference
    from py4.train.grpo import RewardFunction

    assert RewardFunction(function="train_helpers:sample_index_reward").weight == 1.0
    for bad in ("train_helpers", "train_helpers:", ":f", "m:not-a-name"):
        with pytest.raises(ValidationError, match="module:function"):
            RewardFunction(function=bad)
    with pytest.raises(ImportError, match="reward_functions.0..function: 'train_helpers:no_such_reward' not found"):
        resolve_reference("train_helpers:no_such_reward", "reward_functions[0].function", kind="function")
    with pytest.raises(ConfigError, match="no_such_module_xyz"):
        resolve_reference("no_such_module_xyz:f", "function", kind="function")
