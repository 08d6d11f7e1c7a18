"""One runner per campaign folder: a lock the live runner holds, and who holds it.

The local runner takes ``fcntl.flock`` on ``<out_dir>/_campaign/runner.lock`` for as long as it
runs and writes its PID, host and start time into the file. The kernel releases the lock when
the process ends however it ends (SIGKILL included), so "is a runner alive here?" is answered
by trying the lock, never by trusting a PID that may have been reused. A second runner on the
same folder is refused with the first one's PID and host. A lock on a network file system is
only as good as that file system's flock.

Slurm jobs take no lock: Slurm runs several of a campaign's jobs at once, each on its own node,
and its job states say which are alive (`py4.campaign.status`).
"""

from __future__ import annotations

import datetime as _dt
import errno
import fcntl
import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from py4.errors import Py4Error

LOCK_NAME = "runner.lock"


class CampaignLocked(Py4Error):
    """Another runner is running this campaign folder (its PID and host are in the message)."""


def lock_path(out_dir: str | Path) -> Path:
    return Path(out_dir) / "_campaign" / LOCK_NAME


def this_runner() -> dict:
    """The PID and host a runner records (in the lock file and in each run record it writes)."""
    return {"pid": os.getpid(), "host": socket.gethostname()}


def _holder(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
        holder = json.loads(text) if text.strip() else {}
    except (OSError, ValueError):
        holder = {}
    return holder if isinstance(holder, dict) else {}


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        raise
    return True


def live_runner(out_dir: str | Path) -> dict | None:
    """The PID/host/start of the runner holding the folder's lock now; None when no runner holds it."""
    path = lock_path(out_dir)
    if not path.exists():
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        if _try_lock(fd):
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        return _holder(path) or {"pid": "?", "host": "?"}
    finally:
        os.close(fd)


@contextmanager
def runner_lock(out_dir: str | Path) -> Iterator[dict]:
    """Hold the campaign folder's runner lock for the block; yields this runner's PID/host.

    Raises CampaignLocked naming the holder's PID, host and start when another runner has it.
    """
    path = lock_path(out_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if not _try_lock(fd):
            holder = _holder(path)
            raise CampaignLocked(
                f"{out_dir} is being run by another runner: PID {holder.get('pid', '?')} on "
                f"{holder.get('host', '?')} (since {holder.get('started_at', '?')}); wait for it to end "
                f"or stop it (kill {holder.get('pid', 'PID')} on that host), then run again")
        me = this_runner() | {"started_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(me) + "\n").encode(), 0)
        try:
            yield me
        finally:
            os.ftruncate(fd, 0)  # no stale PID for a reader to misread; the flock is what counts
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
