"""The Python-4 study toolkit, from a notebook (docs/api.md; the CLIs are ``py4`` and ``boa``).

    import py4
    bank = py4.load_bank()                                         # list[Problem], hash-checked
    results = py4.run_eval("runs/eval-gold", policy="gold", splits=["test_heldin"], limit=20)
    report = py4.load_campaign_results("configs/campaign/smoke.yaml")

Boa itself: ``from py4.boa import Executor, certify, check``. This is the package's top floor:
its functions call into the campaign, the report and the evaluation, and no module of the package
imports it. Every import but the version's happens on first call, so ``import py4`` stays cheap
(Boa's workers import this package too).
"""

from py4.version import __version__

# Annotations are strings and TYPE_CHECKING is not typing's: importing typing, pathlib or
# __future__ here would slow every `import py4` (every Boa worker's included).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from typing import Any

    from py4.problems.schema import Problem

__all__ = ["__version__", "load_bank", "run_eval", "load_campaign_results"]


def load_bank(version: str = "v1", bank_dir: "str | Path | None" = None, split: "str | None" = None
              ) -> "list[Problem]":
    """The problem bank (the shipped one, or a rebuilt one in ``bank_dir``), its hash checked.

    ``split``: only that split's problems. Raises BankError for a missing or corrupt bank and
    ValueError for an unknown split.
    """
    from py4.problems.bank import load_bank as _load_bank
    from py4.problems.schema import SPLITS

    if split is not None and split not in SPLITS:
        raise ValueError(f"split: unknown split {split!r}; expected one of {', '.join(SPLITS)}")
    problems = _load_bank(version, bank_dir)
    return [p for p in problems if split is None or p.split == split]


def run_eval(out_dir: "str | Path", *, policy: str, splits: "Sequence[str]" = ("test_heldin", "test_heldout"),
             limit: "int | None" = None, samples: int = 1, model: "str | None" = None,
             endpoint: "str | None" = None, overrides: "Sequence[str]" = (), progress: bool = False,
             inspect_log: "str | Path | None" = None) -> "dict[str, Any]":
    """``py4 eval``: episodes of a policy on bank splits; writes ``out_dir`` and returns results.json.

    ``policy``: ``gold``, ``python3``, ``migrated``, ``core-only``, ``silent``, ``local`` (``model``:
    a model folder) or ``endpoint`` (``endpoint``: base URL, ``model``: the served name).
    ``overrides``: ``EvalConfig`` ``key=value`` strings (``episode.token_budget=4096``), applied
    last. Raises ConfigError (a ValueError) naming the field for a bad setting.
    """
    from pathlib import Path

    from py4.config import ConfigError, apply_overrides, validate_config
    from py4.evaluate.harness import EvalConfig, run

    given = {"model": model, "endpoint": endpoint}  # what the named policy takes (local: model; endpoint: both)
    data = {"splits": list(splits), "limit": limit, "sampling": {"samples": samples},
            "policy": {"name": policy, **{k: v for k, v in given.items() if v is not None}}}
    config = validate_config(EvalConfig, apply_overrides(data, list(overrides)), "py4.run_eval(...)")
    folder = config.policy.model if config.policy.name == "local" else None
    if folder is not None and not Path(folder).is_dir():  # local files only: never looked up on the Hub
        raise ConfigError("py4.run_eval(...)", [f"model {folder!r}: no such folder (a local model folder is expected)"])
    return run(config, out_dir, progress=progress, inspect_log=inspect_log)


def load_campaign_results(source: "str | Path") -> "dict[str, Any]":
    """A campaign's results, as ``py4 report results`` writes them to ``report/results.json``.

    ``source``: a campaign YAML (the results are collected from its runs on disk, nothing is
    written or run; runs not done are listed under ``missing_evaluations``), a report folder,
    or a ``results.json``. Raises ConfigError for a bad campaign file and FileFormatError (a
    ValueError) for a missing or malformed results.json, each naming the file.
    """
    from pathlib import Path

    path = Path(source)
    if path.suffix in (".yaml", ".yml"):
        from py4.campaign.spec import load_campaign
        from py4.report.results import collect

        return collect(load_campaign(path))
    from py4.fileio import read_json_object

    return read_json_object(path / "results.json" if path.is_dir() else path,
                            missing="no campaign results: run `py4 report results CAMPAIGN.yaml` first")
