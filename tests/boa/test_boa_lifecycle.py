"""No process of a run outlives its run, nor its executor, in any mode.

The attack: a run's child calls ``setsid`` (leaving the worker's process group) and forks
a grandchild that stops itself. Without isolation (no PID namespace, programs run as the
worker's own uid) killing the worker's process group missed it: before the fix it was
still alive, stopped, after the executor had closed.
"""

from __future__ import annotations

import os
import select
import signal

import pytest

from py4.boa.executor import Executor

pytestmark = pytest.mark.smoke

DETACHED_GRANDCHILD = (
    "import os, signal\n"
    "r, w = os.pipe()\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        os.write(w, str(os.getpid()).encode())\n"
    "        os.close(w)\n"
    "        os.kill(os.getpid(), signal.SIGSTOP)\n"
    "        os._exit(0)\n"
    "    os._exit(0)\n"
    "os.close(w)\n"
    "print(os.read(r, 32).decode())\n")


def _pidfd(stdout: str) -> int | None:
    """A pidfd on the grandchild the run reported (None: it is gone already)."""
    try:
        return os.pidfd_open(int(stdout))
    except ProcessLookupError:
        return None


def _gone(pidfd: int | None, wait_s: float) -> bool:
    """Whether the process has exited (a pidfd is readable once it has); kills it when not,
    so that a failing test leaves nothing behind."""
    if pidfd is None:
        return True
    try:
        if select.select([pidfd], [], [], wait_s)[0]:
            return True
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        return False
    finally:
        os.close(pidfd)


def test_detached_stopped_grandchild_dies_with_its_run_without_isolation():
    with Executor(workers=1, isolate=False, dialect="python3") as ex:
        result = ex.run(DETACHED_GRANDCHILD)
        assert result.status == "ok", result
        pidfd = _pidfd(result.stdout)
        assert ex.run("print(1)\n").stdout == "1\n"  # the first run's clean-up is over
        assert _gone(pidfd, 10.0)


def test_detached_stopped_grandchild_dies_with_the_executor_without_isolation():
    ex = Executor(workers=1, isolate=False, dialect="python3")
    try:
        result = ex.run(DETACHED_GRANDCHILD)
        assert result.status == "ok", result
        pidfd = _pidfd(result.stdout)
    finally:
        ex.close()  # at once: the run's clean-up may not have happened yet
    assert _gone(pidfd, 10.0)

