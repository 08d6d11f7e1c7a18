"""Executor API: statuses, outputs, diagnostics modes, pool behaviour, worker recovery."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest

from py4.boa.executor import STATUSES, TRUNCATION_MARKER, VERDICT_TIMEOUT_S, Executor, RunRequest


@pytest.fixture(scope="module")
def ex():
    with Executor(workers=2, timeout_s=1.0, output_cap=100) as executor:
        yield executor


def test_ok_program(ex):
    result = ex.run("fn add(a: int, b: int) -> int:\n    return a + b\nprint(add(2, 3))\n")
    assert (result.status, result.exit_code, result.stdout, result.stderr) == ("ok", 0, "5\n", "")
    assert result.duration_s > 0
    assert set(result.to_json()) == {"status", "exit_code", "stdout", "stderr", "diagnostics", "duration_s"}


def test_python4_semantics_run(ex):
    result = ex.run("let xs = [10, 20, 30]\nprint(xs[0:1], list(range(1, 3)), last(xs))\n")
    assert result.stdout == "[10, 20] [1, 2, 3] 30\n"


def test_warnings_are_reported_but_do_not_stop_a_run(ex):
    result = ex.run("fn f(x):\n    return x\nprint(f(1))\n")
    assert result.status == "ok" and result.stdout == "1\n"
    assert [d["rule"] for d in result.diagnostics] == ["P4-05"]
    assert result.diagnostics[0]["severity"] == "warning"


def test_compile_error_verbatim_and_generic(ex):
    verbatim = ex.run("def f():\n    pass\n")
    assert verbatim.status == "compile_error" and verbatim.exit_code is None
    assert "P4-01" in verbatim.stderr and any(d["rule"] == "P4-01" for d in verbatim.diagnostics)
    generic = ex.run("def f():\n    pass\n", diagnostics="generic")
    assert generic.stderr == "SyntaxError at line 1\n"
    assert all(d["rule"] is None and d["message"].endswith("at line 1") for d in generic.diagnostics)


def test_runtime_error_traceback_points_at_python4_lines(ex):
    source = "let xs = [1]\n\nfn get(i: int) -> int:\n    return xs[i]\nprint(get(5))\n"
    result = ex.run(source, filename="prog.p4")
    assert result.status == "runtime_error" and result.exit_code == 1
    assert 'File "prog.p4", line 4, in get' in result.stderr
    assert "return xs[i]" in result.stderr  # the Python-4 source line is quoted
    assert "IndexError" in result.stderr
    assert "py4/boa" not in result.stderr and "py4/lang" not in result.stderr


def test_runtime_error_generic_is_squashed(ex):
    result = ex.run('let s = ", ".join(["a", "b"])\n', diagnostics="generic")
    assert result.status == "runtime_error"
    assert result.stderr == "TypeError at line 1\n"  # no message that could teach P4-18


def test_exit_codes(ex):
    assert ex.run("use sys\nsys.exit(0)\n").status == "ok"
    three = ex.run("use sys\nsys.exit(3)\n")
    assert (three.status, three.exit_code) == ("runtime_error", 3)
    message = ex.run('use sys\nsys.exit("bye")\n')
    assert message.exit_code == 1 and message.stderr == "bye\n"


def test_output_cap_and_marker(ex):
    result = ex.run('print("y" * 500)\n')
    assert result.status == "output_limit"
    assert result.stdout == "y" * 100 + TRUNCATION_MARKER


def test_output_at_cap_is_not_truncated(ex):
    result = ex.run('use sys\nsys.stdout.write("z" * 100)\n')
    assert result.status == "ok" and result.stdout == "z" * 100


def test_per_run_timeout_override(ex):
    result = ex.run("use time\ntime.sleep(5)\n", timeout_s=0.3)
    assert result.status == "timeout" and "timed out after 0.3 s" in result.stderr, result


def test_statuses_are_from_the_contract(ex):
    sources = ["pass\n", "throw ValueError()\n", "while true:\n    pass\n", "def x(): pass\n",
               "let v = [0] * (10 ** 10)\n", 'print("q" * 1000)\n']
    results = ex.run_many(sources)
    assert [r.status for r in results] == ["ok", "runtime_error", "timeout", "compile_error", "memory",
                                           "output_limit"]
    assert all(r.status in STATUSES for r in results)


def test_run_many_keeps_order_and_uses_all_workers(ex):
    sources = [f"print({i})\n" for i in range(30)]
    results = ex.run_many(sources)
    assert [r.stdout for r in results] == [f"{i}\n" for i in range(30)]
    # Both workers at once, not one after the other: each worker runs programs as its own
    # uid, so two busy loops dispatched together report two uids (no wall-clock bound).
    loop = "use os\nprint(os.getuid(), flush=true)\nwhile true:\n    pass\n"
    results = ex.run_many([RunRequest(loop, timeout_s=0.5), RunRequest(loop, timeout_s=0.5)])
    assert [r.status for r in results] == ["timeout", "timeout"]
    assert len({r.stdout for r in results}) == 2, results


def test_pathological_run_delays_no_other(ex):
    slow = threading.Thread(target=ex.run, args=("while true:\n    pass\n",), kwargs={"timeout_s": 5.0})
    slow.start()
    time.sleep(0.05)
    quick = [ex.run(f"print({i})\n") for i in range(5)]
    # Served by the other worker while the loop runs: all done before the loop's own
    # deadline, which is 5 s away (an ordering, not a wall-clock bound on the quick runs).
    still_looping = slow.is_alive()
    slow.join()
    assert [r.stdout for r in quick] == [f"{i}\n" for i in range(5)]
    assert still_looping


def test_bytes_and_bad_input(ex):
    assert ex.run(b'print("bytes")\n').stdout == "bytes\n"
    assert ex.run(b"print('\xff')\n").status == "compile_error"
    with pytest.raises(ValueError):
        ex.run("pass\n", diagnostics="loud")


def test_run_takes_no_stdin(ex):
    """A program's stdin is /dev/null: run() has no stdin to take (it once took one and dropped it)."""
    with pytest.raises(TypeError, match="stdin"):
        ex.run("print(input())\n", stdin="never delivered")
    result = ex.run('let line = input()\nprint("got", line)\n')
    assert result.status == "runtime_error"
    assert "EOFError" in result.stderr


