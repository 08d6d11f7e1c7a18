"""Kernel state between runs: run A, then run B on the same worker.

Each test is one attack: run A leaves something in the kernel (SysV shared memory, a
message queue, a semaphore, an abstract Unix socket name, the scratch directory's
timestamps, inode counter or birth time, the PID counter, memory charged to the worker's cgroup), run B looks for
it; or a run takes a lock on a file of the shared read-only root, which any other run
(or the host) could see. Runs are plain Python 3 with ctypes: the layers below must hold
for whatever code a run manages to execute. Before the fix, every attack got through.
"""

from __future__ import annotations

import fcntl
import os
import platform

import pytest

from py4.boa.executor import Executor

pytestmark = pytest.mark.security

KEY = 0x0B0A5EC3  # a SysV key run A uses and run B looks up
LIBC = "import ctypes, ctypes.util\nlibc = ctypes.CDLL(None, use_errno=True)\n"


@pytest.fixture
def executor():
    """A fresh one-worker executor per attack: run A and run B share its worker."""
    with Executor(workers=1, timeout_s=5.0, output_cap=4096, dialect="python3") as ex:
        yield ex


def _ok(result) -> str:
    assert result.status == "ok", result
    return result.stdout


def test_sysv_shared_memory_does_not_reach_the_next_run(executor):
    _ok(executor.run(LIBC + (
        f"shm = libc.shmget({KEY}, 4096, 0o1666)\n"  # IPC_CREAT | 0666
        "if shm >= 0:\n"  # (refused by the seccomp filter; without it, made)
        "    libc.shmat.restype = ctypes.c_void_p\n"
        "    addr = libc.shmat(shm, None, 0)\n"
        "    ctypes.memmove(addr, b'SECRET-FROM-A', 13)\n"
        "print(shm >= 0)\n")))
    out = _ok(executor.run(LIBC + (
        f"shm = libc.shmget({KEY}, 0, 0)\n"
        "if shm < 0:\n    print('NONE')\nelse:\n"
        "    libc.shmat.restype = ctypes.c_void_p\n"
        "    print(ctypes.string_at(libc.shmat(shm, None, 0), 13))\n")))
    assert out == "NONE\n", out


def test_sysv_message_queue_does_not_reach_the_next_run(executor):
    _ok(executor.run(LIBC + (
        f"q = libc.msgget({KEY}, 0o1666)\n"
        "msg = ctypes.create_string_buffer(b'\\x01\\0\\0\\0\\0\\0\\0\\0SECRET', 14)\n"
        "print(libc.msgsnd(q, msg, 6, 0))\n")))
    out = _ok(executor.run(LIBC + f"print('NONE' if libc.msgget({KEY}, 0) < 0 else 'FOUND')\n"))
    assert out == "NONE\n", out


def test_sysv_semaphore_does_not_reach_the_next_run(executor):
    _ok(executor.run(LIBC + (
        f"sem = libc.semget({KEY}, 1, 0o1666)\n"
        "print(libc.semctl(sem, 0, 16, 42))\n")))  # SETVAL 42
    out = _ok(executor.run(LIBC + (
        f"sem = libc.semget({KEY}, 1, 0)\n"
        "print('NONE' if sem < 0 else libc.semctl(sem, 0, 12))\n")))  # GETVAL
    assert out == "NONE\n", out


def test_abstract_socket_name_does_not_reach_the_next_run(executor):
    # Run A keeps its socket alive after death: the socket's own descriptor is in flight
    # in its own receive queue, a cycle only the kernel's unix garbage collector breaks.
    _ok(executor.run(
        "import array, socket\n"
        "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
        "s.bind('\\0boa-state-channel')\n"
        "fds = array.array('i', [s.fileno()])\n"
        "s.sendmsg([b'x'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)], 0, '\\0boa-state-channel')\n"
        "print('LEFT')\n"))
    out = _ok(executor.run(
        "import socket\n"
        "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
        "try:\n    s.connect('\\0boa-state-channel')\n    print('FOUND')\n"
        "except OSError as exc:\n    print('NONE')\n"))
    assert out == "NONE\n", out


