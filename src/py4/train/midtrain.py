"""Midtraining: full-parameter next-token training on the pre-packed mix, every token supervised.

The reference's hyperparameters are the defaults of the config types (``common.Optimisation``;
docs/training.md, the stage table) and the campaign's configs state the rest; the steps come from
the mix's ``step_schedule.json``, and a batch geometry that disagrees with it is refused rather
than run on more or less data than the schedule counted.

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
