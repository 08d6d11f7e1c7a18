"""A campaign's records of its runs: where each lives, what it says, and whether it is current.

Each node's completion is recorded in ``<out_dir>/_campaign/runs/<node id>/run_manifest.json``
(a `py4.runs.RunRecorder`, kind ``campaign.node``) with the node's fingerprint: the hash of its
command and of its inputs' fingerprints. A record that says ``done`` for the current
fingerprint is a run to skip; one of another fingerprint is a run to start afresh.

Read by the runner, the Slurm backend and its jobs, the status and ledgers, the progress
display and the rehearsal's report; it imports nothing of theirs, so they all point down to it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from py4.runs import read_manifest, run_is_done, run_status

if TYPE_CHECKING:
    from py4.campaign.dag import Node

__all__ = ["record_dir", "NodeStatus", "node_status", "fingerprints", "recorded_fingerprint", "node_is_done",
           "resumes", "missing_inputs"]


def record_dir(out_dir: str | Path, node: Node | str) -> Path:
    """The folder of a node's record (``node`` or its id)."""
    node_id = node if isinstance(node, str) else node.id
    return Path(out_dir) / "_campaign" / "runs" / node_id.replace(":", "__").replace("@", "_at_")


NodeStatus = Literal["pending", "running", "done", "failed", "interrupted"]
"""A node's record: its RunStatus, or ``pending`` when it has none (never started)."""


def node_status(out_dir: str | Path, node: Node) -> NodeStatus:
    """pending | running | done | failed | interrupted (from the node's record)."""
    return run_status(record_dir(out_dir, node)) or "pending"


def fingerprints(nodes: list[Node]) -> dict[str, str]:
    """id -> hash of the node's command and its inputs' fingerprints (nodes in dependency order).

    A done run is redone when this changes: its own command changed, or any run upstream did.
    """
    out: dict[str, str] = {}
    for n in nodes:
        h = hashlib.sha256(json.dumps(n.argv).encode())
        if n.server is not None:  # another server (engine, parser, base) is another evaluation
            h.update(json.dumps(n.server.argv).encode())
        for i in n.inputs:
            h.update(out.get(i, i).encode())
        out[n.id] = h.hexdigest()[:16]
    return out


def recorded_fingerprint(out_dir: str | Path, node: Node) -> str | None:
    """The fingerprint the node's record was written for (None: no record)."""
    return (read_manifest(record_dir(out_dir, node)) or {}).get("fingerprint")


def node_is_done(out_dir: str | Path, node: Node, fingerprint: str) -> bool:
    """Whether the node's record says done for this very command and inputs (its fingerprint)."""
    return run_is_done(record_dir(out_dir, node)) and recorded_fingerprint(out_dir, node) == fingerprint


def resumes(out_dir: str | Path, node: Node, fingerprint: str) -> bool:
    """Whether running the node now continues its recorded run (started before, same fingerprint);
    a run of another fingerprint starts afresh, whatever its record says."""
    return recorded_fingerprint(out_dir, node) == fingerprint  # a record with a fingerprint has a status


def missing_inputs(out_dir: str | Path, node: Node) -> list[str]:
    """The node's inputs whose records do not say done."""
    return [i for i in node.inputs if not run_is_done(record_dir(out_dir, i))]
