"""The shipped campaigns' runs, command lines and fingerprints against a committed golden file.

A run's fingerprint (`py4.campaign.records.fingerprints`) decides whether a done run is redone:
a restructure of the DAG, the spec or the stage registry that changes one command line would
silently redo (or, worse, reuse) runs. ``golden/campaign_fingerprints.json`` holds, for
configs/campaign/python4.yaml and smoke.yaml, every node's id, stage, command line, server
command and fingerprint; this test builds both DAGs again and compares.

A deliberate change of a campaign's commands regenerates the file, so the diff shows in review::

    PY4_UPDATE_GOLDEN=1 .venv/bin/pytest tests/campaign/test_campaign_fingerprints.py

Machine-specific parts are normalised: this interpreter (``{python}``) and the checkout's root
(``{root}``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from py4.campaign.dag import build_dag
from py4.campaign.records import fingerprints
from py4.campaign.spec import load_campaign

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden" / "campaign_fingerprints.json"
CAMPAIGNS = ("configs/campaign/python4.yaml", "configs/campaign/smoke.yaml")


def _normalised(text: str) -> str:
    return text.replace(sys.executable, "{python}").replace(str(ROOT), "{root}")


def campaign_runs(config: str) -> list[dict]:
    """Every node of the campaign, in DAG order: id, stage, command line, server command, fingerprint."""
    nodes = build_dag(load_campaign(config))
    prints = fingerprints(nodes)
    return [{"id": n.id, "stage": n.stage, "command": _normalised(n.command),
             **({"server": _normalised(n.server.command)} if n.server is not None else {}),
             "fingerprint": prints[n.id]} for n in nodes]


def current() -> dict[str, list[dict]]:
    cwd = os.getcwd()
    os.chdir(ROOT)  # the campaigns name their config files relative to the checkout
    try:
        return {config: campaign_runs(config) for config in CAMPAIGNS}
    finally:
        os.chdir(cwd)


def test_campaign_commands_and_fingerprints_match_the_golden_file():
    runs = current()
    if os.environ.get("PY4_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(runs, indent=1) + "\n")
        pytest.skip(f"rewrote {GOLDEN.relative_to(ROOT)}")
    golden = json.loads(GOLDEN.read_text())
    for config in CAMPAIGNS:
        want = {r["id"]: r for r in golden[config]}
        got = {r["id"]: r for r in runs[config]}
        assert list(got) == list(want), f"{config}: the runs or their order differ"
        changed = [f"{node}: {key}\n  golden: {want[node].get(key)}\n  now:    {got[node].get(key)}"
                   for node in want for key in ("stage", "command", "server", "fingerprint")
                   if want[node].get(key) != got[node].get(key)]
        assert not changed, f"{config}: {len(changed)} difference(s)\n" + "\n".join(changed[:10])
