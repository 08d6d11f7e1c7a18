"""Kernel isolation for Boa's workers and run children, through raw syscalls (ctypes).

Two layers, set up at two moments:

* **Once per worker** (``isolate_worker``, ``build_sandbox_root``, ``prepare_supervisor``):
  new user (when not root, or asked for), mount, PID, IPC, UTS and network namespaces; a fresh root filesystem
  made of read-only bind mounts of the system directories Python needs (``/usr``, the
  interpreter's prefix) plus an empty ``/etc``, a few device nodes, a ``/proc`` of the new
  PID namespace mounted ``hidepid=2``, and a size-limited tmpfs at ``/tmp`` for scratch.
  ``pivot_root`` then detaches the host filesystem: the repository, the problem bank,
  tests, home directories and other runs' folders simply do not exist in the sandbox.
  The supervisor also sets what every child inherits: a scrubbed environment, SIGXFSZ
  ignored, the highest OOM score.
* **Once per run** (``confine_child``, in the forked child before its job exists): new
  session, rlimits, scratch as working directory, a switch to an unprivileged uid/gid
  private to the worker and a seccomp filter; no-new-privs is inherited from the
  supervisor, and the caller has already closed every descriptor the child must not
  keep. ``reset_scratch`` wipes the scratch tmpfs between runs and
  ``kill_everything_else`` ends whatever a run left behind.

Every step is probed; a step that the kernel refuses is recorded in ``Capabilities`` with
a warning and the worker carries on with what it has (``docs/boa.md`` lists what was
active where the tests ran). Nothing here is an in-process guard: user code runs with
the whole Python language available and is contained by the kernel only.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import resource
import signal
import sys
from dataclasses import dataclass, field

_libc = ctypes.CDLL(None, use_errno=True)

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_BIND, MS_REC, MS_PRIVATE = 32, 1024, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS, PR_SET_CHILD_SUBREAPER = 1, 4, 38, 36
SYS_PIVOT_ROOT = 155  # x86_64
OOM_SCORE_RUN = 1000  # run processes are the OOM killer's first choice

# Where the sandbox root is assembled (inside the worker's private mount namespace,
# so the host never sees these mounts).
STAGING_DIR = "/tmp"
SCRATCH_DIR = "/tmp"  # path of the scratch tmpfs *inside* the sandbox root
DEVICE_NODES = ("null", "zero", "urandom", "random")

NAMESPACES = (  # (name, flag) in the order they are unshared
    ("mount", CLONE_NEWNS), ("ipc", CLONE_NEWIPC), ("uts", CLONE_NEWUTS),
    ("net", CLONE_NEWNET), ("pid", CLONE_NEWPID),
)


@dataclass
class Capabilities:
    """Which isolation layers a worker actually got (reported to the parent)."""

    namespaces: list[str] = field(default_factory=list)
    private_root: bool = False
    scratch_tmpfs: bool = False
    proc_hidepid: bool = False
    drop_privileges: bool = False
    seccomp: bool = False
    seccomp_inherited: bool = False  # installed once by the supervisor (see seccomp.py)
    run_ipc_namespace: bool = False  # each run has an IPC namespace of its own
    pid_counter_reset: bool = False  # each run's child starts from the same PID
    memory_check: bool = False  # the clean check sees the memory a run left charged
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Limits:
    """Per-run resource limits applied with setrlimit in the run's child."""

    cpu_s: int = 6
    memory_bytes: int = 512 * 2**20
    nproc: int = 32
    fsize_bytes: int = 4 * 2**20
    nofile: int = 64
    scratch_bytes: int = 16 * 2**20


class IsolationError(OSError):
    """A syscall needed for isolation failed (errno and the call are in the message)."""


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise IsolationError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), f"unshare({flags:#x})")


def _encoded(text: str | None) -> bytes | None:
    return text.encode() if text is not None else None


def mount(source: str | None, target: str, fstype: str | None, flags: int = 0,
          data: str | None = None) -> None:
    _check(_libc.mount(_encoded(source), _encoded(target), _encoded(fstype), ctypes.c_ulong(flags),
                       _encoded(data)), f"mount {source!r} on {target!r} ({fstype}, {data})")