def test_scratch_timestamps_do_not_reach_the_next_run(executor):
    fresh = _ok(executor.run("import os\nprint(os.stat('.').st_mtime_ns)\n"))
    _ok(executor.run("import os\nos.utime('.', ns=(123456789000000000, 987654321000000000))\nprint('SET')\n"))
    out = _ok(executor.run("import os\nst = os.stat('.')\nprint(st.st_atime_ns, st.st_mtime_ns)\n"))
    assert "123456789000000000" not in out and "987654321000000000" not in out, out
    assert out.split()[1] != fresh.strip() or fresh.strip() != "987654321000000000"


def test_pid_counter_does_not_reach_the_next_run(executor):
    first = _ok(executor.run("import os\nprint(os.getpid())\n"))
    _ok(executor.run(
        "import os\n"
        "for _ in range(20):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n        os._exit(0)\n"
        "    os.waitpid(pid, 0)\n"
        "print('FORKED')\n"))
    after = _ok(executor.run("import os\nprint(os.getpid())\n"))
    assert after == first, (first, after)


def test_sysv_and_posix_ipc_objects_cannot_be_made(executor):
    # Objects that outlive their maker are refused outright (seccomp), so no run can leave
    # one (or an advanced id counter) for the next, and runs need no IPC namespace each
    # (before: each run made its objects in a namespace of its own, ~0.22 ms of CPU).
    out = _ok(executor.run(LIBC + (
        "libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]\n"
        "made = [libc.shmget(0, 4096, 0o1600), libc.msgget(0, 0o1600),\n"
        "        libc.semget(0, 1, 0o1600), libc.mq_open(b'/boa', 0o100 | 2, 0o600, None)]\n"
        "print(made, ctypes.get_errno())\n")))
    assert out == "[-1, -1, -1, -1] 1\n", out  # EPERM


def test_without_seccomp_each_run_has_an_ipc_namespace_of_its_own():
    # Where the filter is missing (another architecture, or refused), runs can make IPC
    # objects, and each run makes them in a namespace that dies with it.
    with Executor(workers=1, timeout_s=5.0, dialect="python3", seccomp=False) as ex:
        assert ex.capabilities["run_ipc_namespace"]
        assert _ok(ex.run(LIBC + f"print(libc.shmget({KEY}, 4096, 0o1666) >= 0)\n")) == "True\n"
        out = _ok(ex.run(LIBC + f"print('NONE' if libc.shmget({KEY}, 0, 0) < 0 else 'FOUND')\n"))
        assert out == "NONE\n", out


def test_pinned_shared_memory_is_not_charged_to_later_runs():
    # Run A tries to leave 250 MiB of touched SysV shared memory with no process attached
    # (refused now: see above; without the seccomp filter it can, in a namespace of its
    # own); the worker's memory group allows 256 + 96 MiB, so an honest 100 MiB run after
    # it must still fit. Before: every later run returned `memory`, and the worker counted
    # as clean.
    with Executor(workers=1, timeout_s=10.0, memory_mb=256, dialect="python3") as ex:
        pinned = _ok(ex.run(LIBC + (
            "libc.shmat.restype = ctypes.c_void_p\n"
            "size = 50 * 2**20\n"
            "made = 0\n"
            "for i in range(5):\n"
            "    shm = libc.shmget(0, size, 0o1600)\n"  # IPC_PRIVATE | IPC_CREAT
            "    addr = libc.shmat(shm, None, 0)\n"
            "    if addr in (None, ctypes.c_void_p(-1).value):\n        break\n"
            "    ctypes.memset(addr, 1, size)\n"
            "    libc.shmdt(ctypes.c_void_p(addr))\n"
            "    made += 1\n"
            "print(made)\n")))
        assert pinned == "0\n", pinned  # refused by the seccomp filter
        for _ in range(3):
            out = ex.run("data = bytearray(100 * 2**20)\nfor i in range(0, len(data), 4096):\n"
                         "    data[i] = 1\nprint(len(data) // 2**20)\n")
            assert out.status == "ok" and out.stdout == "100\n", out