def test_capabilities_recorded(ex):
    caps = ex.capabilities
    assert set(caps) >= {"namespaces", "private_root", "scratch_tmpfs", "drop_privileges", "seccomp", "warnings"}
    if sys.platform == "linux" and os.geteuid() == 0:
        assert {"mount", "pid", "net", "ipc", "uts"} <= set(caps["namespaces"])
        assert caps["private_root"] and caps["drop_privileges"]


def _supervisor_pid(worker) -> int:
    outer = worker.proc.pid
    with open(f"/proc/{outer}/task/{outer}/children") as fh:
        return int(fh.read().split()[0])


def test_lost_worker_is_replaced():
    with Executor(workers=1, timeout_s=1.0) as executor:
        worker = executor._workers[0]
        os.killpg(worker.proc.pid, signal.SIGKILL)
        time.sleep(0.05)
        result = executor.run('print("after")\n')
        assert result.status in ("ok", "killed")
        assert executor.run('print("again")\n').stdout == "again\n"


def test_worker_lost_during_its_clean_up_is_replaced():
    # After a run the next child's hand-over is the worker's "clean" verdict; a worker
    # that dies before (or right after) handing it over must be replaced, not trusted.
    with Executor(workers=1, timeout_s=1.0) as executor:
        for delay in (0.0, 0.05):
            assert executor.run("pass\n").status == "ok"
            time.sleep(delay)
            os.killpg(executor._workers[0].proc.pid, signal.SIGKILL)
            assert executor.run('print("after")\n').status in ("ok", "killed")
            assert executor.run('print("again")\n').stdout == "again\n"


def test_worker_replaced_inside_run_many_survives_the_pool_thread():
    with Executor(workers=1, timeout_s=1.0) as executor:
        os.killpg(executor._workers[0].proc.pid, signal.SIGKILL)
        time.sleep(0.05)
        executor.run_many(["pass\n"])  # the replacement is started from a pool thread
        time.sleep(0.1)  # that thread has exited by now
        result = executor.run('print("alive")\n')
        assert result.status == "ok" and result.stdout == "alive\n"


def test_plain_recursion_error_is_a_runtime_error(ex):
    result = ex.run("fn down(n: int) -> int:\n    return down(n + 1)\ndown(0)\n")
    assert result.status == "runtime_error" and "RecursionError" in result.stderr
    assert "Previous line repeated" in result.stderr


def test_a_run_interrupted_in_the_caller_leaves_a_working_executor(monkeypatch):
    # Ctrl-C while waiting for a run: the worker is mid-run with nobody watching; the next
    # run replaces it instead of failing.
    from py4.boa import run_watch

    with Executor(workers=1) as executor:
        real_wait = run_watch.RunWatch.wait

        def interrupted(self, *args):
            raise KeyboardInterrupt

        monkeypatch.setattr(run_watch.RunWatch, "wait", interrupted)
        with pytest.raises(KeyboardInterrupt):
            executor.run("use time\ntime.sleep(10)\n")
        monkeypatch.setattr(run_watch.RunWatch, "wait", real_wait)
        assert executor.run('print("after")\n').stdout == "after\n"


