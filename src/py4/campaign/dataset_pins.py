"""The campaign's datasets taken from the Hub (`CampaignSpec.datasets`): checked offline, and
read by the runs.

Each pin (Hub id + revision; the spec refuses one without a revision) must be in the local
Hugging Face cache, laid out as the Hub client lays it out, and must read back as the export
it names: the bank as problems, the probe set as pairs, the corpus as documents, with the
shards' hash equal to the card's. `check_dataset_pins` lists what is wrong, one line each
(``py4 campaign plan`` and ``run`` refuse a campaign with any); `dataset_folders` gives the
snapshot folders.

`use_pinned_datasets` puts the pins into the DAG: one ``dataset`` run per pin (``py4 campaign
dataset``, `py4.pinned_datasets`) reads it from the cache and writes it as its stages take it
— the bank to ``<out>/datasets/bank``, the probe set to ``<out>/datasets/probes``, the corpus
to ``<out>/corpus`` in place of generating it — and every run that reads the bank (evaluations,
EFT doses, the sanity bank, GRPO) or the probe set is given that folder and waits for that run.
The probe set's readers: the probe runs, and the runs that keep probe text out of a corpus (the
corpus's and the held-out corpus's generation, the pinned corpus's and bank's ``dataset`` runs). A spec
without pins gets no new run and no changed command line.
"""

from __future__ import annotations

from pathlib import Path

from py4.campaign.node import Node
from py4.campaign.node_meta import DatasetMeta
from py4.campaign.spec import CampaignSpec, HubPin
from py4.errors import Py4Error
from py4.overrides import overrides

KINDS = ("bank", "probes", "corpus")

BANK_READERS = {"eval": "bank_dir", "eft_dose": "bank_dir", "grpo": "problems.bank_dir"}
"""Stage -> the config key of the bank it reads (an override; the sanity bank: its ``bank_dir`` option)."""

PROBE_READERS = ("probes", "corpus", "heldout_corpus")
"""Stages given the probe set as their ``probes`` option: the probe runs score it, the corpus
generations keep its text out (the pinned corpus's and bank's ``dataset`` runs, which check for
it, get it where they are made)."""


def pins(spec: CampaignSpec) -> dict[str, HubPin]:
    """kind -> pin, for the kinds the spec pins."""
    return {k: p for k in KINDS if (p := getattr(spec.datasets, k)) is not None}


def dataset_folders(spec: CampaignSpec, cache_dir: str | Path | None = None) -> dict[str, Path]:
    """kind (bank, probes, corpus) -> the snapshot folder of its pin. Raises DatasetSourceError
    for a pin the cache does not hold."""
    from py4.pinned_datasets import snapshot

    return {k: snapshot(k, p.hub_id, p.revision, cache_dir) for k, p in pins(spec).items()}


def check_dataset_pins(spec: CampaignSpec, cache_dir: str | Path | None = None) -> list[str]:
    """One line per pinned dataset that is missing from the cache or is not the export it names
    (``datasets.<kind> (ID@REV): why``)."""
    from py4.pinned_datasets import check_pinned

    problems = []
    for kind, pin in pins(spec).items():
        try:
            check_pinned(kind, pin.hub_id, pin.revision, cache_dir)
        except (Py4Error, OSError, ValueError) as exc:
            problems.append(str(exc))
    return problems


def dataset_dir(out: str, kind: str) -> str:
    """Where the run of a pinned ``kind`` writes it: the corpus where the campaign's corpus goes."""
    return f"{out}/corpus" if kind == "corpus" else f"{out}/datasets/{kind}"


def use_pinned_datasets(spec: CampaignSpec, nodes: dict[str, Node]) -> dict[str, Node]:
    """The DAG's nodes with the spec's pinned datasets read by its runs (module docstring):
    the bank's and probe set's ``dataset`` runs first, the corpus's in the ``corpus`` run's place."""
    pinned = pins(spec)
    if not pinned:
        return nodes
    out = spec.out_dir.rstrip("/")

    def dataset_node(node_id: str, kind: str) -> Node:
        """The run that installs ``kind``; a pinned corpus or bank is checked for probe text, so
        it reads the pinned probe set."""
        pin = pinned[kind]
        where = dataset_dir(out, kind)
        options = {"kind": kind, "hub_id": pin.hub_id, "revision": pin.revision, "out": where}
        checked = "probes" in pinned and kind in ("corpus", "bank")
        if checked:
            options["probes"] = dataset_dir(out, "probes")
        return Node(id=node_id, stage="dataset", run_dir=where, options=options,
                    inputs=["dataset:probes"] if checked else [],
                    meta=DatasetMeta(dataset=kind, hub_id=pin.hub_id, revision=pin.revision))

    first = {f"dataset:{k}": dataset_node(f"dataset:{k}", k) for k in ("bank", "probes") if k in pinned}
    result = {**first, **nodes}
    if "corpus" in pinned and "corpus" in result:
        result["corpus"] = dataset_node("corpus", "corpus")  # same id and folder: its readers are unchanged
    for node in result.values():
        if "bank" in pinned and node.stage in BANK_READERS:
            key = BANK_READERS[node.stage]
            if not any(o.key == key for o in node.overrides):  # the sanity evaluation's own bank stays
                node.overrides += overrides({key: dataset_dir(out, "bank")})
                node.inputs.append("dataset:bank")
        elif "bank" in pinned and node.stage == "sanity_bank":
            node.options["bank_dir"] = dataset_dir(out, "bank")
            node.inputs.append("dataset:bank")
        if "probes" in pinned and node.stage in PROBE_READERS:
            node.options["probes"] = dataset_dir(out, "probes")
            node.inputs.append("dataset:probes")
    return result
