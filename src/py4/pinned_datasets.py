"""A dataset pinned on the Hub (id + commit), read offline from the local Hugging Face cache and
written in the form the stages take: the inverse of ``py4 problems export``, ``py4 probes
export`` and ``py4 corpus export``.

- ``bank``: ``bank-<version>.jsonl.gz`` + manifest, byte for byte what ``py4 problems build``
  writes (a stage's ``bank_dir``);
- ``probes``: ``probes-<version>.jsonl.gz`` + manifest, what ``py4 probes build`` writes (``py4
  eval probes --probes``);
- ``corpus``: a corpus folder (shards + manifest.json), what ``py4 corpus generate`` writes.

The snapshot is found with ``huggingface_hub.snapshot_download(..., local_files_only=True)``
(`py4.hub.dataset_source.pinned_dataset_folder`): never the network. Its shards must hash to
the card's ``content_sha256`` (and a corpus's documents to its ``corpus_content_sha256``). The
written folder's manifest, and the run manifest beside it, record the Hub id, the pin, the
commit it resolved to and the content hash. Every error is one line naming the spec field
(``datasets.<kind>``), the pin and what is wrong.

Deviation from the reference: the as-run campaign downloaded its corpora inside each job; here
one run per pin reads the cache and the runs that consume it read the folder it wrote, so a
pin is resolved and hash-checked once and every consumer reads the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from py4.hub.dataset_source import DatasetSourceError, ExportedDataset, pinned_dataset_folder

Kind = Literal["bank", "probes", "corpus"]
KINDS: tuple[Kind, ...] = ("bank", "probes", "corpus")


def _installer(kind: str) -> Callable[..., Any]:
    if kind == "bank":
        from py4.problems.export import install_bank

        return install_bank
    if kind == "probes":
        from py4.probes.export import install_probes

        return install_probes
    if kind == "corpus":
        from py4.corpus.export import install_corpus

        return install_corpus
    raise DatasetSourceError(f"dataset kind {kind!r}: expected one of {', '.join(KINDS)}")


def _reader(kind: str) -> Callable[[Path], Any]:
    if kind == "bank":
        from py4.problems.export import bank_from_dataset

        return bank_from_dataset
    if kind == "probes":
        from py4.probes.export import probes_from_dataset

        return probes_from_dataset
    from py4.corpus.export import corpus_from_dataset

    return corpus_from_dataset


def field_of(kind: str, hub_id: str, revision: str | None) -> str:
    """How an error names a pin: ``datasets.bank (ORG/NAME@REV)``, the spec field and the pin."""
    return f"datasets.{kind} ({hub_id}@{revision})"


def snapshot(kind: str, hub_id: str, revision: str | None, cache_dir: str | Path | None = None) -> Path:
    """The pin's snapshot folder in the cache. Raises DatasetSourceError (one line, naming the
    field) for an unpinned reference or a pin the cache does not hold."""
    try:
        return pinned_dataset_folder(hub_id, revision, cache_dir)
    except DatasetSourceError as exc:
        raise DatasetSourceError(f"{field_of(kind, hub_id, revision)}: {exc}") from None


def check_pinned(kind: str, hub_id: str, revision: str | None, cache_dir: str | Path | None = None) -> None:
    """Read the pin from the cache as the export of ``kind`` it must be (hashes checked); raises
    DatasetSourceError naming the field. What ``py4 campaign plan`` and ``run`` check first."""
    folder = snapshot(kind, hub_id, revision, cache_dir)
    try:
        _reader(kind)(folder)
    except (DatasetSourceError, OSError, ValueError) as exc:
        raise DatasetSourceError(f"{field_of(kind, hub_id, revision)}: {exc}") from None


def install_pinned(kind: str, hub_id: str, revision: str | None, out: str | Path,
                   cache_dir: str | Path | None = None, probes_dir: str | Path | None = None) -> dict[str, Any]:
    """Write the pinned dataset into ``out`` in the form its stages take, with a run manifest
    (``run_manifest.json``) whose ``dataset`` input is the Hub id, pin, commit and content hash.
    Returns that record plus what was written (``path``). Raises DatasetSourceError naming the
    field (missing pin, not the kind's export, shards or documents not the card's hashes, a
    corpus document or a bank problem holding probe text).

    A corpus or a bank is checked for the text of ``probes_dir``'s probe set (default: the
    shipped one): its card's no-probe-text guarantee is for the probe set its exporter had, and a
    campaign that pins another probe set scores that one."""
    from py4.runs import RunRecorder

    install = _installer(kind)
    folder = snapshot(kind, hub_id, revision, cache_dir)
    source = {"hub_id": hub_id, "revision": revision, "commit": folder.name}
    with RunRecorder(out, None, kind=f"dataset-{kind}") as recorder:
        try:
            if kind in ("corpus", "bank"):
                from py4.hub.dataset_source import read_dataset
                from py4.problems.probe_set.build import probe_paths

                data = read_dataset(folder)  # read and hashed once: checked for probe text, then installed
                _check_no_probe_text(kind, data, folder, probes_dir)
                recorder.add_input("probes", path=probe_paths(probes_dir)[0])
                written = install(folder, out, source, data=data)
            else:
                written = install(folder, out, source)
        except (DatasetSourceError, OSError, ValueError) as exc:
            raise DatasetSourceError(f"{field_of(kind, hub_id, revision)}: {exc}") from None
        content = written["dataset"] if isinstance(written, dict) else _dataset_entry(Path(written))
        record = {**source, "content_sha256": content["content_sha256"]}
        recorder.add_input("dataset", hash_content=False, **record)
        path = Path(out) / "manifest.json" if kind == "corpus" else Path(written)
        recorder.add_output(kind, path)  # the corpus: its manifest, as py4 corpus generate records it
    return {"kind": kind, **record, "path": str(path)}


def _check_no_probe_text(kind: str, data: ExportedDataset, folder: Path, probes_dir: str | Path | None) -> None:
    from py4.corpus.export import _corpus_of
    from py4.problems.export import _bank_of
    from py4.problems.probe_set.build import load_probes
    from py4.problems.probe_set.verify import bank_leaks, corpus_leaks

    if kind == "corpus":
        leaks, what = corpus_leaks(_corpus_of(data, folder)[1], load_probes(probes_dir)), "documents"
    else:
        leaks, what = bank_leaks(_bank_of(data, folder)[1], load_probes(probes_dir)), "problems"
    if leaks:
        first = sorted(leaks)[0]
        raise DatasetSourceError(f"{len(leaks)} {what} hold the text of probes of "
                                 f"{probes_dir or 'the shipped probe set'} (first: {first}, probes "
                                 f"{', '.join(leaks[first][:3])})")


def _dataset_entry(written: Path) -> dict[str, Any]:
    """The ``dataset`` entry of the manifest beside an installed bank or probe file."""
    import json

    manifest = written.with_name(written.name.replace(".jsonl.gz", ".manifest.json"))
    return dict(json.loads(manifest.read_text(encoding="utf-8"))["dataset"])