def test_many_runs_leave_no_reply_behind():
    # The executor answers a run when its harness reports the end; the supervisor's own
    # reply for it comes later and is dropped by the next run. 1,000 runs on one worker
    # (more replies than its pipe holds) must not fill the pipe: the worker would hang
    # and be replaced.
    with Executor(workers=1) as executor:
        pid = executor._workers[0].proc.pid
        for _ in range(1000):
            assert executor.run("pass\n").status == "ok"
        assert executor._workers[0].proc.pid == pid


def _watch_outcomes(monkeypatch) -> list:
    """What each run's ``RunWatch.wait`` returned (None: the parent's backstop ended it)."""
    from py4.boa import run_watch

    outcomes, real_wait = [], run_watch.RunWatch.wait

    def recording(self, started, backstop_s):
        outcomes.append(real_wait(self, started, backstop_s))
        return outcomes[-1]

    monkeypatch.setattr(run_watch.RunWatch, "wait", recording)
    return outcomes


# Without the parent's backstop the run below never ends: the tests rely on the mechanism's
# traces (the watch gave up, the worker was replaced), not on elapsed time, and pytest's
# timeout (pyproject) turns a hang into a failure.
@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs /proc")
def test_hung_worker_hits_the_parent_backstop(monkeypatch):
    outcomes = _watch_outcomes(monkeypatch)
    with Executor(workers=1, timeout_s=0.2) as executor:
        worker = executor._workers[0]
        hung = worker.proc
        supervisor = _supervisor_pid(worker)
        os.kill(supervisor, signal.SIGSTOP)  # the worker can no longer enforce anything
        result = executor.run("use os\nos._exit(0)\n")  # only the supervisor can report this end
        assert outcomes == [None]  # the watch gave up at the backstop: no reply came
        assert (result.status, result.exit_code) == ("killed", None)
        assert result.stderr == "boa: the run's worker was lost and replaced\n"
        assert hung.returncode is not None and worker.proc is not hung  # killed and replaced
        assert executor.run('print("fresh")\n').stdout == "fresh\n"


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs /proc")
def test_hung_worker_is_replaced_before_its_next_run():
    with Executor(workers=1, timeout_s=0.2) as executor:
        supervisor = _supervisor_pid(executor._workers[0])
        os.kill(supervisor, signal.SIGSTOP)
        # The child prepared before the hang runs and reports its own end: an honest result.
        assert executor.run('print("prepared")\n').stdout == "prepared\n"
        hung = executor._workers[0].proc
        started = time.monotonic()
        # The worker never hands its next child over: it is replaced, and the run goes to
        # the fresh worker.
        assert executor.run('print("fresh")\n').stdout == "fresh\n"
        assert time.monotonic() - started >= VERDICT_TIMEOUT_S  # it was given its time first
        assert hung.returncode is not None and executor._workers[0].proc is not hung


def test_python3_dialect_and_closed_executor():
    executor = Executor(workers=1, dialect="python3")
    with executor:
        assert executor.run("print(sum(range(4)))\n").stdout == "6\n"
    with pytest.raises(RuntimeError):
        executor.run("print(1)\n")


def test_isolation_off_is_recorded():
    with Executor(workers=1, isolate=False) as executor:
        assert "isolation disabled by configuration" in executor.capabilities["warnings"]
        assert executor.run('print("plain")\n').stdout == "plain\n"


def test_threads_and_atexit_finish_like_python():
    # Plain Python 3: threading is outside a Python-4 program's capability set; the
    # harness ends every run as the interpreter would.
    source = ("import threading, atexit, time\n"
              "def late():\n    time.sleep(0.05)\n    print(\"thread done\")\n"
              "atexit.register(lambda: print(\"atexit ran\"))\n"
              "threading.Thread(target=late).start()\nprint(\"main done\")\n")
    with Executor(workers=1, dialect="python3") as python3:
        result = python3.run(source)
        assert result.status == "ok", result
        assert result.stdout == "main done\nthread done\natexit ran\n"


def test_mixed_hostile_batch_keeps_every_result_with_its_program():
    kinds = {
        "ok": ("print({i})\n", "ok"),
        "error": ("let xs = [{i}]\nprint(xs[{i} + 1])\n", "runtime_error"),
        "loop": ("let n = {i}\nwhile true:\n    n += 1\n", "timeout"),
        "memory": ("let v = [{i}] * (10 ** 10)\n", "memory"),
        "spam": ('while true:\n    print("{i}" * 100)\n', "output_limit"),
        "forks": ("use os\nfor k in range(1, 5):\n    if os.fork() == 0:\n        os._exit(0)\nprint({i})\n", "ok"),
    }
    names = list(kinds) * 6
    sources = [kinds[name][0].format(i=i) for i, name in enumerate(names)]
    with Executor(workers=2, timeout_s=0.3, output_cap=200) as executor:
        results = executor.run_many(sources)
    for i, (name, result) in enumerate(zip(names, results, strict=True)):
        assert result.status == kinds[name][1], (i, name, result)
        if name in ("ok", "forks"):
            assert result.stdout == f"{i}\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="as root, forces the path a non-root user always takes")
