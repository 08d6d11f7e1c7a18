"""A campaign's records of its runs: where each lives, what it says, and whether it is current.

Each node's completion is recorded in ``<out_dir>/_campaign/runs/<node id>/run_manifest.json``
(a `py4.runs.RunRecorder`, kind ``campaign.node``) with the node's fingerprint: the hash of its
command and of its inputs' fingerprints. A record that says ``done`` for the current
fingerprint is a run to skip — as long as what it made is still there (`output_changes`) and the
runs it read have not been redone since (`redone_inputs`); one of another fingerprint is a run to
start afresh.

A done record lists every file of the run's folder with its size, modification time and sha256
(``outputs_seen``), and the ``run_token`` of each input's record when it ran (``input_tokens``).
A record whose runner is gone while it says ``running`` reads as ``interrupted`` (the runner's
lock, `py4.campaign.lock`, tells who is alive). A record that cannot be read (cut short, edited
by hand) counts as no record: `record_problem` says what is wrong with it.

Read by the runner, the Slurm backend and its jobs, the status and ledgers, the progress
display and the rehearsal's report; it imports nothing of theirs, so they all point down to it.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from py4.campaign.lock import live_runner
from py4.errors import FileFormatError
from py4.runs import MANIFEST_NAME, RUN_STATUSES, file_sha256, read_manifest

if TYPE_CHECKING:
    from py4.campaign.dag import Node

__all__ = ["record_dir", "NodeStatus", "node_status", "fingerprints", "recorded_fingerprint", "node_is_done",
           "resumes", "missing_inputs", "read_record", "record_problem", "snapshot_outputs", "output_changes",
           "redone_inputs", "superseded"]


def record_dir(out_dir: str | Path, node: Node | str) -> Path:
    """The folder of a node's record (``node`` or its id)."""
    node_id = node if isinstance(node, str) else node.id
    return Path(out_dir) / "_campaign" / "runs" / node_id.replace(":", "__").replace("@", "_at_")


NodeStatus = Literal["pending", "running", "done", "failed", "interrupted"]
"""A node's record: its RunStatus, or ``pending`` when it has none (never started, or a record
that cannot be read)."""


def record_problem(out_dir: str | Path, node: Node | str) -> str | None:
    """What is wrong with the node's record (not JSON, no known status); None when it reads or is absent."""
    try:
        manifest = read_manifest(record_dir(out_dir, node))
    except (FileFormatError, OSError, ValueError) as exc:
        return str(exc)
    if manifest is not None and manifest.get("status") not in RUN_STATUSES:
        return (f"{record_dir(out_dir, node) / MANIFEST_NAME}: status {manifest.get('status')!r}: "
                f"expected one of {', '.join(RUN_STATUSES)}")
    return None


def read_record(out_dir: str | Path, node: Node | str) -> dict[str, Any] | None:
    """The node's record; None when it has none or the one it has cannot be read (`record_problem`)."""
    if record_problem(out_dir, node):
        return None
    return read_manifest(record_dir(out_dir, node))


def node_status(out_dir: str | Path, node: Node | str) -> NodeStatus:
    """pending | running | done | failed | interrupted (from the node's record).

    ``running`` only while the runner that wrote it still holds the campaign's lock (a Slurm
    job's record says running as it is: its job's state decides); a runner that is gone left
    its run ``interrupted``.
    """
    record = read_record(out_dir, node)
    if record is None:
        return "pending"
    status = record["status"]
    if status == "running" and not _runner_alive(out_dir, record.get("runner") or {}):
        return "interrupted"
    return status


def _runner_alive(out_dir: str | Path, runner: dict) -> bool:
    if runner.get("slurm_job"):
        return True
    holder = live_runner(out_dir)
    if holder is None:
        return False
    return not runner or (holder.get("pid"), holder.get("host")) == (runner.get("pid"), runner.get("host"))


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
    """The fingerprint the node's record was written for (None: no readable record)."""
    return (read_record(out_dir, node) or {}).get("fingerprint")


def node_is_done(out_dir: str | Path, node: Node, fingerprint: str) -> bool:
    """Whether the node's record says done for this very command and inputs (its fingerprint)."""
    record = read_record(out_dir, node) or {}
    return record.get("status") == "done" and record.get("fingerprint") == fingerprint


def resumes(out_dir: str | Path, node: Node, fingerprint: str) -> bool:
    """Whether running the node now continues its recorded run (started before, same fingerprint);
    a run of another fingerprint starts afresh, whatever its record says."""
    return recorded_fingerprint(out_dir, node) == fingerprint  # a record with a fingerprint has a status


def missing_inputs(out_dir: str | Path, node: Node) -> list[str]:
    """The node's inputs whose records do not say done."""
    return [i for i in node.inputs if (read_record(out_dir, i) or {}).get("status") != "done"]


# ---- what a done run made, and whether it is still there ------------------------------------

def snapshot_outputs(run_dir: str | Path) -> dict[str, dict[str, Any]]:
    """Every file under ``run_dir`` (relative path -> size, mtime_ns, sha256): what a done record keeps."""
    root = Path(run_dir)
    out: dict[str, dict[str, Any]] = {}
    if not root.is_dir():
        return out
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        st = path.stat()
        out[path.relative_to(root).as_posix()] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns,
                                                  "sha256": file_sha256(path)}
    return out


def output_changes(out_dir: str | Path, node: Node, verify: bool = False) -> list[str]:
    """What is missing or changed in a done run's folder since its record was written ([]: all there).

    Cheap by default: a file whose size and mtime are those recorded is taken as unchanged, and
    only a file whose mtime moved is hashed (a copy or a touch that kept the content is no
    change). ``verify`` hashes every file. Files added since are not the run's and are ignored;
    a record without ``outputs_seen`` has nothing to check.
    """
    seen = (read_record(out_dir, node) or {}).get("outputs_seen") or {}
    root = Path(node.run_dir)
    problems = []
    for rel, was in seen.items():
        path = root / rel
        try:
            st = os.stat(path)
        except OSError:
            problems.append(f"{path} is missing")
            continue
        if st.st_size != was.get("size"):
            problems.append(f"{path} changed size ({was.get('size')} -> {st.st_size} bytes)")
        elif (verify or st.st_mtime_ns != was.get("mtime_ns")) and file_sha256(path) != was.get("sha256"):
            problems.append(f"{path} changed content (sha256 differs from its record)")
    return problems


def run_token(out_dir: str | Path, node: Node | str) -> str | None:
    """The token of the node's last finished run (a new one each time it is done); None: none."""
    return (read_record(out_dir, node) or {}).get("run_token")


def redone_inputs(out_dir: str | Path, node: Node) -> list[str]:
    """The inputs that were run again after this node's done run read them (its record's
    ``input_tokens`` against the inputs' ``run_token`` now)."""
    tokens = (read_record(out_dir, node) or {}).get("input_tokens") or {}
    return [i for i, token in tokens.items() if i in node.inputs and run_token(out_dir, i) != token]


def superseded(nodes: list[Node]) -> set[str]:
    """Runs whose folder a later run of the same folder continues (GRPO's segments): the later
    run's record is the one that says what the folder holds, so theirs is not checked."""
    by_id = {n.id: n for n in nodes}
    return {i for n in nodes for i in n.inputs if i in by_id and by_id[i].run_dir == n.run_dir}
