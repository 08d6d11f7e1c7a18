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
from py4.hub.dataset_source import ExportedDataset
from py4.problems.probe_set.build import CANARY, CONTEXTS, load_probes, probe_paths


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
    from py4.hub.dataset_source import read_dataset

    return _probes_of(read_dataset(folder), folder)


def _probes_of(data: ExportedDataset, folder: str | Path) -> list[dict[str, Any]]:
    from py4.hub.dataset_source import DatasetSourceError

    if data.metadata.get("canary") != CANARY or list(data.splits) != ["test"]:
        raise DatasetSourceError(f"{folder}: not a probe-set export (one test split and the probes' canary)")
    return data.splits["test"]


def install_probes(folder: str | Path, data_dir: str | Path, source: dict[str, Any] | None = None) -> Path:
    """Write the probe set of a dataset folder into ``data_dir`` in the shipped layout
    (``probes-<version>.jsonl.gz`` and its manifest), so ``load_probes(data_dir)`` and ``py4 eval
    probes --probes`` read it. The file's bytes are those ``py4 probes build`` writes for the same
    pairs, so its hash is the original set's. ``source``: where the folder came from (a Hub pin),
    kept in the manifest's ``dataset`` entry beside the card's content hash. Returns the file."""
    import json

    from py4.hub.dataset_source import read_dataset
    from py4.problems.probe_set.build import write_probes

    data = read_dataset(folder)
    path, manifest_path = write_probes(_probes_of(data, folder), data_dir)
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["dataset"] = {**(source or {}), "folder": str(Path(folder).resolve()),
                           "content_sha256": data.metadata["content_sha256"]}
    manifest_path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return path
