"""What the login node checks before ``py4 campaign run --backend slurm`` submits any job: every
pinned Hub reference the jobs read is in the local Hugging Face cache, resolvable offline.

- each pinned model (``models.<key>.base``, ``.it``, ``.it_base``): its ``config.json`` and its
  weights (``model.safetensors``, or every shard the ``model.safetensors.index.json`` names) at the
  pinned revision, found with ``huggingface_hub.try_to_load_from_cache`` (never the network). A
  model folder the campaign makes or names by path (``{out}/assets/base`` at smoke scale) is
  not a Hub reference and is not checked here;
- each Hub model and tokenizer a run's stage config names, as the run resolves it (its config
  file and the campaign's overrides): a model source (``path`` beside its ``revision``, e.g. a
  midtrain's ``model.path``, the graft's ``base.path``) like a pinned model; a tokenizer
  (``tokenizer``, ``tokenizer_path``, ``count_tokenizer``, ``name_or_path``, each with its revision
  field) by its ``tokenizer_config.json`` and ``tokenizer.json`` or ``tokenizer.model``. The cache
  is keyed by the id as spelled (``google/gemma-4-12B-it`` and ``google/gemma-4-12b-it`` are two
  folders), so an id a config spells otherwise than its pin is checked as spelled, as the run
  will look it up;
- each pinned dataset (``datasets.<kind>``): read back as the export it names, hashes checked
  (`py4.campaign.dataset_pins.check_dataset_pins`, what the local backend checks);
- the streamed datasets (the mixes' ``replay``, the SFT pack's ``instructions``: the spec's
  ``replay`` and ``sft_data``), only where the jobs read them from a local cache. Online they
  are streamed from the Hub at run time (`py4.data.sources.hub_stream`: ``datasets`` opens
  ``hf://datasets/ID@REV/…`` files over HTTP, and the replay lists the revision's file tree
  through the Hub API); nothing of them is stored in the Hugging Face cache, so there is nothing
  local to check, and the spec already refuses one without a revision. Offline
  (``HF_HUB_OFFLINE`` / ``HF_DATASETS_OFFLINE`` in this shell, which the jobs inherit) ``datasets``
  reads the copy it prepared before in its own cache (``HF_DATASETS_CACHE``), and the check opens
  each stream exactly as the run will; that copy carries no revision (``datasets`` takes the
  latest it prepared), so the pin itself cannot be checked there.

Every problem is one line naming the spec field (or the run and config field), the pin and what
is missing; the run command joins them into one line and submits nothing. sbatch passes the
submitting shell's environment to the jobs (its default ``--export=ALL``), so the cache checked
is the one the jobs are pointed at (``HF_HUB_CACHE`` / ``HF_HOME``, on a filesystem the nodes
share).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Literal

from py4.campaign.node import Node
from py4.campaign.spec import CampaignSpec, HubPin
from py4.config import is_hub_id
from py4.errors import Py4Error
from py4.fileio import WEIGHT_INDEX_NAME, read_weight_map
from py4.train.model_shape import cached_file

MODEL_FIELDS = ("base", "it", "it_base")
WEIGHTS = "model.safetensors"
TOKENIZER_FIELDS = {"tokenizer": "tokenizer_revision", "tokenizer_path": "tokenizer_revision",
                    "count_tokenizer": "count_tokenizer_revision", "name_or_path": "revision"}
"""Stage-config fields naming a tokenizer, and the field beside each that pins its revision."""
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model")


@dataclass(frozen=True)
class StageRef:
    """A Hub reference in a run's resolved stage config."""

    kind: Literal["model", "tokenizer", "dataset"]
    hub_id: str
    revision: str | None
    field: str
    """Its dotted field in the config (``model.tokenizer_path``)."""
    source: dict[str, Any] | None = None
    """A dataset's whole source entry (config name, split, data files), as the run opens it."""


