"""What the login node checks before ``py4 campaign run --backend slurm`` submits any job: every
pinned Hub reference the jobs read is in the local Hugging Face cache, resolvable offline.

- each pinned model (``models.<key>.base``, ``.it``, ``.it_base``): its ``config.json`` and its
  weights (``model.safetensors``, or every shard the ``model.safetensors.index.json`` names) at the
  pinned revision, found with ``huggingface_hub.try_to_load_from_cache`` (never the network). A
  model folder the campaign makes or names by path (``{out}/assets/base`` at smoke scale) is
  not a Hub reference and is not checked here;
- each pinned dataset (``datasets.<kind>``): read back as the export it names, hashes checked
  (`py4.campaign.dataset_pins.check_dataset_pins`, what the local backend checks).

Every problem is one line naming the spec field, the pin and what is missing; the run command
joins them into one line and submits nothing. sbatch passes the submitting shell's environment
to the jobs (its default ``--export=ALL``), so the cache checked is the one the jobs are pointed
at (``HF_HUB_CACHE`` / ``HF_HOME``, on a filesystem the nodes share).

Not checked: the Hub ids a stage config names besides the pins (tokenizers; the rehearsal's
`py4.rehearsal.assets.campaign_hub_refs` lists them) and the replay and SFT datasets
(``replay``, ``sft_data``), which the packing runs read through ``datasets``' own cache.
"""

from __future__ import annotations

from pathlib import Path

from py4.campaign.spec import CampaignSpec, HubPin
from py4.config import is_hub_id
from py4.train.model_shape import cached_file

MODEL_FIELDS = ("base", "it", "it_base")
WEIGHTS = "model.safetensors"
WEIGHTS_INDEX = "model.safetensors.index.json"


def model_missing(pin: HubPin, cache_dir: str | Path | None = None) -> str | None:
    """What of the pinned model the cache lacks (None: config and every weight file are there)."""
    import json

    repo, revision = pin.hub_id, pin.revision
    fetch = f"`hf download {repo}" + (f" --revision {revision}`" if revision else "`")
    if not revision:
        return "no revision: a Hub model is read at a pinned commit"
    if cached_file(repo, revision, "config.json", cache_dir) is None:
        from huggingface_hub import constants

        return f"not in the Hugging Face cache ({cache_dir or constants.HF_HUB_CACHE}): download it first, e.g. {fetch}"
    index = cached_file(repo, revision, WEIGHTS_INDEX, cache_dir)
    if index is not None:
        try:
            shards = sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
        except (OSError, ValueError, KeyError, AttributeError) as exc:
            return f"its {WEIGHTS_INDEX} in the cache is unreadable ({exc})"
        absent = [s for s in shards if cached_file(repo, revision, s, cache_dir) is None]
        if absent:
            return (f"{len(absent)} of its {len(shards)} weight files are not in the Hugging Face cache "
                    f"(first: {absent[0]}): download them, e.g. {fetch}")
        return None
    if cached_file(repo, revision, WEIGHTS, cache_dir) is None:
        return (f"its config is in the Hugging Face cache but not its weights ({WEIGHTS} or {WEIGHTS_INDEX}; "
                f"`py4 campaign preflight` fetches metadata only): download them, e.g. {fetch}")
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


def check_pins(spec: CampaignSpec, cache_dir: str | Path | None = None) -> list[str]:
    """Every pinned model and dataset the cache cannot give offline, one line each."""
    from py4.campaign.dataset_pins import check_dataset_pins

    return [*check_model_pins(spec, cache_dir), *check_dataset_pins(spec, cache_dir)]
