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
   processes keep busy when the stage starts (the machine's CPU time over a quarter second, from
   /proc/stat, less this process's own), divided by the processes of the run that share them
   (``processes``: e.g. a training run's accelerate ranks), and at least 1. The count is chosen
   once per stage: a load that comes or goes during a run does not change it.

``PY4_THREADS=torch`` leaves torch's own default (the baseline of benchmarks/demo.py).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

ENV = "PY4_THREADS"
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
    import time

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
    busy = busy_cores() if busy is None else busy
    free = max(1, cores - int(round(busy)))
    return max(1, free // max(1, processes))


def use_cpu_threads(processes: int = 1) -> int:
    """Set torch's intra-op threads for this process (`cpu_threads`); returns the count in use."""
    import torch

    n = cpu_threads(processes)
    if n is not None and n != torch.get_num_threads():
        torch.set_num_threads(n)
    return torch.get_num_threads()