def _fetch(repo: str, revision: str | None) -> str:
    return f"`hf download {repo}" + (f" --revision {revision}`" if revision else "`")


def _not_cached(cache_dir: str | Path | None) -> str:
    from huggingface_hub import constants

    return f"not in the Hugging Face cache ({cache_dir or constants.HF_HUB_CACHE})"


def model_missing(pin: HubPin, cache_dir: str | Path | None = None) -> str | None:
    """What of the pinned model the cache lacks (None: config and every weight file are there)."""
    repo, revision = pin.hub_id, pin.revision
    if not revision:
        return "no revision: a Hub model is read at a pinned commit"
    if cached_file(repo, revision, "config.json", cache_dir) is None:
        return f"{_not_cached(cache_dir)}: download it first, e.g. {_fetch(repo, revision)}"
    index = cached_file(repo, revision, WEIGHT_INDEX_NAME, cache_dir)
    if index is not None:
        try:
            shards = sorted(set(read_weight_map(index).values()))
        except Py4Error as exc:
            return f"its {WEIGHT_INDEX_NAME} in the cache is unreadable ({exc})"
        absent = [s for s in shards if cached_file(repo, revision, s, cache_dir) is None]
        if absent:
            return (f"{len(absent)} of its {len(shards)} weight files are not in the Hugging Face cache "
                    f"(first: {absent[0]}): download them, e.g. {_fetch(repo, revision)}")
        return None
    if cached_file(repo, revision, WEIGHTS, cache_dir) is None:
        return (f"its config is in the Hugging Face cache but not its weights ({WEIGHTS} or {WEIGHT_INDEX_NAME}; "
                f"`py4 campaign preflight` fetches metadata only): download them, e.g. {_fetch(repo, revision)}")
    return None


def tokenizer_missing(repo: str, revision: str | None, cache_dir: str | Path | None = None) -> str | None:
    """What of the tokenizer the cache lacks (None: its config and vocabulary file are there)."""
    if not revision:
        return "no revision: a Hub tokenizer is read at a pinned commit"
    if cached_file(repo, revision, "tokenizer_config.json", cache_dir) is None:
        return (f"its tokenizer_config.json is {_not_cached(cache_dir)}: download it first, "
                f"e.g. {_fetch(repo, revision)}")
    if all(cached_file(repo, revision, name, cache_dir) is None for name in TOKENIZER_FILES):
        return (f"its tokenizer_config.json is in the Hugging Face cache but neither {' nor '.join(TOKENIZER_FILES)}: "
                f"download them, e.g. {_fetch(repo, revision)}")
    return None


def check_model_pins(spec: CampaignSpec, cache_dir: str | Path | None = None) -> list[str]:
    """One line per pinned Hub model the cache cannot give offline (``models.<key>.<field> (ID@REV): why``);
    a checkpoint two fields pin alike is checked once, under the first field that names it."""
    problems, seen = [], set()
    for key, model in spec.models.items():
        for field in MODEL_FIELDS:
            pin: HubPin = getattr(model, field)
            if not is_hub_id(pin.hub_id) or (pin.hub_id, pin.revision) in seen:
                continue
            seen.add((pin.hub_id, pin.revision))
            missing = model_missing(pin, cache_dir)
            if missing:
                problems.append(f"models.{key}.{field} ({pin.hub_id}@{pin.revision}): {missing}")
    return problems


def stage_refs(config: Any, prefix: str = "") -> list[StageRef]:
    """The Hub models, tokenizers and datasets a resolved stage config (``model_dump``) names."""
    found: list[StageRef] = []
    if isinstance(config, list):
        for item in config:
            found += stage_refs(item, prefix)
        return found
    if not isinstance(config, dict):
        return found
    for key, value in config.items():
        field = f"{prefix}{key}"
        if isinstance(value, (dict, list)):
            found += stage_refs(value, f"{field}.")
        elif not isinstance(value, str) or not is_hub_id(value):
            continue
        elif key == "hub_id" and "revision" in config:  # a dataset source (`py4.data.sources`)
            found.append(StageRef("dataset", value, config["revision"], field, config))
        elif key == "path" and "revision" in config and "hub_id" not in config:  # a model source
            found.append(StageRef("model", value, config["revision"], field))
        elif key in TOKENIZER_FIELDS:
            found.append(StageRef("tokenizer", value, config.get(TOKENIZER_FIELDS[key]), field))
    return found


