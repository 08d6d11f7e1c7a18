"""One Boa executor per process, shared by every episode (never one per environment).

TRL creates one environment instance per rollout; each owning a pool of sandboxed
workers would start hundreds of processes. Every ``Py4Environment`` therefore asks this
module for the process-wide executor, created on first use with one worker per core
and closed at interpreter exit. Executors differ only by output cap (the run timeout is
passed per run), so there is one per cap in use.
"""

from __future__ import annotations

import atexit
import threading

from py4.boa.executor import Executor

_lock = threading.Lock()
_executors: dict[tuple[int, int | None], Executor] = {}


def shared_executor(output_cap: int = 2048, workers: int | None = None) -> Executor:
    """The process-wide executor for ``output_cap`` (created on first use; thread-safe).

    ``workers`` only matters for the first call with this cap (default: one per core).
    Raises WorkerError when the workers cannot be started.
    """
    key = (int(output_cap), None)
    with _lock:
        executor = _executors.get(key)
        if executor is None or executor._closed:  # closed by a caller: start again
            executor = Executor(workers=workers, output_cap=output_cap)
            _executors[key] = executor
        return executor


def close_shared_executors() -> None:
    """Close every shared executor (at exit, or in tests that need a clean slate)."""
    with _lock:
        for executor in _executors.values():
            executor.close()
        _executors.clear()


atexit.register(close_shared_executors)
