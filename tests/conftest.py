"""Suite-wide check: no process a test started outlives the session.

pytest makes itself a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``), so a process
whose parent goes away (a run's double-forked child, a server a test started through a
launcher) is re-parented to pytest rather than to init, and stays in view. After each
test, pytest's new direct children are noted with the test's id (a few small reads of
``/proc/self/task/*/children``). When the session ends — after every fixture's teardown,
and after a garbage collection, which closes executors nobody references any more — every
descendant still alive (the episodes' process-wide executors, which live until the
interpreter exits, are closed first) is reported with the test during which it appeared, killed with
its whole tree, and the session fails.
"""

from __future__ import annotations

import ctypes
import gc
import os
import signal
import sys
import time

import pytest

PR_SET_CHILD_SUBREAPER = 36
_SETTLE_S = 2.0  # a process killed just before the end may still be exiting

_first_seen: dict[int, str] = {}  # pid of a direct child -> the test during which it appeared


@pytest.fixture(scope="session")
def smoke_assets():
    """The tiny tokenizer, base and -it model (tests/smoke_models.py), built at most once per machine
    and code version."""
    import smoke_models

    return smoke_models.smoke_assets()


def _children(pid: int) -> list[int]:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found.extend(int(p) for p in f.read().split())
        except OSError:
            pass
    return found


def _alive_descendants(root: int) -> list[int]:
    """Descendants of ``root`` that have not exited (zombies are left out), parents first."""
    seen: list[int] = []
    pending = _children(root)
    while pending:
        pid = pending.pop(0)
        if pid in seen:
            continue
        if _state(pid) not in ("Z", "X", None):
            seen.append(pid)
        pending.extend(_children(pid))
    return seen


def _state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            text = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return "?"
    return text.split("\n", 1)[0][:160]  # (a worker's boot text is many lines)


def pytest_configure(config):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:  # pragma: no cover - old kernels
        config.issue_config_time_warning(pytest.PytestWarning(
            "cannot make pytest a child subreaper: orphaned processes are not checked"), 2)
    for pid in _children(os.getpid()):
        _first_seen.setdefault(pid, "(before the session)")


def pytest_runtest_logfinish(nodeid, location):
    for pid in _children(os.getpid()):
        _first_seen.setdefault(pid, nodeid)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    # The episodes' process-wide executors live until the interpreter exits, by design
    # (py4.episodes.pool): the session's end is that exit, so they are closed first.
    pool = sys.modules.get("py4.episodes.pool")
    if pool is not None:
        pool.close_shared_executors()
    gc.collect()  # executors nobody references close now (their finalizers kill workers)
    # multiprocessing's resource tracker (started by any spawn/forkserver pool, e.g. data
    # rendering in processes) is the interpreter's own helper, stopped when it exits: stop it
    # the same way now rather than report it.
    tracker = sys.modules.get("multiprocessing.resource_tracker")
    stop = getattr(getattr(tracker, "_resource_tracker", None), "_stop", None)
    if stop is not None:
        stop()
    me = os.getpid()
    left = _alive_descendants(me)
    if left:
        time.sleep(_SETTLE_S)
        left = _alive_descendants(me)
    if not left:
        return
    lines = []
    for pid in left:
        origin = _first_seen.get(pid)
        where = f"appeared during {origin}" if origin else "a descendant of the above"
        lines.append(f"pid {pid} [{_state(pid)}] {_command(pid)!r}: {where}")
    for pid in reversed(left):  # children first, so none is re-parented mid-way
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for pid in left:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    message = ("processes outlived the test session (killed now); each must be stopped by "
               "the test or fixture that started it:\n" + "\n".join(lines))
    if reporter is not None:
        reporter.write_line("")
        reporter.write_sep("=", "leftover processes", red=True)
        reporter.write_line(message)
    else:
        print(message)
    if session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
