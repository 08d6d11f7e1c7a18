"""Model cards with provenance for every model folder the toolkit writes.

A run that saves a model (midtraining, SFT, the graft, an EFT adapter, a GRPO adapter)
records it as an output; the card is written into that folder then, before its hash is
taken, from what the run manifest knows: the base and its revision, the data with their
hashes, the stage config and its hash, the code version and command line, and the campaign
node when a campaign ran it. Each ``checkpoint-N`` a training saves gets its card too, with its
step (`py4.train.callbacks.CheckpointCards`): a GRPO run's checkpoints are the campaign's
intermediate models, evaluated and probed. Evaluation and probe results made later are added
when the card is rewritten for upload (`py4 push MODEL_DIR ORG/NAME`): those of the campaign's
evaluation and probe runs that measured this folder (`campaign_results`), or the run folders
``--results`` names.

TRL's trainers write a generic README.md; this card replaces it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import yaml

from py4.fileio import atomic_write_text, read_json_object
from py4.hub.cards import CARD_NAME, bullet_list, render_card
from py4.run_owner import RUNNER_ENV

_KIND_TITLES = {"midtrain": "midtrained model", "sft": "SFT model", "graft": "chat-vector graft",
                "eft": "EFT LoRA adapter", "grpo": "GRPO LoRA adapter"}


def is_model_folder(path: str | Path) -> bool:
    """A folder transformers or PEFT loads: it has config.json or adapter_config.json."""
    path = Path(path)
    return path.is_dir() and any((path / name).is_file() for name in ("config.json", "adapter_config.json"))


def write_model_card(model_dir: str | Path, manifest: dict[str, Any],
                     results: list[dict[str, Any]] | None = None, step: int | None = None) -> Path:
    """Write `model_dir/README.md` from a run manifest (and results, if any; ``step``: the training
    step of a checkpoint); returns its path."""
    model_dir = Path(model_dir)
    path = model_dir / CARD_NAME
    atomic_write_text(path, model_card(manifest, results or [], adapter=(model_dir / "adapter_config.json").exists(),
                                       step=step))
    return path


def checkpoint_step(model_dir: str | Path) -> int | None:
    """The step of a Trainer checkpoint folder (``checkpoint-N``), None for any other folder."""
    match = re.fullmatch(r"checkpoint-(\d+)", Path(model_dir).name)
    return int(match.group(1)) if match else None


def model_card(manifest: dict[str, Any], results: list[dict[str, Any]], adapter: bool, step: int | None = None) -> str:
    """The card's text (see the module docstring for what it holds)."""
    kind = str(manifest.get("kind", "model"))
    inputs: dict[str, dict[str, Any]] = manifest.get("inputs", {})
    base = inputs.get("model") or inputs.get("base") or {}
    # The runner names the node it runs (`py4.run_owner.RUNNER_ENV`) for its stage and that stage's children.
    node = os.environ.get(RUNNER_ENV)
    metadata: dict[str, Any] = {"library_name": "peft" if adapter else "transformers",
                                "tags": ["python4", "py4", kind]}
    if base.get("hub_id"):
        metadata["base_model"] = base["hub_id"]
    metadata["py4"] = {"kind": kind, "config_sha256": manifest.get("config_sha256"), "campaign_node": node,
                       "code": manifest.get("provenance", {}).get("code"),
                       **({"step": step} if step is not None else {})}
    at_step = f", checkpoint at training step {step}" if step is not None else ""
    sections = [f"# {_KIND_TITLES.get(kind, kind)} made by the Python-4 study toolkit{at_step}",
                "Made by the `py4` toolkit (github: the Python-4 study). What made it:",
                "## Base\n" + (_describe(base) or "- not recorded"),
                "## Data and other inputs\n" + ("\n".join(f"- `{name}`: {_describe_inline(entry)}"
                                                           for name, entry in inputs.items()) or "- none"),
                "## Code\n" + _code(manifest),
                "## Stage config\n" + _config(manifest)]
    if node:
        sections.insert(2, f"Campaign node: `{node}`.")
    if results:
        sections.append("## Results\n" + "\n".join(_result_line(r) for r in results))
    return render_card(metadata, "\n\n".join(sections))


def _describe(entry: dict[str, Any]) -> str:
    return bullet_list({"hub id": entry.get("hub_id"), "revision": entry.get("revision"),
                        "path": entry.get("path"), "sha256": entry.get("sha256")})


def _describe_inline(entry: dict[str, Any]) -> str:
    parts = [f"{k} `{entry[k]}`" for k in ("hub_id", "revision", "path", "sha256") if entry.get(k)]
    return ", ".join(parts) or json.dumps(entry, sort_keys=True)[:200]


