"""The stages' TrainingArguments use transformers 5.24's names: the smoke demo
printed 36 FutureWarnings for `gradient_checkpointing` (now `activation_checkpointing`)."""

from __future__ import annotations

import warnings

import pytest

from py4.train import loading
from py4.train.common import Optimisation, RunSettings, trainer_kwargs


@pytest.mark.parametrize("checkpointing", [True, False])
def test_trainer_kwargs_raise_no_future_warning(tmp_path, checkpointing):
    from transformers import TrainingArguments

    device = loading.DeviceSettings(use_cpu=True, bf16=False, gradient_checkpointing=checkpointing, device="cpu")
    kwargs = trainer_kwargs(Optimisation(optim="adamw_torch"), RunSettings(output_dir=str(tmp_path), report_to=[]),
                            device, max_steps=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        args = TrainingArguments(**kwargs)
    assert args.activation_checkpointing is checkpointing
    if checkpointing:
        assert args.activation_checkpointing_kwargs == {"use_reentrant": False}
