"""Stand-ins for the Hub datasets the campaign reads, in their real formats.

- Dolmino replay (``allenai/dolma3_dolmino_mix-100B-1125``): rows ``{"id", "text", "source"}``,
  documents made from the standard library (as the smoke replay is).
- Dolci SFT (``allenai/Dolci-Instruct-SFT``): rows ``{"id", "messages", "source"}``, chat
  Q&A from local text, plus rows the campaign's strict user/assistant filter drops (a
  leading assistant turn, an empty reply, a system prompt alone), so the filter's counts
  are exercised.

The data code streams Hub datasets with ``datasets.load_dataset(hub_id, revision=...,
streaming=True)``. Offline (``HF_DATASETS_OFFLINE=1``) ``datasets`` cannot resolve a Hub
repository at all; it falls back to a dataset it has prepared before in
``HF_DATASETS_CACHE`` (``<owner>___<name>/<config>/<version>/<hash>/``, Arrow files). That is
what a team that pre-fetched the data on a login node runs, and what ``install_dataset``
writes: the real ``load_dataset`` call then runs unchanged. The revision is not checked on
that path (``datasets`` takes the newest cached copy); the cache holds exactly one.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

DOLMINO_ID = "allenai/dolma3_dolmino_mix-100B-1125"
DOLCI_ID = "allenai/Dolci-Instruct-SFT"


def dolmino_rows(n_docs: int, max_chars: int = 3000) -> list[dict[str, Any]]:
    """``n_docs`` replay documents in Dolmino's row format (deterministic)."""
    from py4.data.replay import iter_stdlib_documents

    rows = []
    for doc in iter_stdlib_documents(max_chars_per_doc=max_chars):
        rows.append({"id": f"standin-{len(rows):06d}", "text": doc.text, "source": "standin-stdlib"})
        if len(rows) >= n_docs:
            break
    return rows


def dolci_rows(n_kept: int, n_dropped: int, seed: int = 0) -> list[dict[str, Any]]:
    """``n_kept`` rows that pass the strict alternation filter and ``n_dropped`` that fail it."""
    from py4.data.smoke_instructions import build_smoke_instructions

    qa = [r for r in build_smoke_instructions(n_qa=n_kept + n_dropped, n_episodes=0, seed=seed)
          if r["source"] == "qa"]
    if len(qa) < n_kept + n_dropped:
        raise ValueError(f"the smoke Q&A set has {len(qa)} rows; {n_kept + n_dropped} asked for")
    rng = random.Random(seed)
    rows = []
    for i, row in enumerate(qa[:n_kept]):
        messages = [{"role": m["role"], "content": m["content"]} for m in row["messages"]]
        if i % 4 == 0:  # some rows carry a system prompt, as Dolci's do
            messages.insert(0, {"role": "system", "content": "You are a helpful assistant."})
        rows.append({"id": f"standin-kept-{i:05d}", "messages": messages, "source": "standin-qa"})
    breakers = ("leading_assistant", "empty_reply", "system_only")
    for i, row in enumerate(qa[n_kept:n_kept + n_dropped]):
        user, reply = row["messages"][0]["content"], row["messages"][-1]["content"]
        kind = breakers[i % len(breakers)]
        messages = {"leading_assistant": [{"role": "assistant", "content": reply}, {"role": "user", "content": user}],
                    "empty_reply": [{"role": "user", "content": user}, {"role": "assistant", "content": " "}],
                    "system_only": [{"role": "system", "content": user}]}[kind]
        rows.append({"id": f"standin-dropped-{i:05d}", "messages": messages, "source": f"standin-{kind}"})
    rng.shuffle(rows)
    return rows


def write_jsonl(rows: list[dict[str, Any]], folder: str | Path, name: str = "train-00000.jsonl") -> Path:
    """``rows`` as one jsonl file in ``folder`` (the local-copy format the data code also reads)."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    path = out / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _cached_name(repo_id: str) -> str:
    from datasets.naming import camelcase_to_snakecase

    owner, name = repo_id.split("/")
    return f"{owner}___{camelcase_to_snakecase(name)}"


def install_dataset(datasets_cache: str | Path, repo_id: str, revision: str, rows: list[dict[str, Any]],
                    split: str = "train") -> Path:
    """Prepare ``rows`` as ``repo_id``'s cached copy in ``datasets_cache`` (Arrow, one split).

    Returns the prepared folder. ``load_dataset(repo_id, split=split, streaming=True)`` with
    ``HF_DATASETS_OFFLINE=1`` and ``HF_DATASETS_CACHE=datasets_cache`` then yields ``rows``.
    """
    from datasets.packaged_modules.json.json import Json

    cache = Path(datasets_cache)
    staging = cache / "_staging" / repo_id.replace("/", "--")
    shutil.rmtree(staging, ignore_errors=True)
    source = write_jsonl(rows, staging / "source", f"{split}.jsonl")
    builder = Json(cache_dir=str(staging / "built"), dataset_name=repo_id.split("/")[-1],
                   data_files={split: [str(source)]})
    builder.download_and_prepare()
    # The json builder names its folder after its own config id ("default-<hash>"); the cached
    # copy of a Hub dataset lives under its config name and a hash folder.
    target = cache / _cached_name(repo_id) / "default" / "0.0.0" / revision
    shutil.rmtree(cache / _cached_name(repo_id), ignore_errors=True)
    target.parent.mkdir(parents=True)
    shutil.move(builder.cache_dir, target)
    shutil.rmtree(cache / "_staging", ignore_errors=True)
    return target
