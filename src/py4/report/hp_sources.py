"""What the hyperparameter table reads: the campaign spec and the stage config files it names.

Files are read as plain YAML (no torch import); step schedules are computed with
`py4.data.schedule.compute_schedule` from the data.schedule YAMLs, so step counts, tokens
per step and totals are derived, never copied.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from py4.campaign.spec import CampaignSpec, ModelSpec
from py4.config import read_yaml
from py4.data.schedule import StepSchedule, compute_schedule


_MISSING = object()

# A value the campaign spec does not record (the smoke campaign computes it at run time or has no
# as-run measurement): the table says so instead of failing.
NOT_RECORDED = "n/a (computed at run time)"


@dataclass(frozen=True)
class NotRecorded:
    """Stands in for an as-run fact (``recorded.*``) a campaign spec does not have."""

    value: str = "n/a (not recorded)"
    provenance: str = "not recorded in the campaign spec"


def recorded(facts: dict[str, Any], key: str) -> Any:
    """``facts[key]`` (a recorded value with its provenance), or :class:`NotRecorded`."""
    return facts.get(key) or NotRecorded()


def _stage_files(m: ModelSpec) -> list[tuple[str, list[str]]]:
    """(training stage, its config files) of a model."""
    f = m.files
    stages = [("midtrain", list(f.midtrain.values())), ("sft", [f.sft]), ("eft", [f.eft, f.eft512_warmstart]),
              ("grpo", [f.grpo]), ("eft_dose", [f.eft_dose])]
    return [(stage, [p for p in files if p]) for stage, files in stages]


class TableError(ValueError):
    """A config the table needs is missing or inconsistent (names the file and field)."""


@dataclass
class Sources:
    spec: CampaignSpec
    spec_path: str
    root: Path = Path(".")
    _cache: dict[str, Any] = field(default_factory=dict)

    def yaml(self, path: str | None, what: str = "config") -> dict[str, Any]:
        """The YAML file at `path` (relative to the repo root); raises TableError when absent."""
        if path is None:
            raise TableError(f"{self.spec_path}: no {what} file named")
        if path not in self._cache:
            full = self.root / path
            if not full.is_file():
                raise TableError(f"{self.spec_path}: {what} file {path} does not exist")
            self._cache[path] = read_yaml(full)
        return self._cache[path]

    def get(self, path: str, dotted: str) -> Any:
        """A field of a config file, else the stage type's value for it (a field the file leaves
        at its default, as the smoke configs do); raises TableError naming file and field."""
        for node in (self.yaml(path), self._resolved(path)):
            for key in dotted.split("."):
                if not isinstance(node, dict) or key not in node:
                    node = _MISSING
                    break
                node = node[key]
            if node is not _MISSING:
                return node
        raise TableError(f"{path}: field {dotted} is missing")

    def _resolved(self, path: str) -> dict[str, Any] | None:
        """The training stage config at ``path`` with every default filled in (None: not one)."""
        key = f"resolved:{path}"
        if key not in self._cache:
            stage = next((stage for m in self.models for stage, files in _stage_files(m) if path in files), None)
            if stage is None:
                self._cache[key] = None
            else:
                from py4.config import load_config
                from py4.train.stages import get_stage

                self._cache[key] = load_config(get_stage(stage)[1], self.root / path).model_dump(mode="json")
        return self._cache[key]

    def schedule(self, path: str) -> StepSchedule:
        """The step schedule a data.schedule YAML describes; checks its expected_max_steps."""
        cfg = self.yaml(path, "data.schedule")
        total = cfg.get("total_tokens")
        sched = compute_schedule(
            seq_len=cfg["seq_len"], micro_batch=cfg["micro_batch"], grad_accum=cfg["grad_accum"],
            gpus=cfg["gpus"], rounding=cfg.get("rounding", "floor"),
            total_tokens=int(total) if total is not None else None, rows=cfg.get("rows"),
            epochs=cfg.get("epochs", 1), warmup=cfg.get("warmup"), max_steps_cap=cfg.get("max_steps_cap"))
        expected = cfg.get("expected_max_steps")
        if expected is not None and expected != sched.max_steps:
            raise TableError(f"{path}: expected_max_steps {expected} but the schedule computes {sched.max_steps}")
        return sched

    @property
    def models(self) -> list[ModelSpec]:
        return list(self.spec.models.values())

    def accelerate(self, gpus: int) -> dict[str, Any] | None:
        """The FSDP2 accelerate config a run on `gpus` GPUs launches with (None: one GPU)."""
        if gpus <= 1:
            return None
        return self.yaml(f"configs/accelerate/fsdp2_{gpus}gpu.yaml", "accelerate")


def files_of(paths: list[str]) -> str:
    """Distinct paths in order, ';'-joined (a row's source)."""
    seen: list[str] = []
    for p in paths:
        if p and p not in seen:
            seen.append(p)
    return "; ".join(seen)
