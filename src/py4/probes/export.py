"""The rule-probe set as a Hub dataset: one `test` split of its pairs and a dataset card with
the set's content hash, canary and how it was built.

It sits beside the probe builder (layer of the bank): what it exports is the shipped set,
the same file `load_probes` verifies against its manifest. `check` (a dict of two programs)
is JSON text; the other fields are plain columns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from py4.hub.dataset_folder import DatasetCard, write_dataset
from py4.probes.build import CANARY, CONTEXTS, load_probes, probe_paths


def export_probes(out_dir: str | Path, *, force: bool = False) -> dict[str, Any]:
    """Write the shipped probe set as a dataset folder; returns write_dataset's summary."""
    from py4.fileio import read_json_object

    records = load_probes()
    manifest = read_json_object(probe_paths()[1])
    card = DatasetCard(
        pretty_name="Python-4 rule probes",
        summary=("Minimal pairs that test whether a model knows each of Python-4's 30 rules: the same "
                 "program once with the Python-4 form (`p4`) and once with the Python 3 form (`py3`) at "
                 "one span between `prefix` and `suffix`, in three contexts (" + ", ".join(CONTEXTS) + "). "
                 "A model knows the rule when it gives the Python-4 member the higher log-probability."),
        license="apache-2.0",
        how_made={"command": "py4 probes build", "pairs": manifest.get("pairs"),
                  "probe file sha256": manifest.get("jsonl_sha256"), "per rule": manifest.get("per_rule")},
        guarantees=[f"Every pair carries the canary `{CANARY}`: a corpus that contains it contains the probes.",
                    "Both members of every pair were run by Boa (`check`): the Python-4 member compiles "
                    "and runs; the Python 3 member is what Python-4 refuses or reads differently."],
        json_columns=["check"], tags=["evaluation", "minimal-pairs"],
        extra_metadata={"canary": CANARY})
    return write_dataset(out_dir, {"test": records}, card, force=force)


def probes_from_dataset(folder: str | Path) -> list[dict[str, Any]]:
    """The probe pairs of a probe-set dataset folder (`export_probes`'s, e.g. a Hub snapshot),
    each the record the shipped set holds (``check`` decoded). Raises DatasetSourceError when
    the folder is not an intact probe-set export."""
    from py4.hub.dataset_source import DatasetSourceError, read_dataset

    data = read_dataset(folder)
    if data.metadata.get("canary") != CANARY or list(data.splits) != ["test"]:
        raise DatasetSourceError(f"{folder}: not a probe-set export (one test split and the probes' canary)")
    return data.splits["test"]
