"""Midtraining: full-parameter next-token training on the pre-packed mix, every token supervised.

Reference values (the table's midtraining group): peak LR 1e-5, cosine to 0.1×, linear
warmup over 3% of steps, weight decay 0.01, clipping 1.0, AdamW fused (8-bit for GLM),
seed 42, bf16 + gradient checkpointing on GPU, max steps from ``step_schedule.json``.

    py4 train midtrain --config configs/train/smoke/midtrain.yaml
"""

from __future__ import annotations

from py4.config import StrictModel
from py4.train import common, loading
from py4.train.packed import PackedData, StageResult, run_packed


class MidtrainConfig(StrictModel):
    model: loading.ModelSource
    data: PackedData
    optimisation: common.Optimisation = common.Optimisation()
    run: common.RunSettings


def run(config: MidtrainConfig, callbacks=()) -> StageResult:
    """Run midtraining; raises TrainingGuardError for a schedule mismatch, empty batch or NaN loss."""
    return run_packed("midtrain", config, callbacks)
