"""How many threads a CPU stage gives torch: the cores it may use, not every core the machine has.

torch's default intra-op thread count is the machine's core count whoever else is running. On a
shared or loaded machine that oversubscribes the cores: torch's threads meet at a barrier after
every operation, and a thread the scheduler has parked holds up the others (measured on a loaded
2-core machine: a tiny-model training step several times slower than with one thread;
benchmarks/RESULTS.md ``## demo threads``). So every CPU stage (training, probes, evaluation, the
smoke assets, held-out loss, the graft) sets the count with :func:`use_cpu_threads`, which picks,
first that applies:

1. an explicit count: ``PY4_THREADS`` (``py4 demo --threads N``, ``py4 campaign run --threads N``);
2. ``OMP_NUM_THREADS`` when it is set (the usual knob; torch reads it too);
3. the cores this process may use — its CPU affinity and cgroup CPU quota — less the cores other
   processes keep busy, divided by the processes of the run that share them (``processes``: e.g.
   a training run's accelerate ranks), and at least 1. The count is chosen once per stage: a load
   that comes or goes during a run does not change it.

How busy the other processes keep the machine comes, first that applies, from:

a. ``PY4_BUSY_CORES``, which a campaign runner sets for each run it starts (`MachineLoad`): the
   machine's CPU time since an earlier run's start, from /proc/stat, less the runner's own and its
   finished children's. A run's start costs no wait that way; the reading covers the previous
   run(s), at least ``MachineLoad.min_window_s``, rather than the instant the run starts;
b. a sample taken there and then (`busy_cores`: a quarter second of /proc/stat less this
   process's own time): a stage run on its own, and a campaign's first run.

``PY4_THREADS=torch`` leaves torch's own default (the baseline of benchmarks/demo.py).
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import Callable

ENV = "PY4_THREADS"
BUSY_ENV = "PY4_BUSY_CORES"
TORCH_DEFAULT = "torch"


def usable_cores() -> int:
    """CPUs this process may run on: its affinity mask, capped by a cgroup v2 CPU quota."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, math.floor(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cores)


def _cpu_jiffies() -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs since boot, from /proc/stat (None: not Linux)."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields[:8]) - idle, sum(fields[:8])


def busy_cores(window_s: float = 0.25) -> float:
    """Cores other processes keep busy now: the machine's CPU time over ``window_s`` less this
    process's own (so a runner that has just finished a run does not count itself), in cores.
    Falls back to the 1-minute load average where /proc/stat is missing."""
    first = _cpu_jiffies()
    if first is None:
        try:
            return float(os.getloadavg()[0])
        except (AttributeError, OSError):
            return 0.0
    own0, t0 = time.process_time(), time.monotonic()
    time.sleep(window_s)
    second = _cpu_jiffies()
    own, wall = time.process_time() - own0, time.monotonic() - t0
    if second is None or second[1] <= first[1] or wall <= 0:
        return 0.0
    cores = os.cpu_count() or 1
    machine_busy = (second[0] - first[0]) / (second[1] - first[1]) * cores  # cores busy on the whole machine
    return max(0.0, machine_busy - own / wall)


def cpu_threads(processes: int = 1, *, environ: dict | None = None, cores: int | None = None,
                busy: float | None = None) -> int | None:
    """The intra-op threads one of ``processes`` processes should use (see the module's
    docstring); None for ``PY4_THREADS=torch`` (torch's default). Raises ValueError naming the
    variable for a value that is not a positive count."""
    env = os.environ if environ is None else environ
    for name in (ENV, "OMP_NUM_THREADS"):
        value = (env.get(name) or "").strip()
        if not value:
            continue
        if name == ENV and value == TORCH_DEFAULT:
            return None
        if not value.isdigit() or int(value) < 1:
            raise ValueError(f"{name}={value!r}: expected a positive whole number of threads"
                             + (f" or {TORCH_DEFAULT!r}" if name == ENV else ""))
        return int(value)
    cores = usable_cores() if cores is None else cores
    if busy is None:
        busy = _busy_from(env)
    if busy is None:
        busy = busy_cores()
    free = max(1, cores - int(round(busy)))
    return max(1, free // max(1, processes))


def _busy_from(env) -> float | None:
    """The busy cores a campaign runner measured for this run (``PY4_BUSY_CORES``); None when unset."""
    value = (env.get(BUSY_ENV) or "").strip()
    if not value:
        return None
    try:
        busy = float(value)
    except ValueError:
        busy = -1.0
    if not busy >= 0 or math.isinf(busy):
        raise ValueError(f"{BUSY_ENV}={value!r}: expected the cores other processes keep busy, a number >= 0")
    return busy


def _own_cpu_seconds() -> float:
    """CPU seconds of this process (every thread) and of its children that have been waited for."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class MachineLoad:
    """The cores other processes keep busy, read without waiting: a campaign runner's reading for
    each run it starts (`busy`), set for the run as ``PY4_BUSY_CORES``.

    Each reading marks the moment (the machine's busy and total jiffies from /proc/stat, this
    process's CPU time with its waited-for children's, the clock) and measures from the latest
    earlier mark at least ``min_window_s`` old: the machine's busy cores over that window less the
    runner's own. Marks are taken between runs, when no child of the runner is alive, so a child's
    CPU time is counted as the runner's own in full. The readers are parameters so a test can
    give the machine's counters.
    """

    def __init__(self, min_window_s: float = 1.0, *,
                 jiffies: Callable[[], tuple[int, int] | None] = _cpu_jiffies,
                 own_cpu: Callable[[], float] = _own_cpu_seconds,
                 clock: Callable[[], float] = time.monotonic, cpus: int | None = None) -> None:
        self.min_window_s = min_window_s
        self._jiffies, self._own_cpu, self._clock = jiffies, own_cpu, clock
        self._cpus = cpus or os.cpu_count() or 1
        self._marks: list[tuple[float, tuple[int, int], float]] = []
        self._mark()

    def _mark(self) -> tuple[float, tuple[int, int], float] | None:
        jiffies = self._jiffies()
        if jiffies is None:
            return None
        mark = (self._clock(), jiffies, self._own_cpu())
        self._marks.append(mark)
        return mark

    def busy(self) -> float | None:
        """Cores other processes kept busy since the latest mark at least ``min_window_s`` old
        (None: no such mark yet, or no /proc/stat); marks this moment for the next reading."""
        now = self._mark()
        if now is None:
            return None
        t, (busy, total), own = now
        earlier = [i for i, m in enumerate(self._marks[:-1]) if t - m[0] >= self.min_window_s]
        if not earlier:
            return None
        t0, (busy0, total0), own0 = self._marks[earlier[-1]]
        del self._marks[:earlier[-1]]  # older marks can no longer be the latest one old enough
        if total <= total0 or t <= t0:
            return None
        machine_busy = (busy - busy0) / (total - total0) * self._cpus
        return max(0.0, machine_busy - (own - own0) / (t - t0))


def use_cpu_threads(processes: int = 1) -> int:
    """Set torch's intra-op threads for this process (`cpu_threads`); returns the count in use."""
    import torch

    n = cpu_threads(processes)
    if n is not None and n != torch.get_num_threads():
        torch.set_num_threads(n)
    return torch.get_num_threads()
