"""Shared fixtures for the sandbox attack suite: one warm executor for the whole session.

Every attack test ends with ``sandbox.assert_serves_next()``: after the attack, the same
executor must run an ordinary program correctly, and no process of the attack may remain.
"""

from __future__ import annotations

import os

import pytest

from py4.boa.executor import Executor
from py4.problems.schema import Problem
from security_fixtures import EXPECTED_MARKER, SECRET_ENV, SECRET_VALUE


class Sandbox:
    def __init__(self, executor: Executor):
        self.executor = executor

    def run(self, source: str, **kwargs):
        """Run an attack program; it must compile, so that the attack really ran."""
        result = self.executor.run(source, **kwargs)
        assert result.status != "compile_error", result.stderr
        return result

    def assert_serves_next(self) -> None:
        """The executor still runs a plain program, and no earlier process survives."""
        result = self.executor.run(
            'use os\n'
            'let procs = [p for p in os.listdir("/proc") if p.isdigit()]\n'
            'print(6 * 7, len(procs))\n')
        assert result.status == "ok", result
        assert result.stdout == "42 1\n", result


@pytest.fixture(scope="session")
def sandbox():
    os.environ[SECRET_ENV] = SECRET_VALUE  # must not reach any program
    with Executor(workers=1, timeout_s=1.0, output_cap=2048) as executor:
        yield Sandbox(executor)
    os.environ.pop(SECRET_ENV, None)


@pytest.fixture(scope="session")
def python3_sandbox(sandbox):
    """The same layers attacked by plain Python 3. Python-4 programs cannot load ctypes,
    walk the heap with gc, reach `sys.modules` or start programs (the capability set,
    test_security_dynamic_code.py); the layers below must still hold for whatever code a
    run manages to execute."""
    with Executor(workers=1, timeout_s=1.0, output_cap=2048, dialect="python3") as executor:
        yield executor


@pytest.fixture(scope="session")
def marker_problem() -> Problem:
    """A problem whose expected output is a number no honest program returns."""
    return Problem(id="security/marker", family="security", title="marker", prompt="return 1",
                   entry_point="solve", signature="fn solve(x: int) -> int",
                   tests=[{"args": [1], "expected": EXPECTED_MARKER},
                          {"args": [2], "expected": EXPECTED_MARKER + 1}])


@pytest.fixture(scope="session")
def float_problem() -> Problem:
    return Problem(id="security/float", family="security", title="half", prompt="halve",
                   entry_point="solve", tests=[{"args": [3], "expected": 1.5, "tolerance": 1e-9}])


@pytest.fixture(scope="session")
def int_problem() -> Problem:
    return Problem(id="security/int", family="security", title="one", prompt="one",
                   entry_point="solve", tests=[{"args": [1], "expected": 1}])
