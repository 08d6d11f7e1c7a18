"""A small seccomp-BPF filter for run children (x86_64 only), built with raw ctypes.

Defence in depth on top of namespaces and the unprivileged uid: the syscalls a program
never needs and that widen the kernel's attack surface fail with EPERM — namespace
creation (``unshare``, ``setns``, ``clone`` with namespace flags), mounts, ``ptrace`` and
cross-process memory access, BPF, perf, keyrings, io_uring, userfaultfd, module and
kexec loading. Sockets are allowed only for ``AF_UNIX`` (the network namespace already
has no usable interface). File locks and leases (``flock``, ``fcntl`` lock and lease
commands) and inotify are refused too: the read-only root is shared by every worker (and
the host), so a lock held on one of its files, or the open of one watched with inotify,
would be a channel between concurrent runs. SysV IPC (shared memory, message queues,
semaphores) and POSIX message queues are refused: objects that outlive the process that
made them, which a run could leave for the next (nothing in Python's standard library
uses them); without this filter each run gets an IPC namespace of its own instead.
``clone3`` answers ENOSYS so that libc falls back to ``clone``,
whose flags the filter can inspect. Any other architecture's syscall kills the process.

Where runs drop privileges (a root worker hands each run a uid of its own), the worker's
supervisor installs the filter once, on itself, and every run's child inherits it:
installing a filter costs ~0.1-0.3 ms of CPU per process (the kernel compiles it and
precomputes which syscalls it always allows), a tenth of a run's whole cycle. The
supervisor still mounts each run's scratch tmpfs, so its filter (``supervisor=True``)
lets ``mount`` and ``umount2`` through; a run cannot use them all the same, because it
holds no capability (its uid is not root) and cannot get one (making a user namespace
is refused). Where runs keep the worker's uid, each child installs the whole filter.
"""

from __future__ import annotations

import ctypes
import errno
import platform

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
RET_ALLOW, RET_KILL_PROCESS, RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
LD_W_ABS, JEQ_K, JGE_K, JSET_K, RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
OFFSET_NR, OFFSET_ARCH, OFFSET_ARG0, OFFSET_ARG1 = 0, 4, 16, 24

SYS_CLONE, SYS_CLONE3, SYS_SOCKET, SYS_FCNTL = 56, 435, 41, 72
# fcntl commands refused: F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK,
# F_OFD_SETLKW, F_SETLEASE (F_GETLK too: it would show another run's lock).
FCNTL_LOCK_COMMANDS = (5, 6, 7, 36, 37, 38, 1024)
AF_UNIX = 1
NAMESPACE_FLAGS = 0x00020000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x02000000

DENIED = {  # x86_64 syscall numbers
    "flock": 73, "inotify_init": 253, "inotify_add_watch": 254, "inotify_init1": 294,
    "ptrace": 101, "syslog": 103, "personality": 135, "pivot_root": 155, "adjtimex": 159,
    "chroot": 161, "acct": 163, "settimeofday": 164, "mount": 165, "umount2": 166, "swapon": 167,
    "swapoff": 168, "reboot": 169, "init_module": 175, "delete_module": 176, "quotactl": 179,
    "lookup_dcookie": 212, "clock_settime": 227, "kexec_load": 246, "add_key": 248,
    "request_key": 249, "keyctl": 250, "unshare": 272, "perf_event_open": 298,
    "fanotify_init": 300, "name_to_handle_at": 303, "open_by_handle_at": 304, "setns": 308,
    "process_vm_readv": 310, "process_vm_writev": 311, "finit_module": 313,
    "kexec_file_load": 320, "bpf": 321, "userfaultfd": 323, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
    "shmget": 29, "shmat": 30, "shmctl": 31, "semget": 64, "semop": 65, "semctl": 66,
    "shmdt": 67, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "semtimedop": 220,
    "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243,
    "mq_notify": 244, "mq_getsetattr": 245,
}


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                ("k", ctypes.c_uint)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]


_libc = ctypes.CDLL(None, use_errno=True)
_PROGRAMS: dict[bool, tuple] = {}  # supervisor? -> (array, fprog), built once in the worker
SUPERVISOR_ALLOWED = ("mount", "umount2")  # see the module's docstring


def _instructions(supervisor: bool = False) -> list[tuple[int, int, int, int]]:
    eperm = RET_ERRNO | errno.EPERM
    prog = [
        (LD_W_ABS, 0, 0, OFFSET_ARCH),
        (JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        (RET_K, 0, 0, RET_KILL_PROCESS),
        (LD_W_ABS, 0, 0, OFFSET_NR),
        (JGE_K, 0, 1, X32_SYSCALL_BIT),
        (RET_K, 0, 0, RET_KILL_PROCESS),
        (JEQ_K, 0, 1, SYS_CLONE3),
        (RET_K, 0, 0, RET_ERRNO | errno.ENOSYS),
        # clone: refuse namespace flags (flags are the first argument's low 32 bits)
        (JEQ_K, 0, 4, SYS_CLONE),
        (LD_W_ABS, 0, 0, OFFSET_ARG0),
        (JSET_K, 0, 1, NAMESPACE_FLAGS),
        (RET_K, 0, 0, eperm),
        (RET_K, 0, 0, RET_ALLOW),
        # socket: AF_UNIX only
        (JEQ_K, 0, 4, SYS_SOCKET),
        (LD_W_ABS, 0, 0, OFFSET_ARG0),
        (JEQ_K, 1, 0, AF_UNIX),
        (RET_K, 0, 0, RET_ERRNO | errno.EAFNOSUPPORT),
        (RET_K, 0, 0, RET_ALLOW),
    ]
    # fcntl: refuse the lock and lease commands (the second argument)
    commands = FCNTL_LOCK_COMMANDS
    prog += [(JEQ_K, 0, len(commands) + 3, SYS_FCNTL), (LD_W_ABS, 0, 0, OFFSET_ARG1)]
    prog += [(JEQ_K, len(commands) - i, 0, cmd) for i, cmd in enumerate(commands)]
    prog += [(RET_K, 0, 0, RET_ALLOW), (RET_K, 0, 0, eperm)]
    denied = {name: number for name, number in DENIED.items()
              if not (supervisor and name in SUPERVISOR_ALLOWED)}
    for number in sorted(denied.values()):
        prog += [(JEQ_K, 0, 1, number), (RET_K, 0, 0, eperm)]
    prog.append((RET_K, 0, 0, RET_ALLOW))
    return prog


def build_filter(supervisor: bool = False) -> tuple:
    """Build the filter once (in the worker); raises OSError on an unsupported machine."""
    if platform.machine() != "x86_64":
        raise OSError(errno.ENOSYS, f"seccomp filter is written for x86_64, not {platform.machine()}")
    if supervisor not in _PROGRAMS:
        instructions = _instructions(supervisor)
        array = (SockFilter * len(instructions))(*[SockFilter(*ins) for ins in instructions])
        fprog = SockFprog(len(instructions), ctypes.cast(array, ctypes.POINTER(SockFilter)))
        _PROGRAMS[supervisor] = (array, fprog)
    return _PROGRAMS[supervisor]


def install_filter(supervisor: bool = False) -> None:
    """Install the filter on the calling process (needs no_new_privs); raises OSError."""
    fprog = build_filter(supervisor)[1]
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp filter not installed: {errno.errorcode.get(err, err)}")
