"""Isolation layers on their own: degrading when the kernel refuses, the uid fallback
for killing a run's processes, the seccomp program's shape."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from py4.boa import cgroups, isolation, seccomp

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")


def test_no_mount_namespace_means_no_private_root_and_a_warning():
    caps = isolation.Capabilities(namespaces=["net"])
    isolation.build_sandbox_root(caps, [])
    assert not caps.private_root
    assert any("no mount namespace" in w for w in caps.warnings)


@needs_root
def test_a_refused_namespace_is_recorded_and_the_rest_still_unshared():
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # in a throwaway child: unsharing changes the calling process
        try:
            real = isolation.unshare

            def refuse_net(flags: int) -> None:
                if flags == isolation.CLONE_NEWNET:
                    raise isolation.IsolationError(1, "refused for the test")
                real(flags)

            isolation.unshare = refuse_net
            caps = isolation.Capabilities()
            isolation.isolate_worker(caps)
            os.write(write_end, json.dumps(caps.to_json()).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    os.waitpid(pid, 0)
    caps = json.loads(os.read(read_end, 65536))
    assert "net" not in caps["namespaces"]
    assert {"mount", "ipc", "uts", "pid"} <= set(caps["namespaces"])
    assert any("no net namespace" in w for w in caps["warnings"])


@needs_root
def test_uid_fallback_kills_only_that_uids_processes():
    run_uid, other_uid = 64999, 64998

    def sleeper(uid: int) -> int:
        pid = os.fork()
        if pid == 0:
            os.setgid(uid)
            os.setuid(uid)
            time.sleep(30)
            os._exit(0)
        return pid

    victim, bystander = sleeper(run_uid), sleeper(other_uid)
    time.sleep(0.1)
    try:
        # From a process with no descendants of its own (not PID 1 either), so that only
        # the uid helper acts: the supervisor's descendant sweep would also reach the
        # bystander, which is a child of this test's process.
        caller = os.fork()
        if caller == 0:
            try:
                isolation.kill_everything_else(run_uid)
            finally:
                os._exit(0)
        os.waitpid(caller, 0)
        _, status = os.waitpid(victim, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        assert os.waitpid(bystander, os.WNOHANG) == (0, 0)  # still alive
    finally:
        os.kill(bystander, signal.SIGKILL)
        os.waitpid(bystander, 0)


def test_kill_everything_else_does_nothing_without_a_uid_outside_a_pid_namespace():
    # From a child without descendants: in this process the descendant sweep would kill
    # every worker of the session's executors (pytest's own children).
    caller = os.fork()
    if caller == 0:
        code = 1
        try:
            isolation.kill_everything_else(None)  # must not kill(-1) the machine
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(caller, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0  # we are still here


@pytest.mark.parametrize("arch", seccomp.ARCHITECTURES)
@pytest.mark.parametrize("supervisor", [False, True])
def test_seccomp_program_jumps_stay_inside(arch, supervisor):
    program = seccomp.instructions(arch, supervisor)
    assert len(program) < 4096
    for index, (code, jt, jf, _k) in enumerate(program):
        if code in (seccomp.JEQ_K, seccomp.JGE_K, seccomp.JSET_K):
            assert index + 1 + max(jt, jf) < len(program)
    assert program[-1] == (seccomp.RET_K, 0, 0, seccomp.RET_ALLOW)


def _in_child(body) -> dict:
    """Run ``body()`` (returning a JSON-able value) in a forked child; its value or error."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(write_end, json.dumps({"value": body()}).encode())
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            os.write(write_end, json.dumps({"error": repr(exc)}).encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as fh:
        data = fh.read()
    os.waitpid(pid, 0)
    return json.loads(data)


@needs_root
def test_securebits_that_keep_capabilities_turn_the_inherited_filter_off():
    # Runs inherit a filter that lets mount through only because setuid leaves them no
    # capability; SECBIT_KEEP_CAPS (or NO_SETUID_FIXUP) set by an ancestor breaks that.
    import ctypes

    def with_keep_caps():
        before = isolation.setuid_drops_capabilities()
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.prctl(28, isolation.SECBIT_KEEP_CAPS, 0, 0, 0) == 0  # PR_SET_SECUREBITS
        return [before, isolation.setuid_drops_capabilities()]

    assert _in_child(with_keep_caps) == {"value": [True, False]}


@needs_root
def test_children_of_init_sees_every_child_and_refuses_a_threaded_supervisor():
    def as_pid_one():
        isolation.unshare(isolation.CLONE_NEWPID | isolation.CLONE_NEWNS)
        inner = _in_child(_pid_one_checks)  # the first child is PID 1 of the new namespace
        return inner

    assert _in_child(as_pid_one) == {"value": {"value": [True, False, True, True]}}


def _pid_one_checks():
    import threading

    isolation.mount(None, "/", None, isolation.MS_REC | isolation.MS_PRIVATE)
    isolation.mount("proc", "/proc", "proc")
    children = isolation.ChildrenOfInit.open()
    seen = [children.none()]
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    time.sleep(0.05)
    seen.append(children.none())  # a zombie is still a child
    os.waitpid(pid, 0)
    seen.append(children.none())
    thread = threading.Thread(target=time.sleep, args=(0.2,))
    thread.start()
    seen.append(isolation.ChildrenOfInit.open() is None)  # another thread's children are not listed
    thread.join()
    return seen


@pytest.mark.parametrize(("text", "held"), [
    # cgroup v2: anon + shmem (anon_thp, file and the like are not counted)
    (b"anon 4096\nfile 8192\nkernel 12\nshmem 100\nanon_thp 7\nfile_mapped 9\n", 4196),
    # cgroup v1: rss + shmem, the hierarchy's total_* lines left out
    (b"cache 10\nrss 2048\nrss_huge 5\nshmem 30\ntotal_rss 99\ntotal_shmem 77\n", 2078),
    (b"cache 10\nshmem 30", 30),  # no final newline
    (b"cache 10\n", 0),
])
def test_memory_stat_counts_anonymous_and_shared_memory_only(tmp_path, text, held):
    path = tmp_path / "memory.stat"
    path.write_bytes(text)
    fd = os.open(path, os.O_RDONLY)
    try:
        stat = cgroups.MemoryStat(fd)
        assert stat.held_bytes() == held
        path.write_bytes(b"anon 1\n")  # a shorter file later: nothing of the first read counts
        assert stat.held_bytes() == 1
    finally:
        os.close(fd)
