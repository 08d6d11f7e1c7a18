"""GRPO under an FSDP launch whose config checkpoints activations: ``optimisation.gradient_checkpointing:
true`` (the 31B GRPO config's) is refused with py4's one line before anything loads, as midtraining and
SFT refuse it (``common.check_checkpointing``), not by transformers' TrainingArguments with a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from py4.config import load_config
from py4.train import common, grpo, loading

ROOT = Path(__file__).resolve().parents[2]
LAUNCH_ENV = {"ACCELERATE_USE_FSDP": "true", "FSDP_VERSION": "2", "FSDP_STATE_DICT_TYPE": "SHARDED_STATE_DICT",
              "FSDP_CPU_RAM_EFFICIENT_LOADING": "true", "FSDP_ACTIVATION_CHECKPOINTING": "true",
              "RANK": "0", "WORLD_SIZE": "2"}


def test_grpo_refuses_two_kinds_of_activation_checkpointing_before_loading(tmp_path, monkeypatch):
    for key, value in LAUNCH_ENV.items():
        monkeypatch.setenv(key, value)

    def no_loading(*args, **kwargs):
        raise AssertionError("weights or tokenizer loaded before the checkpointing check")

    monkeypatch.setattr(loading, "load_model", no_loading)
    monkeypatch.setattr(loading, "load_tokenizer", no_loading)
    config = load_config(grpo.GRPOStageConfig, ROOT / "configs/train/gemma4_31b/grpo.yaml", [
        "grpo.use_vllm=false", "grpo.vllm_server_gpus=null", "optimisation.gpus=2", "optimisation.grad_accum=64",
        f"run.output_dir={tmp_path / 'run'}"])
    assert config.optimisation.gradient_checkpointing is True
    with pytest.raises(common.TrainingGuardError, match="fsdp_activation_checkpointing: true"):
        grpo.run(config)
    assert not (tmp_path / "run").exists()
