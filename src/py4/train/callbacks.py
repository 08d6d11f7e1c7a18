"""The Trainer callbacks every training stage uses: the loss guard, the LR trace, a stop, the
record of the tracker runs, the model card of each checkpoint.

Apart from :mod:`py4.train.common` because subclassing ``transformers.TrainerCallback``
imports transformers (~14 s cold); the stage modules that build trainers import this.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from py4.train.common import TrainingGuardError


class GuardCallback(TrainerCallback):
    """Stops the run when a logged loss is NaN or infinite; reports each step and the last
    logged loss to the campaign runner's display (`py4.run_progress`)."""

    def __init__(self) -> None:
        self.loss: float | None = None

    def on_log(self, args, state, control, logs=None, **kwargs):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(loss)):
            raise TrainingGuardError(f"loss is {loss} at step {state.global_step}: stopping "
                                     "(lower the LR or check data)")
        if loss is not None:
            self.loss = float(loss)

    def on_step_end(self, args, state, control, **kwargs):
        from py4.run_progress import report

        if state.is_world_process_zero:
            report("step", state.global_step, state.max_steps or None,
                   **({"loss": self.loss} if self.loss is not None else {}))


class LRTrace(TrainerCallback):
    """The learning rate in force at each optimizer step, read from the scheduler."""

    def __init__(self) -> None:
        self.steps: list[int] = []
        self.lrs: list[float] = []

    def on_step_end(self, args, state, control, lr_scheduler=None, **kwargs):
        if lr_scheduler is not None:
            # get_last_lr is the LR for the *next* step; the step just taken used the previous one.
            self.steps.append(state.global_step)
            self.lrs.append(float(lr_scheduler.get_last_lr()[0]))

    def summary(self) -> dict[str, Any]:
        if not self.lrs:
            return {}
        return {"lr_peak": max(self.lrs), "lr_end": self.lrs[-1], "lr_steps_traced": len(self.lrs)}


class StopAtStep(TrainerCallback):
    """Stops training after ``step`` (the checkpoint at that step is saved first)."""

    def __init__(self, step: int):
        self.step = step

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step >= self.step:
            control.should_save = True
            control.should_training_stop = True


class TrackerRuns(TrainerCallback):
    """Writes which W&B and MLflow runs the training logs to (`py4.tracking.TRACKER_RUNS` in
    the output folder), so that the checkpoint's evaluation and probes can log to the same runs.

    Those trackers give a run a random id; transformers' callbacks start the runs in their own
    ``on_train_begin``, which the Trainer calls before this one's (integrations come first)."""

    def on_train_begin(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            from py4.tracking import record_tracker_runs

            record_tracker_runs(args.output_dir, list(args.report_to or []))


class CheckpointCards(TrainerCallback):
    """Writes the model card (`py4.hub.model_card`) into each ``checkpoint-N`` the Trainer saves,
    from the run manifest as it stands then (the stage's recorder keeps it current in the output
    folder) and with the step: a checkpoint is a model too (a GRPO run's are the campaign's
    intermediate models, evaluated, probed, pushed), and the card PEFT or TRL writes there says
    nothing of what made it. The Trainer calls ``on_save`` once the checkpoint is on disk."""

    def on_save(self, args, state, control, **kwargs):
        from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

        from py4.hub.model_card import is_model_folder, write_model_card
        from py4.runs import read_manifest

        if not state.is_world_process_zero:
            return
        folder = Path(args.output_dir) / f"{PREFIX_CHECKPOINT_DIR}-{state.global_step}"
        manifest = read_manifest(args.output_dir)
        if manifest is not None and is_model_folder(folder):
            write_model_card(folder, manifest, step=state.global_step)
