"""GLM-4.5-Air's full-parameter midtraining and SFT fit 8 H200s as configured (bf16 master weights
under FSDP2, as the as-run axolotl FSDP2 run held them), and would not with accelerate's fp32 upcast:
the plan counts the real architecture (transformers builds it on ``meta``) and refuses the fp32 case
naming the run, the figure and the knob."""

from __future__ import annotations

import pytest

from py4.stages import StageCall, load, overrides
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
