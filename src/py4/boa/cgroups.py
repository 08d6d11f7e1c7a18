"""Per-worker control groups: a memory ceiling and a process ceiling for a whole run.

rlimits bound each process; a run may have many (up to the process limit), so without a
group limit a fork bomb in which every process allocates its full address space could
exhaust the machine. Each worker gets its own memory and pids group (cgroup v2 when the
unified hierarchy has those controllers, else v1), created by the executor under the
executor's own groups, joined by the worker itself before it unshares anything, and
removed when the executor closes. The OOM-kill counter tells the executor that a run
was killed for memory. Without cgroup access (not root, read-only cgroupfs) the executor
logs a warning and relies on rlimits alone.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
MEMORY_HEADROOM_BYTES = 96 * 2**20  # the supervisor and the prepared child live here too


@dataclass
class WorkerCgroup:
    """The groups of one worker: paths to join, and how to read the OOM-kill count."""

    paths: list[str] = field(default_factory=list)
    memory_events: str | None = None  # file holding the oom_kill counter
    error: str | None = None
    _events_fd: int | None = field(default=None, repr=False, compare=False)

    def to_config(self) -> list[str]:
        return list(self.paths)

    def oom_kills(self) -> int:
        """OOM kills in this group so far (0 when unknown).

        Read twice per run: the file stays open and is re-read from its start.
        """
        if not self.memory_events:
            return 0
        try:
            if self._events_fd is None:
                self._events_fd = os.open(self.memory_events, os.O_RDONLY | os.O_CLOEXEC)
            for line in os.pread(self._events_fd, 4096, 0).decode().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def remove(self) -> None:
        """Remove the groups (their processes must be dead; retries briefly)."""
        if self._events_fd is not None:
            os.close(self._events_fd)
            self._events_fd = None
        for path in reversed(self.paths):
            for _ in range(50):
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)


def create(name: str, memory_bytes: int, pids_max: int) -> WorkerCgroup:
    """Create the groups for one worker; never raises (``error`` says what failed)."""
    group = WorkerCgroup()
    try:
        if _unified_has("memory") and _unified_has("pids"):
            path = _own_path("") / name
            path.mkdir()
            group.paths.append(str(path))
            (path / "memory.max").write_text(str(memory_bytes + MEMORY_HEADROOM_BYTES))
            if (path / "memory.swap.max").exists():
                (path / "memory.swap.max").write_text("0")
            (path / "pids.max").write_text(str(pids_max))
            group.memory_events = str(path / "memory.events")
            return group
        memory = _own_path("memory") / name
        pids = _own_path("pids") / name
        memory.mkdir()
        group.paths.append(str(memory))
        pids.mkdir()
        group.paths.append(str(pids))
        (memory / "memory.limit_in_bytes").write_text(str(memory_bytes + MEMORY_HEADROOM_BYTES))
        (pids / "pids.max").write_text(str(pids_max))
        group.memory_events = str(memory / "memory.oom_control")
    except OSError as exc:
        group.remove()
        return WorkerCgroup(error=f"no cgroup limits ({exc.strerror or exc})")
    return group


# memory.stat keys of memory that only a live process or a kernel object keeps: anonymous
# memory and shmem (tmpfs files, SysV shared memory). Page cache is left out: it is
# reclaimable, and an honest run that reads library files leaves some charged here.
_HELD_KEYS = {b"rss", b"anon", b"shmem"}  # v1: rss + shmem; v2: anon + shmem


def open_memory_stat(paths: list[str]) -> int | None:
    """A descriptor on the memory.stat of the group among ``paths`` that has one (None:
    no memory group). Opened before isolation: the cgroup filesystem is not in the
    sandbox."""
    for path in paths:
        try:
            return os.open(os.path.join(path, "memory.stat"), os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            continue
    return None


class MemoryStat:
    """Reads the anonymous and shared memory charged to a group (``held_bytes``) from its
    memory.stat (a descriptor from ``open_memory_stat``), once per run in the worker's
    clean-up. Read into a buffer made here and searched in place: splitting the file into
    lines made ~150 objects per read, and every page they touch costs the worker a
    copy-on-write fault (its heap is shared with the prepared child): ~20 faults and
    ~25 us of CPU per run, measured against reading in place."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        # Byte 0 is a newline, so that every key (the first line's too) follows one.
        self.buffer = bytearray(b"\n") + bytearray(1 << 16)
        self.into = [memoryview(self.buffer)[1:]]
        self.keys = tuple(b"\n" + key + b" " for key in sorted(_HELD_KEYS))

    def held_bytes(self) -> int:
        """Anonymous and shared memory charged to the group now, in bytes."""
        buffer = self.buffer
        size = os.preadv(self.fd, self.into, 0) + 1
        total = 0
        for key in self.keys:
            at = buffer.find(key, 0, size)
            if at >= 0:
                at += len(key)
                end = buffer.find(b"\n", at, size)
                total += int(buffer[at:end if end >= 0 else size])
        return total


def join(paths: list[str]) -> None:
    """Move the calling process into ``paths`` (called by the worker at start)."""
    for path in paths:
        with open(os.path.join(path, "cgroup.procs"), "w") as fh:
            fh.write(str(os.getpid()))


def _unified_has(controller: str) -> bool:
    try:
        return controller in (CGROUP_ROOT / "cgroup.controllers").read_text().split()
    except OSError:
        return False


def _own_path(controller: str) -> Path:
    """This process's group directory for ``controller`` ("" = the unified hierarchy)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(",") or (not controller and controllers == ""):
            base = CGROUP_ROOT if not controller else CGROUP_ROOT / controller
            return base / path.lstrip("/")
    raise OSError(f"no {controller or 'unified'} cgroup for this process")
