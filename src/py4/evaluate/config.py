"""How ``py4 eval``'s inputs become an EvalConfig: the file, the flags (as overrides), the checks.

``py4 eval`` and the stage registry (``py4.stages``: a campaign's eval runs) both load through
:func:`load_eval_config`, so a run in a campaign is checked as the command checks it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from py4.config import ConfigError, apply_overrides, read_config_mapping, validate_config
from py4.evaluate.harness import EvalConfig, check_config
from py4.evaluate.policies import POLICY_NAMES
from py4.overrides import Override, overrides

__all__ = ["flag_overrides", "load_eval_config"]


def flag_overrides(split: Iterable[str] | None = None, policy: str | None = None, model: str | None = None,
                   endpoint: str | None = None, samples: int | None = None, temperature: float | None = None,
                   limit: int | None = None) -> list[Override]:
    """``py4 eval``'s flags as typed config overrides (flags win over the YAML, overrides over flags).

    ``split`` items may be comma-separated; without ``policy``, ``endpoint`` means the endpoint
    policy and ``model`` the local one.
    """
    given: dict[str, Any] = {}
    if split:
        given["splits"] = [s.strip() for item in split for s in item.split(",") if s.strip()]
    if policy is None and endpoint:
        policy = "endpoint"
    elif policy is None and model:
        policy = "local"
    flags = {"policy.name": policy, "policy.model": model, "policy.endpoint": endpoint, "sampling.samples": samples,
             "sampling.temperature": temperature, "limit": limit}
    given.update({key: value for key, value in flags.items() if value is not None})
    return overrides(given)


def load_eval_config(config: str | Path | None, items: Iterable[str | Override]) -> EvalConfig:
    """The EvalConfig of the file (or none) and the overrides; ConfigError for what the user must fix.

    A policy must be named: without one the config's default (the gold solutions) would give
    a perfect score to a forgotten ``--model``. A local model or tokenizer folder must exist.
    """
    source = str(config) if config is not None else "from the command line"
    data = apply_overrides(read_config_mapping(config, source), items)
    if not isinstance(data.get("policy"), dict) or "name" not in data["policy"]:
        raise ConfigError(source, ["no policy: give --model PATH (a local model folder), --endpoint URL --model NAME, "
                                   f"or --policy NAME (one of {', '.join(POLICY_NAMES)})"])
    cfg = validate_config(EvalConfig, data, source)
    problems = check_config(cfg)  # unknown splits, samples < 1: all at once, before any episode
    if problems:
        raise ConfigError(source, problems)
    for field, folder in (("policy.model", cfg.policy.model if cfg.policy.name == "local" else None),
                          ("policy.tokenizer", getattr(cfg.policy, "tokenizer", None)),
                          ("policy.weights", getattr(cfg.policy, "weights", None))):
        if folder is not None and not Path(folder).is_dir():  # local files only: never a Hub id
            flag = " (--model)" if field == "policy.model" else ""
            raise ConfigError(source, [f"{field}{flag} {folder!r}: no such folder (a local model folder is expected)"])
    return cfg
