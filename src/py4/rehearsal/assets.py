"""Everything a rehearsal reads instead of the network: stand-in models laid out as Hub
snapshots at the campaign's pinned revisions, stand-in datasets in the offline datasets
cache, the Dolci local copy, and the campaign's accelerate config for CPU processes.

Which Hub references need a snapshot is read from the campaign itself: its models' pins
(base, it, it_base) and every Hub id its stage configs name (tokenizers, count tokenizers,
the corpus tokenizer), each at the revision the config gives. The Hub treats ids
case-insensitively (``google/gemma-4-12b-it`` finds ``google/gemma-4-12B-it``) while a local
cache does not, so a config's spelling of a pinned model gets its own snapshot of the same
stand-in, at that pin. An unpinned reference is served from the ``main`` ref.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from py4.errors import Py4Error
from py4.rehearsal import datasets as standin_data
from py4.rehearsal.hub_cache import install_snapshot
from py4.rehearsal.standins import build_standin

DATASET_IDS = (standin_data.DOLMINO_ID, standin_data.DOLCI_ID)
TOKENIZER_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "chat_template.jinja")


def family_of(hub_id: str) -> str | None:
    """The stand-in family for a model id: gemma4_12b (the unified 12B), gemma4 (the 31B), glm45,
    gemma3 (tokenizer only), or None."""
    name = hub_id.lower()
    if "gemma-4-12b" in name:
        return "gemma4_12b"
    if "gemma-4" in name:
        return "gemma4"
    if "glm-4.5" in name:
        return "glm45"
    if "gemma-3" in name:
        return "gemma3"
    return None


@dataclass(frozen=True)
class HubRef:
    repo_id: str
    revision: str | None
    where: str  # the file (and key) that names it


def campaign_hub_refs(spec) -> list[HubRef]:
    """Every Hub model reference of the campaign: model pins, then those its stage configs' files
    name (read as the pin check reads a resolved config, `py4.campaign.pin_check.stage_refs`)."""
    from py4.campaign.pin_check import stage_refs
    from py4.config import read_yaml

    refs = []
    for key, model in spec.models.items():
        for kind in ("base", "it", "it_base"):
            pin = getattr(model, kind)
            refs.append(HubRef(pin.hub_id, pin.revision, f"campaign:models.{key}.{kind}"))
    files: list[str] = [spec.corpus.config] if spec.corpus.config else []
    for model in spec.models.values():
        files += model.files.paths()
    for path in dict.fromkeys(files):
        refs += [HubRef(ref.hub_id, ref.revision, f"{path}:{ref.field}") for ref in stage_refs(read_yaml(path))
                 if ref.kind != "dataset" and family_of(ref.hub_id)]
    return refs


def _pinned_kind(spec, repo_id: str) -> tuple[str, str | None] | None:
    """(kind, revision) of the campaign pin that ``repo_id`` names (case-insensitively)."""
    for model in spec.models.values():
        for kind in ("it", "base", "it_base"):
            pin = getattr(model, kind)
            if pin.hub_id.lower() == repo_id.lower():
                return ("it" if kind == "it" else "base"), pin.revision
    return None


def install_models(spec, hub_cache: Path, standins_dir: Path, seed: int = 0) -> list[dict[str, Any]]:
    """Build the stand-ins the campaign's references need and install each reference's snapshot.

    Returns one row per installed (repo, revision): what it is and where it came from.
    """
    installed: dict[tuple[str, str], dict[str, Any]] = {}
    for ref in campaign_hub_refs(spec):
        family = family_of(ref.repo_id)
        pinned = _pinned_kind(spec, ref.repo_id)
        if family == "gemma3":  # a counting tokenizer only (the campaign's count basis)
            kind, source, files = "tokenizer", _standin(standins_dir, "gemma4", "base", seed), TOKENIZER_FILES
        elif pinned is not None:
            kind, files = pinned[0], None
            source = _standin(standins_dir, family, kind, seed)
        else:
            raise Py4Error(f"{ref.where}: Hub model {ref.repo_id!r} is not one of the campaign's pins; "
                             "the rehearsal has no stand-in for it")
        revision = ref.revision or (pinned[1] if pinned else None)
        key = (ref.repo_id, revision or "main")
        if key in installed:
            continue
        install_snapshot(hub_cache, ref.repo_id, revision, _subset(source, files, standins_dir))
        installed[key] = {"repo_id": ref.repo_id, "revision": revision or "main", "standin": f"{family}-{kind}",
                          "named_by": ref.where, "pinned": ref.revision is not None}
    return list(installed.values())


def _standin(standins_dir: Path, family: str, kind: str, seed: int) -> Path:
    from py4.rehearsal.standins import STANDIN_VERSION

    folder = standins_dir / f"{family}-{kind}"
    marker = folder / "standin.json"
    if not marker.exists() or json.loads(marker.read_text()).get("version") != STANDIN_VERSION:
        build_standin(family, kind, folder, seed)
    return folder


def _subset(source: Path, files: tuple[str, ...] | None, standins_dir: Path) -> Path:
    """``source`` itself, or a folder holding only ``files`` of it (a tokenizer-only repo)."""
    if files is None:
        return source
    import shutil

    folder = standins_dir / f"{source.name}-tokenizer"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for name in files:
        shutil.copyfile(source / name, folder / name)
    return folder


def install_datasets(spec, datasets_cache: Path, dolci_copy: Path, sizes) -> dict[str, Any]:
    """Dolmino and Dolci stand-ins in the datasets cache; Dolci's rows also as a local copy."""
    dolmino = standin_data.dolmino_rows(sizes.dolmino_docs)
    dolci = standin_data.dolci_rows(sizes.dolci_kept, sizes.dolci_dropped)
    replay_rev = spec.replay.revision if spec.replay else "main"
    sft_rev = spec.sft_data.revision if spec.sft_data else "main"
    standin_data.install_dataset(datasets_cache, standin_data.DOLMINO_ID, replay_rev, dolmino)
    standin_data.install_dataset(datasets_cache, standin_data.DOLCI_ID, sft_rev, dolci)
    standin_data.write_jsonl(dolci, dolci_copy)
    return {standin_data.DOLMINO_ID: {"revision": replay_rev, "rows": len(dolmino)},
            standin_data.DOLCI_ID: {"revision": sft_rev, "rows": len(dolci), "kept": sizes.dolci_kept,
                                    "local_copy": str(dolci_copy)}}


def write_accelerate_configs(config_dir: Path, out_dir: Path, *, use_cpu: bool) -> dict[str, str]:
    """The campaign's accelerate configs with only ``use_cpu`` changed. The process count stays the
    launch's (``--num_processes``: the run's ``optimisation.gpus``), as in the campaign.

    Returns {campaign config path: rehearsal config path}.
    """
    import yaml

    out_dir.mkdir(parents=True, exist_ok=True)
    mapping = {}
    for path in sorted(config_dir.glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        data["use_cpu"] = use_cpu
        target = out_dir / path.name
        header = (f"# {path} with use_cpu: {str(use_cpu).lower()} (the rehearsal's only change; the launch "
                  "gives --num_processes)\n")
        target.write_text(header + yaml.safe_dump(data, sort_keys=False))
        mapping[str(path)] = str(target)
    return mapping


def write_inventory(path: Path, inventory: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(inventory, indent=2) + "\n")