def test_lock_on_the_shared_root_is_refused(executor):
    # A lock on a file every worker (and the host) can open is a channel between
    # concurrent runs: this test process holds one; the run must neither see nor take it.
    with open(os.__file__, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        out = _ok(executor.run(
            "import fcntl, os\n"
            "with open(os.__file__, 'rb') as fh:\n"
            "    for name, take in (('flock', lambda: fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)),\n"
            "                       ('lockf', lambda: fcntl.lockf(fh, fcntl.LOCK_SH | fcntl.LOCK_NB))):\n"
            "        try:\n            take()\n            print(name, 'TAKEN')\n"
            "        except BlockingIOError:\n            print(name, 'SEES HOLDER')\n"
            "        except PermissionError:\n            print(name, 'REFUSED')\n"))
    assert out == "flock REFUSED\nlockf REFUSED\n", out


def test_inotify_on_the_shared_root_is_refused(executor):
    # A watch on a file of the shared root would see every other run open it.
    out = _ok(executor.run(LIBC + (
        "fd = libc.inotify_init1(0)\n"
        "print('REFUSED' if fd < 0 and ctypes.get_errno() == 1 else 'WATCHING')\n")))
    assert out == "REFUSED\n", out


FRESH_FILE_INODE = (  # the inode number the scratch tmpfs gives a new file
    "import os\n"
    "with open('probe', 'w') as fh:\n"
    "    print(os.fstat(fh.fileno()).st_ino)\n")


def _unnamed_files(count: int) -> str:
    # O_TMPFILE: a file with no name, gone at close; it leaves no entry, block or inode
    # in use, but the tmpfs inode counter has moved on by one.
    return ("import os\n"
            f"for _ in range({count}):\n"
            "    os.close(os.open('.', os.O_TMPFILE | os.O_WRONLY, 0o600))\n"
            "print('MADE')\n")


def test_scratch_inode_counter_does_not_reach_the_next_run(executor):
    # Run A encodes a number in how many unnamed files it makes; run B reads it back from
    # the inode number of a file of its own. Before: the tmpfs was kept when it looked
    # untouched, and A making 0, 17, 0, 5 files left B seeing inode 2, 19, 2, 7.
    seen = []
    for count in (0, 17, 0, 5):
        _ok(executor.run(_unnamed_files(count)))
        seen.append(_ok(executor.run(FRESH_FILE_INODE)))
    assert len(set(seen)) == 1, seen


SCRATCH_BIRTH = LIBC + (  # the scratch root's birth time (which only a new tmpfs changes)
    "import struct\n"
    "buf = ctypes.create_string_buffer(256)\n"
    "assert libc.statx(-100, b'.', 0, 0x800, buf) == 0\n"  # AT_FDCWD, STATX_BTIME
    "assert struct.unpack_from('I', buf.raw, 0)[0] & 0x800\n"
    "print('%d.%09d' % struct.unpack_from('qI', buf.raw, 80))\n"
    # A tmpfs's birth time comes from the kernel's coarse clock (one tick: 1-10 ms); the
    # run lasts longer than a tick, so two scratches made one run apart never share it.
    "import time\ntime.sleep(0.03)\n")


def test_every_run_gets_a_scratch_no_earlier_run_touched(executor):
    # The birth time tells a new tmpfs from a kept one (utime cannot reset it), so a run
    # that left the scratch untouched and one that wrote to it both hand the next run a
    # new one. Before: an untouched scratch was kept, and its birth time said whether the
    # run before had written anything (one bit per run).
    births = [_ok(executor.run(SCRATCH_BIRTH))]
    births.append(_ok(executor.run(SCRATCH_BIRTH)))  # after an untouched scratch
    _ok(executor.run("open('x', 'w').write('used')\nprint('WROTE')\n"))
    births.append(_ok(executor.run(SCRATCH_BIRTH)))  # after a used one
    assert len(set(births)) == len(births), births


# ----------------------------------------------------------------------------- host identity

def test_proc_cmdline_and_boot_id_are_masked(sandbox):
    # The host's boot line and this boot's id are the same for every run of the machine.
    result = sandbox.run(
        "use os\n"
        "for path in ['/proc/cmdline', '/proc/sys/kernel/random/boot_id']:\n"
        "    with open(path) as fh:\n"
        "        print(path, repr(fh.read()))\n")
    assert result.status == "ok", result
    assert result.stdout == "/proc/cmdline ''\n/proc/sys/kernel/random/boot_id ''\n", result
    sandbox.assert_serves_next()


def test_cgroup_path_names_no_executor_pid(sandbox):
    result = sandbox.run("with open('/proc/self/cgroup') as fh:\n    print(fh.read())\n")
    assert result.status == "ok", result
    assert f"boa-{os.getpid()}-" not in result.stdout and str(os.getpid()) not in result.stdout, result
    sandbox.assert_serves_next()


# ----------------------------------------------------------------------------- page cache, dnotify
# The read-only root is shared by every worker: what the kernel keeps about its files (the
# page cache, watches) would carry bits from one run to another without any timing.
SHARED_FILE = "/usr/lib/os-release"


def test_fadvise_dontneed_cannot_write_the_page_cache(sandbox):
    result = sandbox.run(
        "use os\n"
        f"let fd = os.open({SHARED_FILE!r}, os.O_RDONLY)\n"
        "try:\n    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)\n    print('advised')\n"
        "catch OSError as exc:\n    print('refused', exc.errno)\n")
    assert result.status == "ok" and result.stdout == "refused 1\n", result
    sandbox.assert_serves_next()


def test_preadv2_nowait_cannot_read_the_page_cache(sandbox):
    result = sandbox.run(
        "use os\n"
        f"let fd = os.open({SHARED_FILE!r}, os.O_RDONLY)\n"
        "let buffer = bytearray(4096)\n"
        "try:\n    print('read', os.preadv(fd, [buffer], 0, os.RWF_NOWAIT))\n"
        "catch OSError as exc:\n    print('refused', exc.errno)\n"
        "print('plain', os.preadv(fd, [buffer], 0) > 0)\n")
    assert result.status == "ok" and result.stdout == "refused 1\nplain True\n", result
    sandbox.assert_serves_next()


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86_64 syscall numbers")
def test_mincore_and_readahead_are_refused(python3_sandbox):
    # (Plain Python 3 through ctypes: a Python-4 program cannot load ctypes at all.)
    result = python3_sandbox.run(
        "import ctypes, mmap, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        f"fd = os.open({SHARED_FILE!r}, os.O_RDONLY)\n"
        "m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)\n"
        "page = ctypes.c_char.from_buffer_copy(b'x')\n"
        "vec = ctypes.create_string_buffer(16)\n"
        "addr = ctypes.addressof(page)\n"
        "syscall = libc.syscall\n"
        "print(syscall(27, ctypes.c_void_p(addr & ~4095), ctypes.c_size_t(4096), vec), ctypes.get_errno())\n"
        "print(syscall(187, fd, ctypes.c_long(0), ctypes.c_size_t(4096)), ctypes.get_errno())\n")
    assert result.status == "ok" and result.stdout == "-1 1\n-1 1\n", result


def test_dnotify_f_notify_is_refused(python3_sandbox):
    result = python3_sandbox.run(
        "import fcntl, os\nfd = os.open('/usr', os.O_RDONLY)\n"
        "try:\n    fcntl.fcntl(fd, fcntl.F_NOTIFY, fcntl.DN_ACCESS | fcntl.DN_MULTISHOT)\n    print('watching')\n"
        "except OSError as exc:\n    print('refused', exc.errno)\n")
    assert result.status == "ok" and result.stdout == "refused 1\n", result


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86_64 syscall numbers")
def test_fanotify_is_refused(python3_sandbox):
    result = python3_sandbox.run(
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "print(libc.syscall(300, 0, 0), ctypes.get_errno())\n")  # fanotify_init
    assert result.status == "ok" and result.stdout == "-1 1\n", result
