"""What a run can see of the host: its command line, its mount table,
the interpreter's third-party packages, host paths in the interpreter's own state.

A run is plain Python 3 here (the layers below hold for whatever code a run executes).
Before: /proc/self/cmdline held the worker's whole JSON configuration (source and venv
paths, cgroup paths, the host scratch path, the executor's PID) and sys.path/site-packages
showed the virtual environment and every installed package.
"""

from __future__ import annotations

import os
import re
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from py4.boa.executor import Executor

pytestmark = pytest.mark.security

REPO = str(Path(__file__).resolve().parents[2])
VENV = sys.prefix
BASE_SITE_PACKAGES = sysconfig.get_path("purelib", vars={"base": sys.base_prefix})


@pytest.fixture(scope="module")
def executor():
    with Executor(workers=1, timeout_s=2.0, output_cap=100_000, dialect="python3") as ex:
        yield ex


def _host_paths() -> list[str]:
    paths = [REPO, "/work", "/sys/fs/cgroup", "boa-scratch-", tempfile.gettempdir() + "/boa"]
    if VENV != sys.base_prefix:
        paths.append(VENV)
    return paths


def _read(executor, path: str) -> str:
    result = executor.run(f"print(open({path!r}, 'rb').read().decode('utf-8', 'replace'))\n")
    assert result.status == "ok", result
    return result.stdout


def test_cmdline_holds_no_configuration(executor):
    cmdline = _read(executor, "/proc/self/cmdline")
    for path in _host_paths():
        assert path not in cmdline, (path, cmdline)
    assert not re.search(rf"\b{os.getpid()}\b", cmdline), cmdline  # the executor's PID
    for word in ("cgroup", "run_uid", "limits", "handoff", "{"):
        assert word not in cmdline, (word, cmdline)


def test_mountinfo_shows_no_host_path(executor):
    mountinfo = _read(executor, "/proc/self/mountinfo")
    for path in _host_paths():
        assert path not in mountinfo, (path, mountinfo)


def test_interpreter_state_names_no_host_path(executor):
    result = executor.run("import sys\nprint(sys.path, sys.executable, sys.argv, sys.orig_argv)\n")
    assert result.status == "ok", result
    for path in _host_paths():
        assert path not in result.stdout, (path, result.stdout)


def test_site_packages_are_empty(executor):
    program = (f"import os\nprint(sorted(os.listdir({BASE_SITE_PACKAGES!r})))\n"
               "try:\n    import pytest\n    print('IMPORTED')\nexcept ImportError:\n    print('NO PACKAGE')\n")
    result = executor.run(program)
    assert result.status == "ok", result
    assert result.stdout == "[]\nNO PACKAGE\n", result.stdout
