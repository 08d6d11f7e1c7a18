"""What a campaign run is about beyond its command: one typed record per kind of node.

The DAG (`py4.campaign.dag`) gives every node a meta: the model and arm it belongs to, and per
kind what the report, the Slurm backend, the memory plan and the rehearsal read of it (the
evaluated model's kind and dose, a GRPO segment's end, the GPUs a run holds besides its own).
None of it is on the command line, so none of it changes a run's fingerprint.

The records are frozen: nodes of one arm share theirs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

ModelKind = Literal["base", "midtrain", "sft", "graft", "eft", "grpo"]
"""The kind of a model the campaign makes (a probe run's ``kind``)."""

EvalKind = Literal["graft", "eft", "grpo"]
"""An evaluation's series in the results: the chat parent is EFT dose 0."""


@dataclass(frozen=True, kw_only=True)
class NodeMeta:
    """A run of one model's chain (pack, mix, midtrain, SFT, graft) or of the whole campaign
    (assets, corpus: no model, no arm)."""

    model: str | None = None
    """The campaign's model key (``models.<key>``)."""
    arm: str | None = None

    @property
    def held_gpus(self) -> int:
        """GPUs the run holds besides its own processes' (a server, a generation): none."""
        return 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, kw_only=True)
class SubsetMeta(NodeMeta):
    """A subset of the corpus: an arm's Python-4 tokens per copy."""

    target_tokens: int


@dataclass(frozen=True, kw_only=True)
class DoseMeta(NodeMeta):
    """An EFT dose (`py4 train eft_dose`): ``rows`` rows, whose replay answers it samples from
    its parent on ``generate_gpus`` GPUs (0: on the CPU)."""

    rows: int
    generate_gpus: int = 0

    @property
    def held_gpus(self) -> int:
        return self.generate_gpus


@dataclass(frozen=True, kw_only=True)
class EFTMeta(NodeMeta):
    """An EFT run on a dose of ``dose`` rows (the +EFT matrix's when ``matrix``)."""

    dose: int
    matrix: bool = False


@dataclass(frozen=True, kw_only=True)
class GRPOSegmentMeta(NodeMeta):
    """One GRPO segment: it trains to step ``segment_end`` in the run folder all segments share,
    and holds the model's whole node (``reserve_gpus``) for the vLLM rollout server."""

    segment_end: int
    reserve_gpus: int = 0
    shared_run_dir: bool = True

    @property
    def held_gpus(self) -> int:
        return self.reserve_gpus


@dataclass(frozen=True, kw_only=True)
class EvaluatedMeta(NodeMeta):
    """A run that scores one model the campaign made: the node that made it, its weights."""

    model_node: str
    weights: str
    dose: int | None = None
    matrix: bool = False
    step: int | None = None
    """A GRPO model's step."""


@dataclass(frozen=True, kw_only=True)
class EvalMeta(EvaluatedMeta):
    """``py4 eval`` of one model on ``splits`` (``base``: the model an adapter was trained on)."""

    model_kind: EvalKind
    splits: tuple[str, ...] = ()
    base: str | None = None


@dataclass(frozen=True, kw_only=True)
class ProbeMeta(EvaluatedMeta):
    """``py4 eval probes`` of one model (``adapter``: a LoRA on ``weights``); ``compare``: the
    control arm's model node it is paired with."""

    kind: ModelKind
    adapter: str | None = None
    compare: str | None = None


@dataclass(frozen=True, kw_only=True)
class HeldoutLossMeta(NodeMeta):
    """Held-out Python-4 loss of the base or an arm's midtrained model."""

    kind: Literal["base", "midtrain"]
    weights: str


@dataclass(frozen=True, kw_only=True)
class SanityBankMeta(NodeMeta):
    """The train_sanity bank: the gold problems of the ``dose``-row EFT dose."""

    dose: int


@dataclass(frozen=True, kw_only=True)
class DatasetMeta(NodeMeta):
    """A dataset the campaign reads from the Hub, pinned (`py4.campaign.dataset_pins`)."""

    dataset: str
    hub_id: str
    revision: str | None = None
