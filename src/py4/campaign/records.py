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
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from py4.campaign.lock import live_runner
from py4.errors import FileFormatError
from py4.runs import MANIFEST_NAME, RUN_STATUSES, atomic_write_json, file_sha256, read_manifest

if TYPE_CHECKING:
    from py4.campaign.dag import Node

__all__ = ["record_dir", "NodeStatus", "node_status", "fingerprints", "recorded_fingerprint", "node_is_done",
           "resumes", "missing_inputs", "read_record", "record_problem", "snapshot_outputs", "output_changes",
           "redone_inputs", "superseded", "damage", "hash_files", "VERIFIED_NAME"]


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

VERIFIED_NAME = "verified_outputs.json"
"""Beside a node's record: the files a hash check found unchanged since the record, with the
stat they had then (`output_changes`), so the next check need not hash them again."""

SETTLED_NS = 2_000_000_000
"""How long ago a file must have last changed (its ctime) for its stat to stand for its
content: a change within the same timestamp tick as the stat leaves ctime as it was (git's
"racily clean" entries), so a fresher file is hashed rather than trusted."""


def _stat_key(st: os.stat_result) -> list[int]:
    """What no rewrite of a file leaves as it was: size, mtime, ctime (which no tool can set
    back, unlike mtime: ``cp -p``, ``rsync -t``, ``touch -r``) and inode."""
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _settled(st: os.stat_result, now_ns: int | None = None) -> bool:
    return (time.time_ns() if now_ns is None else now_ns) - st.st_ctime_ns >= SETTLED_NS


def hash_files(paths: list[Path], workers: int | None = None) -> dict[Path, str]:
    """sha256 of each file; a file that cannot be read is left out. Several files at once
    (hashlib and reads release the GIL) where cores are free: one thread per usable core that the
    1-minute load average leaves idle, up to 8, else one at a time — on a loaded 2-core machine
    two threads hashed 1 GiB 20% slower than one (benchmarks/RESULTS.md ``## verify``)."""
    def one(path: Path) -> tuple[Path, str | None]:
        try:
            return path, file_sha256(path)
        except OSError:
            return path, None

    if workers is None:
        from py4.threads import usable_cores

        workers = min(8, usable_cores() - int(round(os.getloadavg()[0])))
    if workers <= 1 or len(paths) <= 1:
        results = [one(path) for path in paths]
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(one, paths))
    return {path: digest for path, digest in results if digest is not None}


def snapshot_outputs(run_dir: str | Path) -> dict[str, dict[str, Any]]:
    """Every file under ``run_dir`` (relative path -> size, mtime_ns, sha256, and its ``stat``
    key when it has settled, `SETTLED_NS`): what a done record keeps."""
    root = Path(run_dir)
    out: dict[str, dict[str, Any]] = {}
    if not root.is_dir():
        return out
    paths = sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())
    now = time.time_ns()  # before the stats: settled then, a later rewrite moves ctime
    before = {p: p.stat() for p in paths}
    digests = hash_files(paths)
    for path in paths:
        st = path.stat()
        entry: dict[str, Any] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": digests[path]}
        if _settled(st, now) and _stat_key(st) == _stat_key(before[path]):
            entry["stat"] = _stat_key(st)
        out[path.relative_to(root).as_posix()] = entry
    return out


def _read_verified(out_dir: str | Path, node: Node, token: str | None) -> dict[str, Any]:
    try:
        data = json.loads((record_dir(out_dir, node) / VERIFIED_NAME).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("run_token") != token or not isinstance(data.get("files"), dict):
        return {}  # another run's checks, or none
    return data["files"]


def output_changes(out_dir: str | Path, node: Node, verify: bool = False) -> list[str]:
    """What is missing or changed in a done run's folder since its record was written ([]: all there).

    Cheap by default: a file whose size and mtime are those recorded is taken as unchanged, and
    only a file whose mtime moved is hashed (a copy or a touch that kept the content is no
    change). ``verify`` also catches a rewrite that kept size and mtime: it hashes every file
    unless its stat key (size, mtime, ctime, inode: `_stat_key`) is the one it had when it was
    last hashed — by the record, or by an earlier check whose findings are kept in
    `VERIFIED_NAME` beside the record — so a repeated ``--verify`` hashes only what was touched
    since. (Corruption below the file system, which changes no stat field, is not caught.)
    Files added since are not the run's and are ignored; a record without ``outputs_seen`` has
    nothing to check. Hashes run several files at once (`hash_files`).
    """
    record = read_record(out_dir, node) or {}
    seen = record.get("outputs_seen") or {}
    token = record.get("run_token")
    checked = _read_verified(out_dir, node, token) if seen else {}
    root = Path(node.run_dir)
    problems = []
    now = time.time_ns()  # before the stats (see `snapshot_outputs`)
    to_hash: dict[str, tuple[Path, os.stat_result]] = {}
    for rel, was in seen.items():
        path = root / rel
        try:
            st = os.stat(path)
        except OSError:
            problems.append(f"{path} is missing")
            continue
        if st.st_size != was.get("size"):
            problems.append(f"{path} changed size ({was.get('size')} -> {st.st_size} bytes)")
            continue
        key = _stat_key(st)
        if key == was.get("stat") or key == (checked.get(rel) or {}).get("stat"):
            continue  # unchanged since it was last hashed
        if verify or st.st_mtime_ns != was.get("mtime_ns"):
            to_hash[rel] = (path, st)
    digests = hash_files([path for path, _ in to_hash.values()])
    found = dict(checked)
    for rel, (path, st) in to_hash.items():
        if digests.get(path) != seen[rel].get("sha256"):
            problems.append(f"{path} changed content (sha256 differs from its record)")
        elif _settled(st, now):
            try:
                if _stat_key(os.stat(path)) == _stat_key(st):  # not rewritten while it was hashed
                    found[rel] = {"stat": _stat_key(st)}
            except OSError:
                pass
    if found != checked and token is not None:
        try:
            atomic_write_json(record_dir(out_dir, node) / VERIFIED_NAME, {"run_token": token, "files": found})
        except OSError:
            pass  # a folder we may only read: the next check hashes again
    return problems


def damage(out_dir: str | Path, node: Node, check_outputs: bool = True, verify: bool = False,
           damaged: set[str] | frozenset[str] = frozenset()) -> str | None:
    """Why a done run is not to be trusted as done — what makes the runner redo it (None: it stays
    done): an input ``damaged`` (ids found so, earlier in dependency order), an input that ran
    again after it, or what it made has changed or gone (`output_changes`; ``check_outputs`` is
    False for a run whose folder a later run continues, `superseded`)."""
    bad = [i for i in node.inputs if i in damaged]
    if bad:
        return f"its input {', '.join(bad)} is damaged (redone before it)"
    redone = redone_inputs(out_dir, node)
    if redone:
        return f"its input {', '.join(redone)} ran again after it"
    changes = output_changes(out_dir, node, verify=verify) if check_outputs else []
    if changes:
        more = f" (and {len(changes) - 1} more)" if len(changes) > 1 else ""
        return f"{changes[0]}{more}"
    return None


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
