"""Closed sets of the training configs are Literals: a value outside them is a config
error naming the field and the allowed values when the config loads (py4 campaign plan), not a
TRL error after the weights load or an empty problem list."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest

from py4.config import ConfigError, load_config
from py4.train import common, eft_data, grpo

ROOT = Path(__file__).resolve().parents[2]


def _allowed(model, field: str) -> set[str]:
    return set(typing.get_args(model.model_fields[field].annotation))


def test_grpo_loss_types_are_trls():
    from dataclasses import fields

    from trl import GRPOConfig

    help_text = next(f.metadata["help"] for f in fields(GRPOConfig) if f.name == "loss_type")
    listed = re.search(r"Supported values are (.*?)\. ", help_text).group(1)
    assert _allowed(grpo.GRPOSettings, "loss_type") == set(re.findall(r"'(\w+)'", listed))


def test_grpo_reward_scalings_are_trls():
    import inspect

    from trl import GRPOTrainer

    source = inspect.getsource(GRPOTrainer)
    assert re.search(r"Must be one of 'batch', 'group', or 'none'", source)
    assert _allowed(grpo.GRPOSettings, "scale_rewards") == {"batch", "group", "none"}


def test_training_splits_are_those_the_shipped_bank_stores_for_training():
    """Not train_sanity: no bank a stage loads has it, so GRPO and EFT doses would find no problem."""
    from py4.problems.bank import load_bank
    from py4.problems.splits import TEST_SPLITS, TRAINING_SPLITS

    stored = {p.split for p in load_bank()}
    assert set(typing.get_args(common.TrainingSplit)) == stored - set(TEST_SPLITS)
    assert set(typing.get_args(common.TrainingSplit)) <= set(TRAINING_SPLITS)


@pytest.mark.parametrize(("config_type", "path", "override", "field"), [
    (grpo.GRPOStageConfig, "configs/train/gemma4_31b/grpo.yaml", "grpo.loss_type=drgrpo", "grpo.loss_type"),
    (grpo.GRPOStageConfig, "configs/train/gemma4_31b/grpo.yaml", "grpo.scale_rewards=std", "grpo.scale_rewards"),
    (grpo.GRPOStageConfig, "configs/train/gemma4_31b/grpo.yaml", "problems.split=test_heldout", "problems.split"),
    (eft_data.EFTDoseConfig, "configs/campaign/eft_dose.yaml", "split=test_heldin", "split"),
    (grpo.GRPOStageConfig, "configs/train/gemma4_31b/grpo.yaml", "problems.split=train_sanity", "problems.split"),
    (eft_data.EFTDoseConfig, "configs/campaign/eft_dose.yaml", "split=train_sanity", "split"),
])
def test_a_value_outside_the_set_names_the_field_and_the_choices(config_type, path, override, field):
    with pytest.raises(ConfigError) as caught:
        load_config(config_type, ROOT / path, [override])
    problems = caught.value.problems
    assert len(problems) == 1 and problems[0].startswith(f"{field}: Input should be ")
    assert all(f"'{v}'" in problems[0] for v in _allowed_of(config_type, field))


def _allowed_of(config_type, dotted: str) -> set[str]:
    model = config_type
    *parents, name = dotted.split(".")
    for part in parents:
        model = model.model_fields[part].annotation
    return set(typing.get_args(model.model_fields[name].annotation))