def umount(target: str, flags: int = MNT_DETACH) -> None:
    _check(_libc.umount2(target.encode(), ctypes.c_int(flags)), f"umount {target!r}")


def prctl(option: int, arg: int = 0) -> None:
    _check(_libc.prctl(ctypes.c_int(option), ctypes.c_ulong(arg), ctypes.c_ulong(0),
                       ctypes.c_ulong(0), ctypes.c_ulong(0)), f"prctl({option})")


def die_with_parent() -> None:
    """Ask the kernel to SIGKILL this process when its parent dies."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


# ----------------------------------------------------------------------------- worker

def isolate_worker(caps: Capabilities, user_namespace: bool = False) -> None:
    """Unshare namespaces for this process and its future children (call before fork).

    A user namespace comes first when not root (it grants the rights the others need),
    or when asked for. Each namespace is tried separately so that one refusal does not
    cost the others.
    """
    if os.geteuid() != 0 or user_namespace:
        _enter_user_namespace(caps)
    for name, flag in NAMESPACES:
        try:
            unshare(flag)
            caps.namespaces.append(name)
        except IsolationError as exc:
            caps.warnings.append(f"no {name} namespace ({exc.strerror})")
    if "mount" in caps.namespaces:
        try:  # nothing we mount from now on may propagate back to the host
            mount(None, "/", None, MS_REC | MS_PRIVATE)
        except IsolationError as exc:
            caps.namespaces.remove("mount")
            caps.warnings.append(f"cannot make mounts private ({exc.strerror}); not mounting")
    if "uts" in caps.namespaces:
        _libc.sethostname(b"boa", ctypes.c_size_t(3))


def _enter_user_namespace(caps: Capabilities) -> None:
    uid, gid = os.geteuid(), os.getegid()
    try:
        unshare(CLONE_NEWUSER)
        with open("/proc/self/setgroups", "w") as fh:
            fh.write("deny")
        with open("/proc/self/uid_map", "w") as fh:
            fh.write(f"0 {uid} 1")
        with open("/proc/self/gid_map", "w") as fh:
            fh.write(f"0 {gid} 1")
        caps.namespaces.append("user")
    except OSError as exc:
        caps.warnings.append(f"not root and no user namespace ({exc}); namespaces unavailable")


def build_sandbox_root(caps: Capabilities, readonly_paths: list[str]) -> None:
    """Assemble a minimal root filesystem and pivot into it (call as PID 1 of the worker).

    On failure the worker keeps the host filesystem and records a warning.
    """
    if "mount" not in caps.namespaces:
        caps.warnings.append("no mount namespace: programs can read the host filesystem")
        return
    root = STAGING_DIR
    try:
        mount("boa-root", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
        for path in _system_paths(readonly_paths):
            _bind_readonly(path, root + path)
        for path in _package_dirs():
            _hide(root + path)
        os.makedirs(root + "/etc", exist_ok=True)
        _make_devices(root)
        os.makedirs(root + "/proc", exist_ok=True)
        os.makedirs(root + SCRATCH_DIR, exist_ok=True)
        os.makedirs(root + "/.oldroot", exist_ok=True)
        os.chdir(root)
        _check(_libc.syscall(ctypes.c_long(SYS_PIVOT_ROOT), b".", b".oldroot"), "pivot_root")
        os.chdir("/")
        umount("/.oldroot")
        os.rmdir("/.oldroot")
        caps.private_root = True
    except OSError as exc:
        caps.warnings.append(f"private root failed ({exc}); programs can read the host filesystem")
        return
    _mount_proc(caps)
    try:  # the root tmpfs itself becomes read-only: only the scratch dir is writable
        mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    except IsolationError as exc:
        caps.warnings.append(f"cannot make the sandbox root read-only ({exc.strerror})")


def _system_paths(extra: list[str]) -> list[str]:
    """Paths to expose read-only: system dirs plus the interpreter's base prefix.

    A virtual environment's own prefix is deliberately left out: it usually lives in the
    project checkout, and programs need only the standard library.
    """
    wanted = ["/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin",
              os.path.realpath(sys.base_prefix), *extra]
    out: list[str] = []
    for path in wanted:
        if not os.path.lexists(path) or any(path == p or path.startswith(p + "/") for p in out):
            continue
        out.append(path)
    return out


def _package_dirs() -> list[str]:
    """Third-party package directories inside the system paths: runs need only the
    standard library (workers start with -S), so each is covered by an empty read-only
    tmpfs (the base interpreter's site-packages, Debian's dist-packages)."""
    import glob
    import sysconfig

    base = os.path.realpath(sys.base_prefix)
    found = {sysconfig.get_path(key, vars={"base": base, "platbase": base})
             for key in ("purelib", "platlib")}
    for prefix in ("/usr/lib", "/usr/local/lib", base + "/lib"):
        found.update(glob.glob(f"{prefix}/python3*/site-packages") + glob.glob(f"{prefix}/python3*/dist-packages"))
    return sorted(p for p in found if os.path.isdir(p))


def _hide(target: str) -> None:
    mount("boa-hidden", target, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,nr_inodes=1")


def forget_host_paths() -> None:
    """Drop host paths a run could read in this process's memory and that lead nowhere in
    the sandbox: the package's source root and the virtual environment on ``sys.path``
    (the modules are loaded; the directories do not exist in the private root)."""
    sys.path[:] = [p for p in sys.path if p and os.path.isdir(p)]
    sys.argv[:] = ["-c"]


def _bind_readonly(path: str, target: str) -> None:
    if os.path.islink(path) and os.path.dirname(path) == "/":
        os.symlink(os.readlink(path), target)  # e.g. /lib -> usr/lib on merged-/usr systems
        return
    os.makedirs(target, exist_ok=True)
    mount(path, target, None, MS_BIND | MS_REC)
    mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _make_devices(root: str) -> None:
    os.makedirs(root + "/dev", exist_ok=True)
    for name in DEVICE_NODES:
        target = f"{root}/dev/{name}"
        open(target, "w").close()
        mount(f"/dev/{name}", target, None, MS_BIND)
        mount(None, target, None, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NOEXEC)


def _mount_proc(caps: Capabilities) -> None:
    if "pid" not in caps.namespaces or os.getpid() != 1:
        return  # a /proc of the host's PID namespace would show the host's processes
    flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
    try:
        mount("proc", "/proc", "proc", flags, "hidepid=2")
        caps.proc_hidepid = True
    except IsolationError:
        try:
            mount("proc", "/proc", "proc", flags)
        except IsolationError as exc:
            caps.warnings.append(f"no /proc in the sandbox ({exc.strerror})")
            return
    _mask_host_identity(caps)


# /proc files that identify the host (its boot line, this boot's id): the same for every
# run on the machine, so a run could tell machines and boots apart and name them.
HOST_IDENTITY_FILES = ("/proc/cmdline", "/proc/sys/kernel/random/boot_id")


def _mask_host_identity(caps: Capabilities) -> None:
    """Bind /dev/null (empty, read-only here) over HOST_IDENTITY_FILES, as container
    runtimes mask /proc/kcore."""
    for path in HOST_IDENTITY_FILES:
        try:
            mount("/dev/null", path, None, MS_BIND)
            mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC)
        except IsolationError as exc:
            caps.warnings.append(f"{path} is not masked ({exc.strerror})")


class Scratch:
    """The run's scratch directory, given empty to every run (``reset``).

    With a private root it is a fresh tmpfs (size- and inode-limited), detached and
    mounted anew after every run, also one that seems to have left it untouched: a kept
    tmpfs carries state no check sees (its inode counter, which unnamed ``O_TMPFILE``
    files advance; its birth time, which ``utime`` cannot reset), and every run must start
    from a state no earlier run can have touched. The mount's
    arguments are encoded once: ``reset`` runs on every cycle of the worker, where each
    object it makes costs a copy-on-write fault (the prepared child shares the heap).
    Otherwise it is ``host_scratch``, a host directory that the executor made for this
    worker (and removes when it stops the worker: a killed worker cannot), emptied by
    hand. ``reset`` raises OSError when neither is available.
    """

    def __init__(self, caps: Capabilities, owner_uid: int, owner_gid: int, limits: Limits,
                 host_scratch: str | None = None) -> None:
        self.caps, self.owner, self.host_scratch = caps, (owner_uid, owner_gid), host_scratch
        self.target = SCRATCH_DIR.encode()
        self.detach = ctypes.c_int(MNT_DETACH)
        # noatime: nothing reads the scratch's access times; it saves the updates.
        self.flags = ctypes.c_ulong(MS_NOSUID | MS_NODEV | MS_NOATIME)
        self.options = (f"mode=0700,uid={owner_uid},gid={owner_gid},size={limits.scratch_bytes},"
                        "nr_inodes=2048").encode()

    def reset(self) -> str:
        """Give the next run an empty scratch directory; returns its path."""
        if self.caps.private_root:
            if self.caps.scratch_tmpfs:
                _check(_libc.umount2(self.target, self.detach), _SCRATCH_RENEWAL)
            _check(_libc.mount(b"boa-scratch", self.target, b"tmpfs", self.flags, self.options), _SCRATCH_RENEWAL)
            self.caps.scratch_tmpfs = True
            return SCRATCH_DIR
        if not self.host_scratch:
            raise OSError(errno.ENOENT, "no private root and no host scratch directory")
        return _reset_host_scratch(self.host_scratch, *self.owner)

    def forget_host_path(self) -> None:
        """Drop the host directory's path (a run could find it in this process's memory)."""
        self.host_scratch = None


_SCRATCH_RENEWAL = f"renewing the scratch tmpfs at {SCRATCH_DIR}"  # Scratch.reset's error, made once


def _reset_host_scratch(path: str, owner_uid: int, owner_gid: int) -> str:
    import shutil

    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path, mode=0o700, exist_ok=True)
    if os.geteuid() == 0:
        os.chown(path, owner_uid, owner_gid)
    return path


# ----------------------------------------------------------------------------- per run

def prepare_supervisor(scratch: str) -> None:
    """Process state that every run's child inherits, set once in the supervisor.

    Doing this once instead of per child keeps each fork's copy-on-write faults down:
    the environment (only what a run may see), SIGXFSZ ignored (a too-large write raises
    instead of killing), the OOM killer's preference for run processes, and no-new-privs
    (which no process can unset: execve never grants privileges to a run, and the
    children may install their seccomp filter). Raises IsolationError when no-new-privs
    cannot be set.
    """
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    os.environ.clear()
    os.environ.update(run_environment(scratch))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write(str(OOM_SCORE_RUN))
    except OSError:
        pass


def run_environment(scratch: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": scratch, "TMPDIR": scratch, "LANG": "C.UTF-8",
            "PYTHONIOENCODING": "utf-8"}


def confine_child(limits: Limits, run_uid: int | None, run_gid: int | None,
                  scratch: str, use_seccomp: bool, private_ipc: bool = False) -> None:
    """Confine the current (freshly forked) process before it runs untrusted code.

    Called with fds 0/1/2 and the result channel already in place, in a process whose
    parent ran ``prepare_supervisor`` (so no-new-privs is already set); raises OSError
    when a step fails (the caller then exits without running the program).
    ``private_ipc``: the run gets an IPC namespace of its own (SysV shared memory,
    message queues, semaphores, POSIX queues), created here, before its job exists, and
    destroyed by the kernel with the run's last process: no run finds another's objects,
    their ids or their memory (~0.3 ms of CPU per run, off the run's path). Used only
    without the seccomp filter, which refuses the IPC calls themselves.
    """
    if private_ipc:
        unshare(CLONE_NEWIPC)
    os.setsid()
    _set_limits(limits)
    os.chdir(scratch)
    if run_uid is not None and run_gid is not None:
        os.setgroups([])
        os.setgid(run_gid)
        os.setuid(run_uid)
        if os.geteuid() != run_uid or os.getuid() != run_uid:
            raise OSError(errno.EPERM, "privileges were not dropped")
    if use_seccomp:
        from py4.boa.seccomp import install_filter  # imported by the worker before isolation

        install_filter()


def _set_limits(limits: Limits) -> None:
    cpu = limits.cpu_s
    setrlimit = resource.setrlimit
    setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    setrlimit(resource.RLIMIT_NPROC, (limits.nproc, limits.nproc))
    setrlimit(resource.RLIMIT_FSIZE, (limits.fsize_bytes, limits.fsize_bytes))
    setrlimit(resource.RLIMIT_NOFILE, (limits.nofile, limits.nofile))
    setrlimit(resource.RLIMIT_CORE, (0, 0))
    setrlimit(resource.RLIMIT_MEMLOCK, (0, 0))
    setrlimit(resource.RLIMIT_MSGQUEUE, (0, 0))


# Kernel objects of the worker's own namespaces that outlive processes. In a clean worker
# each lists nothing (only its header): runs have IPC namespaces of their own, and the
# supervisor's sockets belong to the executor's network namespace.
KERNEL_STATE_FILES = ("/proc/sysvipc/shm", "/proc/sysvipc/msg", "/proc/sysvipc/sem", "/proc/net/unix")


# Descriptors the worker keeps while a run's child lives sit at or above this number, out
# of the range the child fills (its RLIMIT_NOFILE, ``Limits.nofile``, is 64).
KEPT_FD_FLOOR = 256


def above_child_range(fd: int) -> int:
    """Move ``fd`` to a close-on-exec descriptor at or above ``KEPT_FD_FLOOR``, out of the
    range a run's child fills (so no dup2 there overwrites it); closes ``fd``."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, KEPT_FD_FLOOR)
    os.close(fd)
    return high


class KernelStateCheck:
    """What a finished run left in the worker's namespaces (``leftover``: None when
    nothing), e.g. a Unix socket kept alive by its own descriptor in flight (its abstract
    name would reach the next run). The files are opened once, in the sandbox (opening a
    /proc file cost more than reading it), and read from the start after every run;
    files this kernel or sandbox does not have are skipped."""

    def __init__(self) -> None:
        paths, fds = [], []
        for path in KERNEL_STATE_FILES:
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError:
                continue
            paths.append(path)
            fds.append(above_child_range(fd))
        # A clean run's cycle touches only these: one tuple of descriptors and one buffer
        # made here (each object it touches costs a copy-on-write fault per run).
        self.paths, self.fds = tuple(paths), tuple(fds)
        self.buffer = bytearray(1 << 16)
        self.buffers = [self.buffer]

    def leftover(self) -> str | None:
        for fd in self.fds:
            lines = self.buffer.count(b"\n", 0, os.preadv(fd, self.buffers, 0))
            if lines > 1:  # more than the header
                return f"{self.paths[self.fds.index(fd)]} lists {lines - 1}"
        return None


class ChildrenOfInit:
    """Whether the supervisor, PID 1 of its PID namespace, has no child, zombies included:
    then no process but itself is left in the namespace, since every process there
    descends from PID 1 (orphans are reparented to it, and no run can enter the namespace
    from outside: ``setns`` is refused). One read of a descriptor opened once, where
    listing /proc would make a list of names on every run's cycle.

    The file lists the children that thread 1 forked (and those reparented to it), not
    those of other threads: it answers for the whole process only while the supervisor has
    one thread, which ``open`` checks (the worker starts none and does not import
    ``threading``; runs cannot add threads to it)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    @classmethod
    def open(cls) -> ChildrenOfInit | None:
        """None where this process is not PID 1 or the kernel lacks the file
        (``CONFIG_PROC_CHILDREN``)."""
        if os.getpid() != 1:
            return None
        try:
            if os.listdir("/proc/1/task") != ["1"]:
                return None
            return cls(above_child_range(os.open("/proc/1/task/1/children", os.O_RDONLY)))
        except OSError:
            return None

    def none(self) -> bool:
        return not os.pread(self.fd, 16, 0)


class PidCounter:
    """Resets the PID namespace's counter before each run's child is forked, so that the
    child and everything it forks get the same PIDs whatever earlier runs did (the counter
    would otherwise tell a run how many processes the runs before it made). Needs the
    worker's own PID namespace and /proc; ``active`` says whether it works here."""

    def __init__(self) -> None:
        self.fd: int | None = None
        if os.getpid() != 1:
            return
        try:
            self.fd = os.open("/proc/sys/kernel/ns_last_pid", os.O_WRONLY | os.O_CLOEXEC)
            self.reset()
        except OSError:
            self.fd = None

    @property
    def active(self) -> bool:
        return self.fd is not None

    def reset(self) -> None:
        """The next fork gets PID 2 (the supervisor is 1; no other process is left)."""
        if self.fd is not None:
            os.pwrite(self.fd, b"1", 0)


PR_GET_SECUREBITS, SECBIT_NO_SETUID_FIXUP, SECBIT_KEEP_CAPS = 27, 1 << 2, 1 << 4


def setuid_drops_capabilities() -> bool:
    """Whether switching from root to another uid leaves the process no capability: not so
    where an ancestor set the securebits that keep them (``SECBIT_NO_SETUID_FIXUP``,
    ``SECBIT_KEEP_CAPS``, e.g. systemd's ``SecureBits=``). Runs inherit a filter that lets
    ``mount`` through only where this holds (seccomp.py)."""
    bits = _libc.prctl(ctypes.c_int(PR_GET_SECUREBITS), ctypes.c_ulong(0), ctypes.c_ulong(0),
                       ctypes.c_ulong(0), ctypes.c_ulong(0))
    return bits >= 0 and not bits & (SECBIT_NO_SETUID_FIXUP | SECBIT_KEEP_CAPS)


def become_subreaper() -> None:
    """Orphaned descendants of this process become its children, not init's: a run's
    process that calls ``setsid`` and double-forks stays a descendant, so
    ``kill_descendants`` finds it."""
    prctl(PR_SET_CHILD_SUBREAPER, 1)


def descendants(root: int) -> dict[int, str]:
    """Every descendant of ``root`` (PID -> state letter, ``Z`` for a zombie), read from
    /proc (parent PIDs)."""
    children: dict[int, list[int]] = {}
    states: dict[int, str] = {}
    try:
        names = os.listdir("/proc")
    except OSError:  # a private root without /proc: nothing can be seen
        return {}
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue  # gone meanwhile
        fields = stat[stat.rfind(b")") + 2:].split()
        states[int(name)] = fields[0].decode()
        children.setdefault(int(fields[1]), []).append(int(name))
    found: dict[int, str] = {}
    pending = list(children.get(root, []))
    while pending:
        pid = pending.pop()
        if pid not in found:
            found[pid] = states[pid]
            pending.extend(children.get(pid, []))
    return found


def kill_descendants(timeout_s: float = 5.0, reap: bool = False) -> bool:
    """SIGKILL every descendant of this process until none is left alive (this process
    must be a subreaper, so that orphans stay descendants); with ``reap`` also reap them
    all. True when done within ``timeout_s``. A process forked meanwhile is found on the
    next pass; a stopped one dies of SIGKILL too."""
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        if reap:
            _reap_children()
        alive = [pid for pid, state in descendants(os.getpid()).items() if state != "Z"]
        if not alive and not (reap and _has_children()):
            return True
        if time.monotonic() > deadline:
            return False
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.001)


def _reap_children() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _has_children() -> bool:
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def kill_everything_else(run_uid: int | None) -> None:
    """Kill every process the last run left behind.

    As PID 1 of a PID namespace, ``kill(-1, SIGKILL)`` reaches exactly the processes of
    that namespace. Without one, the supervisor is a subreaper (``become_subreaper``) and
    kills all its descendants (none is reaped here: the caller reaps the run's child);
    then a helper child switches to the run's private uid and sends ``kill(-1)``, which
    reaches only that uid's processes. As root outside a PID namespace kill(-1) is not
    sent: there it would hit the whole machine.
    """
    if os.getpid() == 1:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
        return
    kill_descendants()
    if run_uid is None or os.geteuid() != 0:
        return
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(run_uid)
            os.setuid(run_uid)
            if os.getuid() == run_uid and os.geteuid() == run_uid and run_uid != 0:
                os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
