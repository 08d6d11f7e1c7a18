"""GLM-4.5-Air's full-parameter midtraining and SFT fit 8 H200s as configured (bf16 master weights
under FSDP2, as the as-run axolotl FSDP2 run held them), and would not with accelerate's fp32 upcast:
the plan counts the real architecture (transformers builds it on ``meta``) and refuses the fp32 case
naming the run, the figure and the knob."""

from __future__ import annotations

import pytest

from py4.overrides import overrides
from py4.stages import StageCall, load
from py4.train.fit import FitError, check_fit, run_memory
from py4.train.memory import GPU_TYPES

GLM = ("zai-org/GLM-4.5-Air-Base", "888c873d")
H200 = GPU_TYPES["H200"].usable_bytes
FULL_FT = [("midtrain", "configs/train/glm45_air/midtrain_control.yaml"),
           ("midtrain", "configs/train/glm45_air/midtrain_iso.yaml"),
           ("midtrain", "configs/train/glm45_air/midtrain_prop.yaml"),
           ("sft", "configs/train/glm45_air/sft.yaml")]


@pytest.mark.parametrize("stage,config", FULL_FT)
def test_glm_full_ft_fits_an_h200(stage, config):
    plan = run_memory(load(StageCall(stage=stage, config=config)), GLM)
    assert plan.shape.parameters == 106_852_245_504  # GLM-4.5-Air as transformers 5.24 builds it (MTP dropped)
    assert plan.run.master_weights == "bf16" and plan.run.gpus == 8
    check_fit(plan, H200, config)  # raises when it does not fit


@pytest.mark.parametrize("stage,config", FULL_FT[1:2] + FULL_FT[3:])
def test_fp32_master_weights_are_refused_naming_the_knob(stage, config):
    call = StageCall(stage=stage, config=config, overrides=tuple(overrides(["optimisation.master_weights=fp32"])))
    plan = run_memory(load(call), GLM)
    refusal = r"GiB per GPU .* over the GPU's 139\.0 GiB: change optimisation\.master_weights"
    with pytest.raises(FitError, match=refusal):
        check_fit(plan, H200, config)


def test_a_run_that_cannot_fit_stops_before_any_weights_load(monkeypatch, tmp_path):
    """On a CUDA machine (its GPU's total_memory), py4.stages plans the run before the stage runs."""
    import torch

    import py4.stages as stages
    import py4.train.midtrain as midtrain

    class Props:
        total_memory = 143_771 * 2**20  # what an H200 reports

    for name, value in {"ACCELERATE_USE_FSDP": "true", "FSDP_VERSION": "2", "ACCELERATE_MIXED_PRECISION": "bf16",
                        "FSDP_ACTIVATION_CHECKPOINTING": "true"}.items():  # what accelerate launch sets from fsdp2.yaml
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: Props())
    started = []
    monkeypatch.setattr(midtrain, "run", lambda config, callbacks=(): started.append(config))
    call = StageCall(stage="midtrain", config="configs/train/glm45_air/midtrain_iso.yaml", overrides=tuple(overrides(
        [f"data.path={tmp_path}", "optimisation.optim=adamw_torch_fused", "optimisation.master_weights=fp32"])))
    with pytest.raises(FitError, match=r"^midtrain \(configs/train/glm45_air/midtrain_iso\.yaml\): planned "
                                       r"2\d\d\.\d GiB per GPU .*change optimisation\.master_weights: bf16"):
        stages.run_call(call)
    assert started == []
    import py4.train.common as common

    monkeypatch.setattr(common, "_module_available", lambda module: True)  # torchao, as on the GPU nodes
    stages.run_call(StageCall(stage="midtrain", config="configs/train/glm45_air/midtrain_iso.yaml",
                              overrides=tuple(overrides([f"data.path={tmp_path}"]))))
    assert len(started) == 1  # the campaign's own settings (bf16 master weights, 8-bit AdamW) fit and start


def test_the_accelerate_config_decides_precision_checkpointing_and_offload():
    from py4.train.fit import FsdpSettings

    campaign = FsdpSettings.from_file("configs/accelerate/fsdp2.yaml")
    assert campaign == FsdpSettings(mixed_precision="bf16", activation_checkpointing=True, offload_params=False)
    config = load(StageCall(stage="sft", config="configs/train/glm45_air/sft.yaml",
                            overrides=tuple(overrides(["optimisation.master_weights=fp32"]))))
    upcast = run_memory(config, GLM, fsdp=campaign)
    no_mixed = run_memory(config, GLM, fsdp=FsdpSettings(mixed_precision="no"))
    assert (upcast.run.master_weights, no_mixed.run.master_weights) == ("fp32", "bf16")  # accelerate's condition
    offload = run_memory(config, GLM, fsdp=FsdpSettings(offload_params=True))
    assert offload.memory.state == 0 and offload.memory.total < upcast.memory.total
    assert offload.memory.host_ram_rank0 == upcast.memory.host_ram_rank0 + upcast.memory.state * 8
