"""Which keys of a stage config file only repeat its type's default.

A key repeats a default when the file resolves (``py4.config.load_config``) to the same config
without it. Only keys holding a value are candidates: a mapping (``optimisation:``, ``lora:``) is
looked into, never dropped whole, because a campaign's ``key=value`` override into a dropped
block would build that block from its own type's defaults, not from the stage's (EFTConfig's
``optimisation`` default is the EFT row, ``Optimisation()``'s is the midtraining row).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from py4.config import ConfigError, read_yaml, validate_config

# Stated even at the type's default, because a reader needs to see them in the file:
# kind: names the data config's type (py4 data picks the type by it);
# documents: how a mix packs documents (MixConfig.documents: every shipped mix config states it);
# rounding: the step schedule's ceil/floor, which differs between arms of one model;
# micro_batch, grad_accum, gpus: a run's batch geometry, set together with its launch (GPU count)
# and its step schedule;
# filter: which instruction rows are kept (the recorded row counts and the table's SFT data row
# depend on it).
STATED_DEFAULTS = frozenset({"kind", "documents", "rounding", "micro_batch", "grad_accum", "gpus", "filter"})


def config_type(path: Path) -> type:
    """The config type of a file under configs/train (by file name) or configs/data (by kind)."""
    from py4.data.configs import config_type_for
    from py4.train.assets import SmokeAssetsConfig
    from py4.train.eft import EFTConfig
    from py4.train.eft_data import EFTDoseConfig
    from py4.train.grpo import GRPOStageConfig
    from py4.train.midtrain import MidtrainConfig
    from py4.train.sft import SFTStageConfig

    if "data" in path.parts:
        return config_type_for(read_yaml(path)["kind"])
    stem = path.stem
    if stem.startswith("smoke_assets"):
        return SmokeAssetsConfig
    if stem.startswith("eft_dose"):
        return EFTDoseConfig
    stage = stem.split("_")[0]  # midtrain_iso -> midtrain, eft512_warmstart -> eft512
    types = {"midtrain": MidtrainConfig, "sft": SFTStageConfig, "eft": EFTConfig, "grpo": GRPOStageConfig}
    return types["eft" if stage.startswith("eft") else stage]


def _value_keys(data: dict[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for key, value in data.items():
        if isinstance(value, dict) and value:
            yield from _value_keys(value, (*prefix, key))
        else:
            yield (*prefix, key)


def _without(data: dict[str, Any], dotted: tuple[str, ...]) -> dict[str, Any]:
    out = copy.deepcopy(data)
    node = out
    for key in dotted[:-1]:
        node = node[key]
    del node[dotted[-1]]
    return out


def _resolve(config_type: type, data: dict[str, Any], path: Path) -> dict[str, Any] | None:
    """The resolved config as JSON-like data; None when ``data`` is not a valid config."""
    try:
        return validate_config(config_type, data, str(path)).model_dump(mode="json")
    except ConfigError:
        return None


_ABSENT = object()


def _at(resolved: Any, dotted: tuple[str, ...]) -> Any:
    for key in dotted:
        if not isinstance(resolved, dict) or key not in resolved:
            return _ABSENT  # the block's default is None: it has no default for this key
        resolved = resolved[key]
    return resolved


def repeated_defaults(path: Path, config_type: type | None = None) -> list[str]:
    """Dotted keys of ``path`` whose removal leaves the resolved config unchanged, and whose value is
    also the stage's default for its block: in an EFT config, ``optimisation.lr_scheduler:
    cosine_with_min_lr`` is ``Optimisation``'s default but not the EFT stage's (``cosine``), so it
    states a decision and is kept."""
    config_type = config_type or globals()["config_type"](path)
    data = read_yaml(path) or {}
    resolved = _resolve(config_type, data, path)
    assert resolved is not None, f"{path} does not load"
    repeated = []
    for dotted in _value_keys(data):
        if _resolve(config_type, _without(data, dotted), path) != resolved:
            continue  # required, needed by a check across fields, or not the default
        stage_defaults = [_resolve(config_type, _without(data, dotted[:depth]), path)
                          for depth in range(1, len(dotted))]
        if all(block is None or _at(block, dotted) in (_ABSENT, _at(resolved, dotted)) for block in stage_defaults):
            repeated.append(".".join(dotted))
    return repeated


def needlessly_stated(path: Path) -> list[str]:
    """The repeated defaults of ``path`` other than :data:`STATED_DEFAULTS`."""
    return [key for key in repeated_defaults(path) if key.rsplit(".", 1)[-1] not in STATED_DEFAULTS]
