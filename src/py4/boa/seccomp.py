"""A small seccomp-BPF filter for run children, built with raw ctypes from one table of
syscall numbers per architecture (x86_64 and aarch64).

Defence in depth on top of namespaces and the unprivileged uid: the syscalls a program
never needs and that widen the kernel's attack surface fail with EPERM — namespace
creation (``unshare``, ``setns``, ``clone`` with namespace flags), mounts, ``ptrace`` and
cross-process memory access, BPF, perf, keyrings, io_uring, userfaultfd, module and
kexec loading. Sockets are allowed only for ``AF_UNIX`` (the network namespace already
has no usable interface).

**No kernel state one run can write and another read.** The read-only root is shared by
every worker (and the host), so whatever the kernel keeps about its files is a channel
between concurrent runs and from one run to the next: file locks and leases (``flock``,
``fcntl`` lock and lease commands), directory notifications (``fcntl(F_NOTIFY)``),
inotify and fanotify watches, and the page cache — ``posix_fadvise`` (``DONTNEED`` drops
a file's pages: a bit written), ``readahead`` (loads them), ``mincore`` and ``cachestat``
(read residency) are refused, and so are ``preadv2``/``pwritev2`` with ``RWF_NOWAIT``
(which reads a page only when it is cached: a bit read); without that flag they are
plain positioned reads and writes (``os.preadv`` calls ``preadv2``, the worker does too).
SysV IPC (shared memory, message queues, semaphores) and POSIX message
queues are refused: objects that outlive the process that made them, which a run could
leave for the next (nothing in Python's standard library uses them); without this filter
each run gets an IPC namespace of its own instead. ``clone3`` answers ENOSYS so that libc
falls back to ``clone``, whose flags the filter can inspect. A syscall of any other
architecture (x86_64's x32 ABI, 32-bit compat calls) kills the process.

``SYSCALLS`` is the one table: name -> number on each architecture (the kernel's
``arch/x86/entry/syscalls/syscall_64.tbl`` and ``include/uapi/asm-generic/unistd.h``,
which aarch64 uses); a name an architecture lacks (aarch64 has no ``inotify_init``) is
left out of its filter. ``instructions(arch)`` builds the BPF program for any listed
architecture on any machine (tests check aarch64's on x86_64); on a machine of another
architecture the filter cannot be built, and Boa refuses to start unless the caller
passes ``seccomp=False`` (docs/boa.md).

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

# Audit architecture constants (linux/audit.h): EM_* | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE.
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
X32_SYSCALL_BIT = 0x40000000  # x86_64 only
RET_ALLOW, RET_KILL_PROCESS, RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
LD_W_ABS, JEQ_K, JGE_K, JSET_K, RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
OFFSET_NR, OFFSET_ARCH, OFFSET_ARG0, OFFSET_ARG1, OFFSET_ARG5 = 0, 4, 16, 24, 56
RWF_NOWAIT = 0x8

# fcntl commands refused: F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK,
# F_OFD_SETLKW, F_SETLEASE (F_GETLK too: it would show another run's lock), F_NOTIFY.
FCNTL_REFUSED_COMMANDS = (5, 6, 7, 36, 37, 38, 1024, 1026)
AF_UNIX = 1
NAMESPACE_FLAGS = 0x00020000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x02000000

# name -> (x86_64 number, aarch64 number); None: the architecture has no such call.
SYSCALLS: dict[str, tuple[int | None, int | None]] = {
    # inspected by the filter (not refused outright)
    "clone": (56, 220), "clone3": (435, 435), "socket": (41, 198), "fcntl": (72, 25),
    "preadv2": (327, 286), "pwritev2": (328, 287),
    # kernel state shared between runs: locks, notifications, the page cache
    "flock": (73, 32), "inotify_init": (253, None), "inotify_add_watch": (254, 27),
    "inotify_init1": (294, 26), "fanotify_init": (300, 262), "fanotify_mark": (301, 263),
    "fadvise64": (221, 223), "readahead": (187, 213), "mincore": (27, 232),
    "cachestat": (451, 451),
    # SysV IPC and POSIX message queues
    "shmget": (29, 194), "shmat": (30, 196), "shmctl": (31, 195), "shmdt": (67, 197),
    "semget": (64, 190), "semop": (65, 193), "semctl": (66, 191), "semtimedop": (220, 192),
    "msgget": (68, 186), "msgsnd": (69, 189), "msgrcv": (70, 188), "msgctl": (71, 187),
    "mq_open": (240, 180), "mq_unlink": (241, 181), "mq_timedsend": (242, 182),
    "mq_timedreceive": (243, 183), "mq_notify": (244, 184), "mq_getsetattr": (245, 185),
    # the kernel's attack surface
    "ptrace": (101, 117), "syslog": (103, 116), "personality": (135, 92),
    "pivot_root": (155, 41), "adjtimex": (159, 171), "chroot": (161, 51), "acct": (163, 89),
    "settimeofday": (164, 170), "mount": (165, 40), "umount2": (166, 39),
    "swapon": (167, 224), "swapoff": (168, 225), "reboot": (169, 142),
    "init_module": (175, 105), "delete_module": (176, 106), "quotactl": (179, 60),
    "lookup_dcookie": (212, 18), "clock_settime": (227, 112), "kexec_load": (246, 104),
    "add_key": (248, 217), "request_key": (249, 218), "keyctl": (250, 219),
    "unshare": (272, 97), "perf_event_open": (298, 241), "name_to_handle_at": (303, 264),
    "open_by_handle_at": (304, 265), "setns": (308, 268), "process_vm_readv": (310, 270),
    "process_vm_writev": (311, 271), "finit_module": (313, 273),
    "kexec_file_load": (320, 294), "bpf": (321, 280), "userfaultfd": (323, 282),
    "io_uring_setup": (425, 425), "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427), "open_tree": (428, 428), "move_mount": (429, 429),
    "fsopen": (430, 430), "fsconfig": (431, 431), "fsmount": (432, 432), "fspick": (433, 433),
    "mount_setattr": (442, 442),
}
ARCHITECTURES = ("x86_64", "aarch64")
INSPECTED = ("clone", "clone3", "socket", "fcntl", "preadv2", "pwritev2")
DENIED = tuple(name for name in SYSCALLS if name not in INSPECTED)


def syscall_numbers(arch: str) -> dict[str, int]:
    """Name -> number on ``arch`` for every call of the table it has."""
    column = ARCHITECTURES.index(arch)
    table: dict[str, int] = {}
    for name, numbers in SYSCALLS.items():
        number = numbers[column]
        if number is not None:
            table[name] = number
    return table


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                ("k", ctypes.c_uint)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]


_libc = ctypes.CDLL(None, use_errno=True)
_PROGRAMS: dict[bool, tuple] = {}  # supervisor? -> (array, fprog), built once in the worker
SUPERVISOR_ALLOWED = ("mount", "umount2")  # see the module's docstring


def instructions(arch: str, supervisor: bool = False) -> list[tuple[int, int, int, int]]:
    """The BPF program for ``arch`` (any of ARCHITECTURES, on any machine)."""
    numbers = syscall_numbers(arch)
    eperm = RET_ERRNO | errno.EPERM
    prog = [
        (LD_W_ABS, 0, 0, OFFSET_ARCH),
        (JEQ_K, 1, 0, AUDIT_ARCH[arch]),
        (RET_K, 0, 0, RET_KILL_PROCESS),
        (LD_W_ABS, 0, 0, OFFSET_NR),
    ]
    if arch == "x86_64":
        prog += [(JGE_K, 0, 1, X32_SYSCALL_BIT), (RET_K, 0, 0, RET_KILL_PROCESS)]
    prog += [
        (JEQ_K, 0, 1, numbers["clone3"]),
        (RET_K, 0, 0, RET_ERRNO | errno.ENOSYS),
        # clone: refuse namespace flags (flags are the first argument's low 32 bits)
        (JEQ_K, 0, 4, numbers["clone"]),
        (LD_W_ABS, 0, 0, OFFSET_ARG0),
        (JSET_K, 0, 1, NAMESPACE_FLAGS),
        (RET_K, 0, 0, eperm),
        (RET_K, 0, 0, RET_ALLOW),
        # socket: AF_UNIX only
        (JEQ_K, 0, 4, numbers["socket"]),
        (LD_W_ABS, 0, 0, OFFSET_ARG0),
        (JEQ_K, 1, 0, AF_UNIX),
        (RET_K, 0, 0, RET_ERRNO | errno.EAFNOSUPPORT),
        (RET_K, 0, 0, RET_ALLOW),
    ]
    # preadv2, pwritev2: refuse RWF_NOWAIT (the flags are the sixth argument)
    for name in ("preadv2", "pwritev2"):
        prog += [(JEQ_K, 0, 4, numbers[name]), (LD_W_ABS, 0, 0, OFFSET_ARG5),
                 (JSET_K, 0, 1, RWF_NOWAIT), (RET_K, 0, 0, eperm), (RET_K, 0, 0, RET_ALLOW)]
    # fcntl: refuse the lock, lease and notification commands (the second argument)
    commands = FCNTL_REFUSED_COMMANDS
    prog += [(JEQ_K, 0, len(commands) + 3, numbers["fcntl"]), (LD_W_ABS, 0, 0, OFFSET_ARG1)]
    prog += [(JEQ_K, len(commands) - i, 0, cmd) for i, cmd in enumerate(commands)]
    prog += [(RET_K, 0, 0, RET_ALLOW), (RET_K, 0, 0, eperm)]
    denied = sorted(numbers[name] for name in DENIED
                    if name in numbers and not (supervisor and name in SUPERVISOR_ALLOWED))
    for number in denied:
        prog += [(JEQ_K, 0, 1, number), (RET_K, 0, 0, eperm)]
    prog.append((RET_K, 0, 0, RET_ALLOW))
    return prog


def build_filter(supervisor: bool = False) -> tuple:
    """Build the filter once (in the worker); raises OSError on an unsupported machine."""
    machine = platform.machine()
    if machine not in ARCHITECTURES:
        raise OSError(errno.ENOSYS, f"no seccomp syscall table for {machine} "
                                    f"(Boa has {', '.join(ARCHITECTURES)})")
    if supervisor not in _PROGRAMS:
        program = instructions(machine, supervisor)
        array = (SockFilter * len(program))(*[SockFilter(*ins) for ins in program])
        fprog = SockFprog(len(program), ctypes.cast(array, ctypes.POINTER(SockFilter)))
        _PROGRAMS[supervisor] = (array, fprog)
    return _PROGRAMS[supervisor]


def install_filter(supervisor: bool = False) -> None:
    """Install the filter on the calling process (needs no_new_privs); raises OSError."""
    fprog = build_filter(supervisor)[1]
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp filter not installed: {errno.errorcode.get(err, err)}")
