"""The campaign's datasets taken from the Hub (`CampaignSpec.datasets`), checked offline.

Each pin (Hub id + revision; the spec refuses one without a revision) must be in the local
Hugging Face cache, laid out as the Hub client lays it out, and must read back as the export
it names: the bank as problems, the probe set as pairs, the corpus as documents, with the
shards' hash equal to the card's. `check_dataset_pins` lists what is wrong, one line each;
`dataset_folders` gives the snapshot folders to read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from py4.campaign.spec import CampaignSpec
from py4.errors import Py4Error


def dataset_folders(spec: CampaignSpec, cache_dir: str | Path | None = None) -> dict[str, Path]:
    """kind (bank, probes, corpus) -> the snapshot folder of its pin. Raises DatasetSourceError
    for a pin the cache does not hold."""
    from py4.hub.dataset_source import pinned_dataset_folder

    pins = {k: getattr(spec.datasets, k) for k in ("bank", "probes", "corpus")}
    return {k: pinned_dataset_folder(p.hub_id, p.revision, cache_dir) for k, p in pins.items() if p}


def check_dataset_pins(spec: CampaignSpec, cache_dir: str | Path | None = None) -> list[str]:
    """One line per pinned dataset that is missing from the cache or is not the export it names."""
    from py4.corpus.export import corpus_from_dataset
    from py4.hub.dataset_source import pinned_dataset_folder
    from py4.probes.export import probes_from_dataset
    from py4.problems.export import bank_from_dataset

    readers: dict[str, Any] = {"bank": bank_from_dataset, "probes": probes_from_dataset, "corpus": corpus_from_dataset}
    problems = []
    for kind, read in readers.items():
        pin = getattr(spec.datasets, kind)
        if pin is None:
            continue
        try:
            read(pinned_dataset_folder(pin.hub_id, pin.revision, cache_dir))
        except (Py4Error, OSError, ValueError) as exc:
            problems.append(f"datasets.{kind} ({pin.hub_id}@{pin.revision}): {exc}")
    return problems
