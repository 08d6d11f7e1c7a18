"""Table building blocks: rows, groups, and the shared wordings of optimisation settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from py4.report import formats
from py4.report.hp_sources import Sources

if TYPE_CHECKING:
    from py4.train.common import Optimisation


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


def geometry(optimisation: Optimisation) -> str:
    return formats.times(optimisation.micro_batch, optimisation.grad_accum, optimisation.gpus)


def schedule_words(optimisation: Optimisation, warmup_style: str = "short") -> str:
    """'cosine to $0.1\\times$, 10 warmup steps' / 'cosine to 0, 5\\% warmup' / '...'."""
    return f"{scheduler_head(optimisation)}, {warmup_words(optimisation, warmup_style)}"


def scheduler_head(optimisation: Optimisation, short: bool = False) -> str:
    kind = optimisation.lr_scheduler
    if kind == "cosine_with_min_lr":
        if short:
            return "cosine"
        if optimisation.min_lr_rate is None:
            raise ValueError("lr_scheduler cosine_with_min_lr without min_lr_rate")
        return f"cosine to ${formats.number(optimisation.min_lr_rate)}\\times$"
    if kind == "cosine":
        return "cosine" if short else "cosine to 0"
    if kind in ("constant", "linear"):
        return kind
    raise ValueError(f"no table wording for lr_scheduler {kind!r}")


def warmup_words(optimisation: Optimisation, style: str = "short") -> str:
    warmup = optimisation.warmup
    if warmup == 0:
        return "no warmup"
    if warmup >= 1:
        return f"{int(warmup)} warmup steps"
    share = formats.percent(warmup)
    return f"linear warmup over {share} of steps" if style == "long" else f"{share} warmup"


def checkpointing(sources: Sources, optimisation: Optimisation) -> bool:
    """Gradient checkpointing: the stage's own flag ('auto' is on for GPU runs), or FSDP's."""
    launch = sources.launch(optimisation.gpus)
    by_fsdp = launch is not None and launch.activation_checkpointing
    return by_fsdp or optimisation.gradient_checkpointing in (True, "auto")


def precision(sources: Sources, optimisation: Optimisation, with_parallelism: bool) -> str:
    """'bf16, FSDP2, gradient checkpointing' from the accelerate config and the stage flags."""
    launch = sources.launch(optimisation.gpus)
    parts = [launch.mixed_precision if launch else "bf16"]
    if with_parallelism and launch and launch.fsdp_version == 2:
        parts.append("FSDP2")
    if checkpointing(sources, optimisation):
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