def run_refs(nodes: Iterable[Node]) -> list[tuple[Node, StageRef]]:
    """Every Hub reference of every run's stage config, as the run resolves it."""
    from py4.stages import load

    return [(node, ref) for node in nodes if node.config is not None
            for ref in stage_refs(load(node.call).model_dump(mode="json"))]


def check_stage_refs(spec: CampaignSpec, nodes: Iterable[Node], cache_dir: str | Path | None = None) -> list[str]:
    """One line per Hub model or tokenizer a run's stage config names that the cache cannot give
    offline (``RUN: FIELD of CONFIG (ID@REV): why``), each reference checked once, under the first
    run that names it; a model the spec pins at the same revision is left to `check_model_pins`.
    Offline, also the streamed datasets (`streamed_missing`)."""
    from py4.data.replay_sample import hub_offline

    pinned = {(pin.hub_id, pin.revision) for model in spec.models.values()
              for pin in (getattr(model, f) for f in MODEL_FIELDS)}
    seen: set[tuple[str, str, str | None]] = set()
    problems = []
    offline = hub_offline()
    for node, ref in run_refs(nodes):
        key = (ref.kind, ref.hub_id, ref.revision)
        if key in seen or (ref.kind == "model" and (ref.hub_id, ref.revision) in pinned):
            continue
        seen.add(key)
        if ref.kind == "model":
            missing = model_missing(HubPin(hub_id=ref.hub_id, revision=ref.revision), cache_dir)
        elif ref.kind == "tokenizer":
            missing = tokenizer_missing(ref.hub_id, ref.revision, cache_dir)
        else:
            missing = streamed_missing(ref) if offline else None
        if missing:
            problems.append(f"{node.id}: {ref.field} of {node.config} ({ref.hub_id}@{ref.revision}): {missing}")
    return problems


def streamed_missing(ref: StageRef) -> str | None:
    """Offline: why the run could not open its streamed dataset from ``datasets``' own cache (None: it can)."""
    from datasets import config as datasets_config
    from datasets.utils import logging as datasets_logging

    from py4.data.sources import hub_stream

    source = ref.source or {}
    level = datasets_logging.get_verbosity()
    datasets_logging.set_verbosity_error()  # not its "using the latest cached version" notes, on every check
    try:
        hub_stream(ref.hub_id, ref.revision, name=source.get("name"), split=source.get("split") or "train",
                   data_files=source.get("data_files"))
    except (OSError, ValueError) as exc:  # no copy (ConnectionError, FileNotFoundError), no such config or split
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return (f"streamed, and this shell is offline (HF_HUB_OFFLINE / HF_DATASETS_OFFLINE, which the jobs inherit), "
                f"but `datasets` has no copy of it in its cache ({datasets_config.HF_DATASETS_CACHE}) that it can "
                f"open ({reason}): prepare it there on a machine with Hub access, or submit from a shell that is "
                "not offline")
    finally:
        datasets_logging.set_verbosity(level)
    return None


def check_pins(spec: CampaignSpec, nodes: Iterable[Node] = (), cache_dir: str | Path | None = None) -> list[str]:
    """Every pinned model and dataset, and every Hub reference of the runs' stage configs, that
    the cache cannot give offline, one line each."""
    from py4.campaign.dataset_pins import check_dataset_pins

    return [*check_model_pins(spec, cache_dir), *check_stage_refs(spec, nodes, cache_dir),
            *check_dataset_pins(spec, cache_dir)]
