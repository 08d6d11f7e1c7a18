"""Resource attacks (BOA.md): each is stopped by a limit and reported honestly."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.security


def test_infinite_loop_times_out(sandbox):
    started = time.monotonic()
    result = sandbox.run("while true:\n    pass\n")
    assert result.status == "timeout" and result.exit_code is None
    assert time.monotonic() - started < 30  # generous: holds on a loaded machine
    sandbox.assert_serves_next()


def test_sleep_times_out_on_wall_clock(sandbox):
    started = time.monotonic()
    result = sandbox.run("use time\ntime.sleep(60)\n")
    assert result.status == "timeout"
    assert time.monotonic() - started < 30  # not CPU time: the wall clock stops it (sleep is 60 s)
    sandbox.assert_serves_next()


def test_input_reads_empty_stdin(sandbox):
    result = sandbox.run('let line = input()\nprint("got", line)\n')
    assert result.status == "runtime_error"
    assert "EOFError" in result.stderr
    sandbox.assert_serves_next()


def test_ignoring_alarm_and_termination_signals(sandbox):
    program = (
        "use signal\n"
        "for sig in [signal.SIGALRM, signal.SIGTERM, signal.SIGXCPU, signal.SIGINT, signal.SIGHUP]:\n"
        "    signal.signal(sig, signal.SIG_IGN)\n"
        "signal.setitimer(signal.ITIMER_REAL, 0)\n"
        "signal.alarm(0)\n"
        "while true:\n"
        "    pass\n")
    result = sandbox.run(program)
    assert result.status == "timeout"
    sandbox.assert_serves_next()


def test_resetting_timers_repeatedly(sandbox):
    program = ("use signal\nuse time\nwhile true:\n"
               "    signal.setitimer(signal.ITIMER_REAL, 100)\n    time.sleep(0.01)\n")
    assert sandbox.run(program).status == "timeout"
    sandbox.assert_serves_next()


def test_huge_allocation_is_memory(sandbox):
    result = sandbox.run("let xs = [0] * (10 ** 9)\nprint(len(xs))\n")
    assert result.status == "memory"
    assert "MemoryError" in result.stderr
    sandbox.assert_serves_next()


def test_growing_allocation_is_memory(sandbox):
    program = 'let chunks = []\nwhile true:\n    chunks.append(bytearray(50 * 2 ** 20))\n'
    # touching ~500 MiB of pages takes seconds on a small VM: give it time to hit the limit
    assert sandbox.run(program, timeout_s=8).status == "memory"
    sandbox.assert_serves_next()


def test_fork_bomb_is_contained(sandbox):
    program = "use os\nwhile true:\n    os.fork()\n"
    started = time.monotonic()
    result = sandbox.run(program)
    assert result.status in ("runtime_error", "timeout", "output_limit")
    assert time.monotonic() - started < 30
    sandbox.assert_serves_next()


def test_thread_bomb_is_contained(python3_sandbox, sandbox):
    # Plain Python 3: threading is outside a Python-4 program's capability set.
    program = ("import threading, time\nthreads = []\nwhile True:\n"
               "    t = threading.Thread(target=time.sleep, args=(30,))\n"
               "    t.start()\n    threads.append(t)\n")
    result = python3_sandbox.run(program)
    assert result.status in ("runtime_error", "timeout")
    if result.status == "runtime_error":
        assert "RuntimeError" in result.stderr or "BlockingIOError" in result.stderr
    sandbox.assert_serves_next()


def test_multiprocessing_pool_64(python3_sandbox, sandbox):
    # Plain Python 3: multiprocessing is outside a Python-4 program's capability set.
    program = ("import multiprocessing\n"
               "def sq(x):\n    return x * x\n"
               'if __name__ == "__main__":\n'
               "    with multiprocessing.Pool(64) as pool:\n"
               "        print(sum(pool.map(sq, range(0, 999))))\n")
    result = python3_sandbox.run(program)
    assert result.status in ("runtime_error", "timeout", "output_limit")
    sandbox.assert_serves_next()


def test_double_fork_daemon_does_not_outlive_the_run(sandbox):
    program = ("use os\nuse time\n"
               "if os.fork() == 0:\n"
               "    os.setsid()\n"
               "    if os.fork() == 0:\n"
               "        time.sleep(30)\n"
               "    os._exit(0)\n"
               'print("parent done")\n')
    result = sandbox.run(program)
    assert result.status == "ok" and result.stdout == "parent done\n"
    sandbox.assert_serves_next()  # counts the processes visible in the sandbox: only itself


def test_infinite_output_is_cut(sandbox):
    started = time.monotonic()
    result = sandbox.run('while true:\n    print("spam spam spam")\n')
    assert result.status == "output_limit"
    assert result.stdout.endswith("…[output truncated]")
    assert len(result.stdout) <= 2048 + len("…[output truncated]")
    assert time.monotonic() - started < 30  # (the status says the cap stopped it, not the clock)
    sandbox.assert_serves_next()


def test_giant_single_line_is_cut(sandbox):
    result = sandbox.run('print("x" * (10 ** 7))\n')
    assert result.status == "output_limit"
    assert result.stdout == "x" * 2048 + "…[output truncated]"
    sandbox.assert_serves_next()


def test_output_on_stderr_is_capped(sandbox):
    result = sandbox.run('use sys\nwhile true:\n    sys.stderr.write("e" * 1000)\n')
    assert result.status == "output_limit"
    assert "…[output truncated]" in result.stderr
    sandbox.assert_serves_next()


def test_raw_fd1_output_is_captured_and_capped(sandbox):
    small = sandbox.run('use os\nos.write(1, b"raw bytes\\n")\n')
    assert small.status == "ok" and small.stdout == "raw bytes\n"
    big = sandbox.run('use os\nwhile true:\n    os.write(1, b"r" * 65536)\n')
    assert big.status == "output_limit"
    sandbox.assert_serves_next()


def test_nul_bytes_and_invalid_utf8_in_output(sandbox):
    result = sandbox.run('use os\nprint("a\\x00b")\nos.write(1, b"\\xff\\xfe bad\\n")\n')
    assert result.status == "ok"
    assert result.stdout.startswith("a\x00b\n")
    assert "\ufffd" in result.stdout  # invalid UTF-8 becomes replacement characters
    sandbox.assert_serves_next()


def test_filling_the_scratch_disk(sandbox):
    program = ('let n = 0\nwhile true:\n'
               '    with open(i"/tmp/fill{n}", "wb") as fh:\n'
               '        fh.write(b"x" * (2 ** 20))\n'
               '    n += 1\n')
    result = sandbox.run(program)
    assert result.status == "runtime_error"
    assert "OSError" in result.stderr or "No space" in result.stderr
    after = sandbox.run('use os\nprint(os.listdir("/tmp"))\n')
    assert after.stdout == "[]\n"  # scratch wiped between runs
    sandbox.assert_serves_next()


def test_single_file_over_size_limit(sandbox):
    result = sandbox.run('with open("/tmp/big", "wb") as fh:\n    fh.write(b"x" * (64 * 2 ** 20))\n')
    assert result.status in ("runtime_error", "memory")
    sandbox.assert_serves_next()


def test_deep_recursion_with_raised_limit_is_a_runtime_error(sandbox):
    # json's C decoder recurses once per bracket: with the limit raised, the C stack
    # overflows and the child segfaults; that is the program's runtime error.
    program = ("use sys\nuse json\nsys.setrecursionlimit(10 ** 8)\n"
               'let x = json.loads("[" * 10 ** 6 + "]" * 10 ** 6)\nprint("no crash")\n')
    result = sandbox.run(program)
    assert result.status == "runtime_error", result
    assert result.exit_code is None
    assert "Segmentation fault" in result.stderr
    sandbox.assert_serves_next()


def test_deep_python_recursion_with_raised_limit(sandbox):
    program = ("use sys\nsys.setrecursionlimit(10 ** 8)\n"
               "fn down(n: int) -> int:\n    return down(n + 1) + 1\n"
               "print(down(0))\n")
    result = sandbox.run(program)
    assert result.status in ("runtime_error", "memory", "timeout")
    sandbox.assert_serves_next()


def test_power_tower_is_stopped(sandbox):
    started = time.monotonic()
    result = sandbox.run("let x = 10 ** 10 ** 8\nprint(x > 0)\n")
    assert result.status in ("timeout", "memory")
    assert time.monotonic() - started < 30
    sandbox.assert_serves_next()


def test_many_processes_cannot_exceed_the_worker_memory_group():
    # rlimits bound each process; the worker's memory cgroup bounds them all together
    # (here 128 MiB + headroom): 6 processes x 100 MiB must not all survive.
    from py4.boa.executor import Executor

    program = ("use os\nuse time\nlet kids = []\nfor i in range(1, 6):\n"
               "    let pid = os.fork()\n    if pid == 0:\n"
               "        let block = bytearray(100 * 2 ** 20)\n        time.sleep(2)\n        os._exit(0)\n"
               "    kids.append(pid)\n"
               "let killed = 0\nfor pid in kids:\n    let status = os.waitpid(pid, 0)[1]\n"
               "    if os.WIFSIGNALED(status):\n        killed += 1\n"
               "print(i\"killed {killed}\")\n")
    with Executor(workers=1, timeout_s=8.0, memory_mb=128) as executor:
        if not executor.capabilities["cgroup_limits"]:
            pytest.skip("no cgroup access on this machine")
        result = executor.run(program)
        assert result.status in ("ok", "memory"), result
        if result.status == "ok":
            assert result.stdout != "killed 0\n", result
        assert executor.run('print("next")\n').stdout == "next\n"


def test_stopping_itself_is_a_timeout(sandbox):
    result = sandbox.run("use os\nuse signal\nos.kill(os.getpid(), signal.SIGSTOP)\nprint('resumed')\n")
    assert result.status == "timeout" and result.stdout == ""
    sandbox.assert_serves_next()