def test_user_namespace_mode_degrades_with_warnings():
    with Executor(workers=1, timeout_s=0.5, user_namespace=True) as executor:
        caps = executor.capabilities
        assert "user" in caps["namespaces"] and not caps["drop_privileges"]
        assert "programs run with the worker's own uid" in caps["warnings"]
        assert executor.run("print(6 * 7)\n").stdout == "42\n"
        assert executor.run("while true:\n    pass\n").status == "timeout"
        escape = executor.run("use os\nprint(os.path.exists('/work'), os.path.exists('/root/.bashrc'))\n")
        assert escape.stdout == "False False\n"


def test_compile_cache_returns_independent_results():
    from py4.boa import frontend

    first = frontend.compile_source("fn f(x):\n    return x\n", "c.p4")
    first.diagnostics.clear()
    first.rules_exercised.append("P4-99")
    again = frontend.compile_source("fn f(x):\n    return x\n", "c.p4")
    assert [d.rule for d in again.diagnostics] == ["P4-05"] and "P4-99" not in again.rules_exercised
    assert again.code is first.code  # the compiled code itself is shared (immutable)
    with pytest.raises(ValueError):
        frontend.compile_source("pass\n", dialect="cobol")


def test_warm_up_leaves_nothing_for_the_program():
    # The prepared child walks a run's path with a throwaway no-op job before its own
    # job arrives; none of it may be visible to the program (looked for with gc: plain
    # Python 3, which gets the same warm-up; gc is outside Python-4's capability set).
    source = ('import linecache, gc, sys\n'
              'leftovers = [o for o in gc.get_objects() '
              'if type(o) is dict and o.get("__file__") == "<boa-warm-up>"]\n'
              'print("<boa-warm-up>" in linecache.cache, len(leftovers), sorted(globals())[:3])\n'
              'print(list(sys.modules).count("__main__"))\n')
    with Executor(workers=1, dialect="python3") as python3:
        result = python3.run(source, filename="main.p4")
        assert result.status == "ok", result
        first, second = result.stdout.splitlines()
        assert first.startswith("False 0 "), result.stdout
        listed = python3.run('import linecache\nprint(list(linecache.cache))\n', filename="main.p4")
        assert "main.p4" in listed.stdout


def test_output_written_just_before_the_end_is_complete():
    # The supervisor answers as soon as the harness says the run is over; everything the
    # program wrote before that must be in the reply (more than a pipe holds).
    with Executor(workers=1, output_cap=300_000) as executor:
        for _ in range(3):
            result = executor.run('let line = "x" * 999\nfor i in range(1, 200):\n    print(line)\n'
                                  'use sys\nsys.stderr.write("e" * 70000)\n')
            assert result.status == "ok", result.stderr[-200:]
            assert result.stdout == ("x" * 999 + "\n") * 200 and result.stderr == "e" * 70000


def test_host_scratch_is_removed_when_the_executor_closes():
    # Without a private root a run's scratch is a host directory: it must not outlive
    # the executor (killed workers cannot remove it themselves).
    with Executor(workers=1, isolate=False) as executor:
        result = executor.run('use os\nwith open("left.txt", "w") as fh:\n    fh.write("x")\nprint(os.getcwd())\n')
        scratch = result.stdout.strip()
        assert os.path.basename(scratch).startswith("boa-scratch-") and os.path.isdir(scratch)
        assert executor.run('use os\nprint(os.listdir("."))\n').stdout == "[]\n"
    assert not os.path.exists(scratch)


def test_result_channel_larger_than_its_pipe(ex):
    # A report of several MiB does not fit in the result channel's pipe: the executor
    # must start reading the channel during the run, or the child would block for good.
    result = ex.run('throw ValueError("v" * 3000000)\n', timeout_s=5.0)
    assert result.status == "runtime_error" and result.exit_code == 1, result.stderr[-300:]
    assert result.stderr.endswith("v" * 100 + "\n") and "traceback truncated" in result.stderr


def test_a_forked_copy_reaching_the_end_does_not_end_the_run(ex):
    # Both copies of a forked program run the harness's end; only the run's own process
    # may report that the run is over.
    source = ('use os\nuse sys\nuse time\n'
              'let pid = os.fork()\n'
              'if pid == 0:\n    print("child", flush=true)\n    sys.exit(3)\n'
              'let status = os.waitpid(pid, 0)[1]\n'
              'time.sleep(0.05)\n'
              'print("parent saw", os.waitstatus_to_exitcode(status))\n')
    result = ex.run(source)
    assert (result.status, result.exit_code) == ("ok", 0), result
    assert result.stdout == "child\nparent saw 3\n", result
