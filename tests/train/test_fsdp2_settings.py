"""The campaign's FSDP2 settings, without launching.

The launched runs are in test_fsdp2_training.py; these are the fast checks of the settings
those runs depend on.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from py4.train import common, fsdp, loading

REPO = Path(__file__).resolve().parents[2]
FSDP_CONFIGS = sorted((REPO / "configs/accelerate").glob("fsdp2*.yaml"))

LAUNCH_ENV = {"ACCELERATE_USE_FSDP": "true", "FSDP_VERSION": "2", "FSDP_STATE_DICT_TYPE": "SHARDED_STATE_DICT",
              "FSDP_CPU_RAM_EFFICIENT_LOADING": "true", "FSDP_ACTIVATION_CHECKPOINTING": "true",
              "RANK": "1", "WORLD_SIZE": "8"}


@pytest.fixture
def fsdp_launch(monkeypatch):
    """The environment accelerate launch gives rank 1 of the campaign's config on 8 GPUs."""
    for key, value in LAUNCH_ENV.items():
        monkeypatch.setenv(key, value)


@pytest.mark.parametrize("path", FSDP_CONFIGS, ids=lambda p: p.name)
def test_campaign_fsdp_configs_checkpoint_sharded_and_load_on_rank0(path):
    fsdp_config = yaml.safe_load(path.read_text())["fsdp_config"]
    assert fsdp_config["fsdp_version"] == 2
    # Resume checkpoints: each rank writes its shard; no rank gathers fp32 weights + optimizer.
    assert fsdp_config["fsdp_state_dict_type"] == "SHARDED_STATE_DICT"
    # Only rank 0 reads the weights (the others start on meta).
    assert fsdp_config["fsdp_cpu_ram_efficient_loading"] is True
    assert fsdp_config["fsdp_activation_checkpointing"] is True


def test_launch_reads_what_accelerate_launch_sets(fsdp_launch):
    launch = fsdp.launch()
    assert launch.enabled and launch.version == 2 and launch.loads_on_rank0_only
    assert launch.state_dict_type == "SHARDED_STATE_DICT" and launch.activation_checkpointing
    assert (launch.rank, launch.world_size) == (1, 8)


def test_outside_a_launch_nothing_is_fsdp(monkeypatch):
    for key in LAUNCH_ENV:
        monkeypatch.delenv(key, raising=False)
    launch = fsdp.launch()
    assert not launch.enabled and not launch.loads_on_rank0_only
    assert fsdp.enable_fsdp_on_cpu() is False


def test_gradient_checkpointing_and_fsdp_checkpointing_are_not_both_on(fsdp_launch):
    on = loading.DeviceSettings(use_cpu=True, bf16=False, gradient_checkpointing=True, device="cpu")
    off = loading.DeviceSettings(use_cpu=True, bf16=False, gradient_checkpointing=False, device="cpu")
    with pytest.raises(common.TrainingGuardError, match="optimisation.gradient_checkpointing"):
        common.check_checkpointing(common.Optimisation(gradient_checkpointing=True), on)
    common.check_checkpointing(common.Optimisation(), off)


def test_auto_checkpointing_on_gpu_leaves_it_to_fsdp(fsdp_launch, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert loading.device_settings("auto").gradient_checkpointing is False
    assert loading.device_settings(True).gradient_checkpointing is True
    monkeypatch.setenv("FSDP_ACTIVATION_CHECKPOINTING", "false")
    assert loading.device_settings("auto").gradient_checkpointing is True


def test_trainer_kwargs_checkpoint_without_reentrancy():
    device = loading.DeviceSettings(use_cpu=True, bf16=False, gradient_checkpointing=True, device="cpu")
    kwargs = common.trainer_kwargs(common.Optimisation(), common.RunSettings(output_dir="x"), device, 4)
    # transformers 5.24's names (gradient_checkpointing* are deprecated and warn)
    assert kwargs["activation_checkpointing"] is True
    assert kwargs["activation_checkpointing_kwargs"] == {"use_reentrant": False}


@pytest.mark.parametrize("path", sorted((REPO / "configs/train").glob("*/*.yaml")),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_multi_gpu_stage_configs_leave_checkpointing_to_fsdp(path):
    data = yaml.safe_load(path.read_text()) or {}
    opt = data.get("optimisation") or {}
    if int(opt.get("gpus", 1)) > 1 and "model" in data and "lora" not in data:
        assert opt.get("gradient_checkpointing") in (False, "auto"), path
