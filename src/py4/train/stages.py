"""The stage registry: name → (module, config type). Looked up by name, with choices on error."""

from __future__ import annotations

import difflib
import importlib
from typing import Any

# name -> (module, config class name). Each module has `run(config) -> result`.
STAGES: dict[str, tuple[str, str]] = {
    "midtrain": ("py4.train.midtrain", "MidtrainConfig"),
    "sft": ("py4.train.sft", "SFTStageConfig"),
    "eft_dose": ("py4.train.eft_data", "EFTDoseConfig"),
    "eft": ("py4.train.eft", "EFTConfig"),
    "grpo": ("py4.train.grpo", "GRPOStageConfig"),
}


def get_stage(name: str) -> tuple[Any, type]:
    """(module, config type) of a stage; raises KeyError listing the stages (and a close match)."""
    if name not in STAGES:
        hint = difflib.get_close_matches(name, STAGES, n=1)
        did_you_mean = f"; did you mean {hint[0]!r}?" if hint else ""
        raise KeyError(f"unknown stage {name!r}{did_you_mean} (stages: {', '.join(STAGES)})")
    module_name, config_name = STAGES[name]
    module = importlib.import_module(module_name)
    return module, getattr(module, config_name)


def run_stage(name: str, config_path: str | None, overrides: list[str] | tuple[str, ...] = ()) -> Any:
    """Load the stage's config strictly (file + overrides) and run it."""
    from py4.config import load_config

    from py4.train.common import check_optimizer

    module, config_type = get_stage(name)
    config = load_config(config_type, config_path, list(overrides))
    if getattr(config, "optimisation", None) is not None:  # before any weights load
        check_optimizer(config.optimisation, str(config_path))
    return module.run(config)
