"""Table building blocks: rows, groups, and the shared wordings of optimisation settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from py4.report import formats as F
from py4.report.hp_sources import Sources


@dataclass
class Row:
    name: str
    values: list[str] | None = None
    source: str | None = None
    label: bool = False
    sub: bool = False

    def to_json(self, columns: int) -> dict[str, Any]:
        """A label row is {name, label}; equal values over several columns become one span."""
        if self.label:
            return {"name": self.name, "label": True}
        out: dict[str, Any] = {"name": self.name}
        assert self.values is not None and len(self.values) == columns, (self.name, self.values)
        if columns > 1 and len(set(self.values)) == 1:
            out["span"] = self.values[0]
        else:
            out["values"] = list(self.values)
        out["source"] = self.source or ""
        if self.sub:
            out["sub"] = True
        return out


@dataclass
class Group:
    part: str
    title: str
    descriptor: str | None = None
    rows: list[Row] = field(default_factory=list)

    def add(self, name: str, values: list[Any], source: str, sub: bool = False) -> None:
        self.rows.append(Row(name, [str(v) for v in values], source, sub=sub))

    def label(self, name: str) -> None:
        self.rows.append(Row(name, label=True))


def opt(S: Sources, path: str) -> dict[str, Any]:
    """The `optimisation` block of a stage config, its unset fields at the stage type's defaults
    (py4.train.common.Optimisation: what the run uses; the smoke configs leave gpus unset)."""
    from py4.train.common import Optimisation

    return {**Optimisation.model_construct().model_dump(), **S.get(path, "optimisation")}


def geometry(o: dict[str, Any]) -> str:
    return F.times(o["micro_batch"], o["grad_accum"], o["gpus"])


def schedule_words(o: dict[str, Any], warmup_style: str = "short") -> str:
    """'cosine to $0.1\\times$, 10 warmup steps' / 'cosine to 0, 5\\% warmup' / '...'."""
    head = scheduler_head(o)
    return f"{head}, {warmup_words(o, warmup_style)}"


def scheduler_head(o: dict[str, Any], short: bool = False) -> str:
    kind = o["lr_scheduler"]
    if kind == "cosine_with_min_lr":
        return "cosine" if short else f"cosine to ${F.number(o['min_lr_rate'])}\\times$"
    if kind == "cosine":
        return "cosine" if short else "cosine to 0"
    if kind in ("constant", "linear"):
        return kind
    raise ValueError(f"no table wording for lr_scheduler {kind!r}")


def warmup_words(o: dict[str, Any], style: str = "short") -> str:
    w = o.get("warmup", 0) or 0
    if w == 0:
        return "no warmup"
    if w >= 1:
        return f"{int(w)} warmup steps"
    return f"linear warmup over {F.percent(w)} of steps" if style == "long" else f"{F.percent(w)} warmup"


def checkpointing(S: Sources, o: dict[str, Any]) -> bool:
    """Gradient checkpointing: the stage's own flag ('auto' is on for GPU runs), or FSDP's."""
    acc = S.accelerate(o.get("gpus", 1))
    by_fsdp = bool(acc and acc.get("fsdp_config", {}).get("fsdp_activation_checkpointing"))
    return by_fsdp or o.get("gradient_checkpointing") in (True, "auto")


def precision(S: Sources, o: dict[str, Any], with_parallelism: bool) -> str:
    """'bf16, FSDP2, gradient checkpointing' from the accelerate config and the stage flags."""
    acc = S.accelerate(o.get("gpus", 1))
    parts = [acc.get("mixed_precision", "bf16") if acc else "bf16"]
    if with_parallelism and acc and acc.get("fsdp_config", {}).get("fsdp_version") == 2:
        parts.append("FSDP2")
    if checkpointing(S, o):
        parts.append("gradient checkpointing")
    return ", ".join(parts)


NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 8: "eight"}

DATASET_NICKNAMES = {"dolma3_dolmino_mix": "Dolmino", "Dolci-Instruct": "Dolci"}


def nickname(hub_name: str) -> str:
    """The short name the paper uses for a dataset (Dolmino, Dolci); the name itself otherwise."""
    for prefix, nick in DATASET_NICKNAMES.items():
        if hub_name.startswith(prefix):
            return nick
    return hub_name
