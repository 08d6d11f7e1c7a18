"""Whether a folder is a run folder a campaign owns, and the refusal to write into one by hand.

A campaign keeps a record per run (``<out_dir>/_campaign/runs/<id>/run_manifest.json``, with the
run's folder) and skips a done run while its outputs are unchanged. A stage started by hand with
``--out`` (or an ``out_dir``) naming such a folder would replace the run's outputs behind the
campaign's back. So `RunRecorder` (every stage's run folder) calls :func:`check_not_owned`: inside
a campaign's run folder it raises :class:`OwnedRunFolder`, unless the campaign runner is the one
running it (``PY4_CAMPAIGN_RUN``, set by the runner around each run, in its process and its
children) or the user said so (``py4 --force …``: ``PY4_FORCE``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from py4.errors import Py4Error

RUNNER_ENV = "PY4_CAMPAIGN_RUN"
FORCE_ENV = "PY4_FORCE"


class OwnedRunFolder(Py4Error):
    """A stage run by hand was asked to write into a campaign's run folder."""


def campaign_owner(path: str | Path) -> tuple[Path, str] | None:
    """(campaign folder, run id) when ``path`` is, or is inside, a run folder of the nearest
    campaign folder above it (one holding ``_campaign/runs``); None otherwise."""
    target = Path(path).resolve()
    for folder in (target, *target.parents):
        if not (folder / "_campaign" / "runs").is_dir():
            continue
        for record in campaign_records(folder):
            node = record.get("node") or {}
            run_dir = node.get("run_dir")
            if run_dir and any(c == target or c in target.parents for c in placed(folder, run_dir)):
                return folder, str(node.get("id"))
        return None
    return None


def campaign_records(campaign: Path) -> Iterator[dict[str, Any]]:
    """Every readable runner record of a campaign folder (a record that cannot be read is the
    runner's to report, not this reader's)."""
    for record in sorted((campaign / "_campaign" / "runs").glob("**/run_manifest.json")):
        try:
            data = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("node"), dict):
            yield data


def placed(campaign: Path, path: str | Path) -> list[Path]:
    """Where a path a record names may be: itself when absolute; a relative one (a campaign's
    out_dir given relative to where it ran) is placed in ``campaign`` by its trailing parts."""
    path = Path(path)
    if path.is_absolute():
        return [path.resolve()]
    return [campaign.joinpath(*path.parts[i:]) for i in range(len(path.parts))]


def check_not_owned(path: str | Path) -> None:
    """Raise OwnedRunFolder when ``path`` is a campaign's run folder and neither its runner nor
    ``--force`` is behind this write."""
    if os.environ.get(RUNNER_ENV) or os.environ.get(FORCE_ENV):
        return
    owner = campaign_owner(path)
    if owner is None:
        return
    campaign, run_id = owner
    raise OwnedRunFolder(
        f"{path} is the folder of run {run_id!r} of the campaign in {campaign}: writing there by hand would "
        f"replace that run's outputs behind the campaign (to redo it: py4 campaign run FILE --rerun '{run_id}'). "
        "Write somewhere else (--out, out_dir=...), or put --force first to write there anyway "
        "(py4 --force ...)")
