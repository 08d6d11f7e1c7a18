"""Attacks on the harness's own pipes (docs/boa.md, "How it works").

A run's child holds, besides stdout and stderr, the write ends of its result channel, of
the tick pipe (read by the executor: "." per test, "!" + status at the end) and of the end
pipe (read by the supervisor). The program can find them all (the lowest pipe above the
standard descriptors and the job's is the channel, then ticks, then end). Whatever it
writes there, the run ends honestly and promptly, nothing of it survives, and the next
run is served.
"""

from __future__ import annotations

import time

import pytest

from security_fixtures import EXPECTED_MARKER
from py4.boa.certify import certify
from py4.problems.schema import Problem

pytestmark = pytest.mark.security

# Binds `chan`, `ticks`, `end`: the child's three harness pipes, found as a program would.
FIND_PIPES = ("use os\nuse stat\n"
              "let pipes = []\n"
              "for fd in range(5, 256):\n"
              "    try:\n"
              "        if stat.S_ISFIFO(os.fstat(fd).st_mode):\n"
              "            pipes.append(fd)\n"
              "    catch OSError:\n"
              "        pass\n"
              "let chan = pipes[0]\nlet ticks = pipes[1]\nlet end = pipes[2]\n")


def test_the_harness_pipes_are_where_the_attacks_look(sandbox):
    # Control: the three pipes exist and are found (else the attacks below prove nothing).
    result = sandbox.run(FIND_PIPES + "print(len(pipes), ticks == chan + 1, end == chan + 2)\n")
    assert (result.status, result.stdout) == ("ok", "3 True True\n"), result
    sandbox.assert_serves_next()


def test_flooding_the_tick_pipe_stops_the_run(sandbox):
    result = sandbox.run(FIND_PIPES + "while true:\n    os.write(ticks, b'.' * 4096)\n", timeout_s=5.0)
    assert result.status == "killed", result  # not "timeout": stopped for the flood
    assert "flooded the harness's own pipes" in result.stderr
    sandbox.assert_serves_next()


def test_flooding_the_result_channel_stops_the_run(sandbox):
    result = sandbox.run(FIND_PIPES + "let block = b'x' * 2 ** 20\nwhile true:\n    os.write(chan, block)\n",
                         timeout_s=5.0)
    assert result.status == "killed", result  # not "timeout": stopped for the flood
    sandbox.assert_serves_next()


def test_forged_end_to_the_supervisor_alone_kills_the_run(sandbox):
    # The supervisor kills the run; the executor, which got no "!", reports the kill.
    result = sandbox.run(FIND_PIPES + "use time\nprint('before', flush=true)\n"
                         "os.write(end, b'!')\ntime.sleep(0.5)\nprint('after')\n", timeout_s=5.0)
    assert result.status == "killed", result
    assert result.stdout == "before\n"  # killed before "after"
    sandbox.assert_serves_next()


def test_closing_the_harness_pipes_leaves_the_exit_status_to_the_kernel(sandbox):
    # The harness can then report nothing: the run ends when the process exits, with the
    # status the kernel gives (here the program's own 3). Meanwhile the executor waits
    # without spinning on the closed pipes.
    cpu_before = time.process_time()
    result = sandbox.run(FIND_PIPES + "use time\nfor fd in pipes:\n    os.close(fd)\n"
                         "print('closed', flush=true)\ntime.sleep(0.4)\nexit(3)\n")
    assert (result.status, result.exit_code, result.stdout) == ("runtime_error", 3, "closed\n"), result
    assert result.duration_s >= 0.4, result
    assert time.process_time() - cpu_before < 0.2
    sandbox.assert_serves_next()


def test_forged_ticks_cannot_stretch_the_per_test_deadline(sandbox):
    # A tick restarts the per-test deadline (0.4 s here). The solution needs 0.6 s for its
    # one test and forges a tick every 0.1 s: the harness's own ticks leave no room for
    # more than a couple, so the run is stopped long before the answer (without that
    # budget it would certify, inside the 0.8 s whole-run cap).
    problem = Problem(id="security/slow", family="security", title="slow", prompt="return 1",
                      entry_point="solve", tests=[{"args": [1], "expected": EXPECTED_MARKER}])
    source = (FIND_PIPES + "use time\nfn solve(x: int) -> int:\n"
              "    for _ in range(6):\n        time.sleep(0.1)\n        os.write(ticks, b'.')\n"
              f"    return {EXPECTED_MARKER - 1} + x\n")
    cert = certify(problem, source, executor=sandbox.executor, per_test_timeout_s=0.4)
    assert cert.compiled and not cert.certified and cert.status == "killed", cert
    sandbox.assert_serves_next()


def test_a_certifications_output_goes_to_dev_null(sandbox, marker_problem):
    # Control for the next test: the solution certifies only where fd 1 and 2 are a
    # character device (/dev/null), not a pipe.
    source = ("use os\nuse stat\nfn solve(x: int) -> int:\n"
              "    if stat.S_ISCHR(os.fstat(1).st_mode) and stat.S_ISCHR(os.fstat(2).st_mode):\n"
              f"        return {EXPECTED_MARKER - 1} + x\n"
              "    return 0\n")
    cert = certify(marker_problem, source, executor=sandbox.executor)
    assert cert.certified, cert
    sandbox.assert_serves_next()


def test_printing_megabytes_while_certifying_is_harmless(sandbox, marker_problem):
    # A certification's prints go to /dev/null: they neither block the solution nor
    # reach any process, and the honest answer still certifies.
    source = ("use sys\nfn solve(x: int) -> int:\n"
              "    for _ in range(64):\n        print('y' * 65536)\n        print('z' * 65536, file=sys.stderr)\n"
              f"    return {EXPECTED_MARKER - 1} + x\n")
    cert = certify(marker_problem, source, executor=sandbox.executor)
    assert cert.certified and cert.tests_passed == 2, cert
    sandbox.assert_serves_next()