def _code(manifest: dict[str, Any]) -> str:
    provenance = manifest.get("provenance", {})
    libraries = manifest.get("libraries", {})
    lines = [f"- code: `{json.dumps(provenance.get('code'), sort_keys=True)}`",
             f"- command: `{provenance.get('command')}`" if provenance.get("command") else "",
             "- libraries: " + ", ".join(f"{k} {v}" for k, v in libraries.items() if v)]
    return "\n".join(line for line in lines if line)


def _config(manifest: dict[str, Any]) -> str:
    config = manifest.get("config")
    if config is None:
        return "- not recorded"
    text = yaml.safe_dump(config, sort_keys=False, width=100)
    return (f"sha256 of the resolved config: `{manifest.get('config_sha256')}`\n\n"
            f"<details><summary>resolved config</summary>\n\n```yaml\n{text}```\n</details>")


def _result_line(result: dict[str, Any]) -> str:
    return f"- `{result['run']}` ({result['kind']}): {json.dumps(result['summary'], sort_keys=True)}"


def run_results(run_dir: str | Path) -> dict[str, Any]:
    """An evaluation or probes run folder summarised for a card: its kind and results.json's
    top-level numbers (nested per-split objects kept one level deep)."""
    run_dir = Path(run_dir)
    manifest = read_json_object(run_dir / "run_manifest.json")
    results = read_json_object(run_dir / "results.json")
    summary = {k: v for k, v in results.items() if isinstance(v, (int, float, str, dict))
               and not (isinstance(v, dict) and len(json.dumps(v)) > 2000)}
    return {"run": run_dir.name, "kind": manifest.get("kind"), "summary": summary}


def campaign_results(model_dir: str | Path) -> list[Path]:
    """The run folders of the done evaluation and probe runs of the campaign that made
    `model_dir` which measured that folder (an adapter's runs, not its base's; a checkpoint's, not
    its run's end), read from the runner's records; [] outside a campaign."""
    from py4.run_owner import campaign_owner, campaign_records, placed

    owner = campaign_owner(model_dir)
    if owner is None:
        return []
    campaign, target = owner[0], Path(model_dir).resolve()
    found = []
    for record in campaign_records(campaign):
        node = record["node"]
        meta = node.get("meta") or {}
        measured = meta.get("adapter") or meta.get("weights")
        if (record.get("status") != "done" or node.get("stage") not in ("eval", "probes") or not measured
                or not node.get("run_dir") or target not in placed(campaign, measured)):
            continue
        found += [d for d in placed(campaign, node["run_dir"]) if (d / "results.json").is_file()][:1]
    return found


def run_manifest_of(model_dir: str | Path) -> dict[str, Any]:
    """The manifest of the run that wrote `model_dir` (in the folder itself, as a graft's, or in
    its parent, as a training run's `model/`). Raises FileFormatError when neither has one."""
    from py4.errors import FileFormatError

    model_dir = Path(model_dir)
    for folder in (model_dir, model_dir.parent):
        if (folder / "run_manifest.json").is_file():
            return read_json_object(folder / "run_manifest.json")
    raise FileFormatError(f"{model_dir}: no run_manifest.json here or in its parent: not a model a py4 run "
                          "wrote, so its card cannot say what made it")


def push_model(model_dir: str | Path, repo_id: str, *, revision: str | None = None,
               results: list[str | Path] | None = None) -> str:
    """Upload the model folder to the Hub model repository `repo_id` with its card rewritten to
    hold the given evaluation/probes runs' results (None: the campaign's runs that measured it,
    `campaign_results`); returns the commit URL.

    The folder itself is left as its run recorded it (a campaign checks a finished run's files
    and would redo a run whose card changed): the upload is staged in a temporary folder of
    links to the model's files beside the new card.
    """
    import tempfile

    from py4.hub.push import check_repo_id, push_folder

    check_repo_id(repo_id)
    model_dir = Path(model_dir)
    if not is_model_folder(model_dir):
        from py4.errors import FileFormatError

        raise FileFormatError(f"{model_dir}: no config.json or adapter_config.json: not a model folder")
    manifest = run_manifest_of(model_dir)
    summaries = [run_results(r) for r in (campaign_results(model_dir) if results is None else results)]
    with tempfile.TemporaryDirectory(prefix="py4-push-") as staging:
        for path in model_dir.rglob("*"):
            target = Path(staging) / path.relative_to(model_dir)
            if path.is_dir():
                target.mkdir(exist_ok=True)
            elif path.name != CARD_NAME or path.parent != model_dir:
                target.symlink_to(path.resolve())
        write_model_card(staging, manifest, summaries, step=checkpoint_step(model_dir))
        return push_folder(staging, repo_id, "model", revision=revision)
