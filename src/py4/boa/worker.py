"""A Boa worker: an isolated, pre-warmed process that supervises one run at a time.

Started by the executor as a fresh interpreter (never forked from it, so it holds none of
the parent's memory: no problem bank, no expected outputs). At start it joins its cgroups,
imports the runtime (not ``threading``: its after-fork handler would cost every child
page faults), unshares its namespaces and forks the *supervisor*, which is PID 1 of the
new PID namespace and pivots into the sandbox root.

The supervisor keeps one child *prepared*: forked and confined (``isolation.
confine_child``; no-new-privs, environment and pipes are set up once in the supervisor)
before its job exists, then *warmed up* (``child.warm_up``: the run's path on a throwaway
no-op job, so that its copy-on-write faults are taken while the worker is idle), then
blocked reading its job from a pipe. The supervisor hands every pipe of that child to the
executor (``HandOver``: job, result channel, stdout, stderr, ticks) and keeps none: the
executor writes the job, reads the output and the results and enforces the deadlines
and the output cap itself (``run_watch``), so the supervisor never holds code,
inputs, output or result values, and is not on the path of a run that ends normally.

What the supervisor keeps is the child's pidfd and its *end* pipe. A run ends when the
harness reports the end (``!`` and the exit status on the tick pipe, read by the
executor, which answers its caller at once; then one byte on the end pipe) and stops
itself, when the child exits (crash, ``os._exit``) or when the executor sends ``Kill``
(a deadline, the output cap). The supervisor then kills every process of the run (after
an end report, ``END_GRACE_S`` later) and replies with the kernel's exit status (the
executor drops the reply when it has answered already), waits for their teardown, reaps
them, checks that none remain, wipes the scratch tmpfs, prepares the next child and hands
it over (the hand-over is the "clean" verdict; a worker that is not clean exits instead).
"""

from __future__ import annotations

import dataclasses
import fcntl
import gc
import importlib
import marshal
import os
import random
import resource
import select
import signal
import socket
import sys
import time
from dataclasses import dataclass

from py4.boa import cgroups, child, isolation, seccomp
from py4.boa.frontend import PRELOAD_MODULES, new_globals_factory
from py4.boa.protocol import HandOver, Kill, Reply, WorkerGone, read_frame, write_message

JOB_FD_IN, JOB_FD_OUT = 0, 1
JOB_FD_CHILD = 3  # where a prepared child reads its job
NULL_FD_CHILD = 4  # /dev/null for writing: a certification's stdout and stderr
CHANNEL_PIPE_BYTES = 2**20  # pipe size asked for a run's result channel
REAP_TIMEOUT_S = 2.0  # a run's processes must all be gone this long after the kill
IDLE_CPU_LIMIT_S = 600  # CPU limit while a prepared child waits (lowered per job)
# After the harness reports the end of a run, its processes are killed this much later:
# the executor answers its caller meanwhile, and the kill and the kernel's teardown of
# the run (~1 ms of CPU) would otherwise compete with that answer. Measured on the
# 2-core VM here (600 runs 20 ms apart, two workers): p90 latency 1.7-1.9 -> 0.85-0.9 ms,
# median 0.83-0.91 -> 0.67-0.79 ms; back-to-back runs unchanged. The run's own process
# is stopped meanwhile; what a program left running runs on until the kill.
END_GRACE_S = 0.0003
# After a run, the worker's memory group may hold this much more anonymous and shared
# memory than before its first run (the supervisor's own heap grows a little) ...
MEMORY_SLACK_BYTES = 16 * 2**20
MEMORY_RELEASE_TIMEOUT_S = 1.0  # ... once the kernel has freed a dead run's IPC namespace


@dataclass
class PreparedChild:
    """A confined child waiting for its job: its pidfd, and the pipe ends the executor
    takes (in ``HandOver.FDS`` order: job, result channel, stdout, stderr, ticks)."""

    pid: int
    pidfd: int
    end_fd: int  # the harness reports the end of the run here (kept by the supervisor)
    fds: list[int]
    reaped: bool = False


def main(config: dict) -> None:
    """Entry point of a worker process, with the configuration the executor wrote on its
    job pipe (``executor.WORKER_BOOT``; never on the command line, which runs can read)."""
    # No parent-death signal here: the kernel sends it when the *thread* that started us
    # exits, and executors restart workers from short-lived pool threads. The job pipe
    # ties us to the executor instead: when it dies, the supervisor's next read or write
    # on the pipe fails and the supervisor exits, taking the namespace with it.
    if os.getppid() != config.pop("parent_pid"):
        os._exit(1)  # the executor died before we started
    # py4 runs need the runtime; py3 runs only the decoding of test inputs (to_py3)
    _import_lang_only("runtime" if config["dialect"] == "py4" else "runtime_dict")
    for name in PRELOAD_MODULES:
        importlib.import_module(name)
    new_globals = new_globals_factory(config["dialect"])
    to_py4 = _to_py4(config["dialect"])
    caps = isolation.Capabilities()
    groups = config.pop("cgroups", [])
    try:  # before unsharing: the group's files are in the host's filesystem
        cgroups.join(groups)
    except OSError as exc:
        caps.warnings.append(f"could not join the worker's cgroups ({exc})")
    memory_stat = cgroups.open_memory_stat(groups)
    config["memory_stat_fd"] = None if memory_stat is None else isolation.above_child_range(memory_stat)
    if config["isolate"]:
        isolation.isolate_worker(caps, user_namespace=config.get("user_namespace", False))
    else:
        caps.warnings.append("isolation disabled by configuration")
    # The outer process and (without a PID namespace) the supervisor are subreapers, so
    # no process of a run can leave their tree, however it detaches (setsid, double fork).
    isolation.become_subreaper()
    pid = os.fork()
    if pid:
        _wait_for_supervisor(pid, config["handoff_fd"], sweep="pid" not in caps.namespaces)
    isolation.die_with_parent()  # the outer process is single-threaded: this is reliable
    if "pid" not in caps.namespaces:
        isolation.become_subreaper()
    Supervisor(config, caps, new_globals, to_py4).serve()


def _import_lang_only(module: str) -> None:
    """Import ``py4.lang.<module>`` without the package's ``__init__`` (the compiler).

    Runs never compile: the worker needs only the runtime, and every module it does
    not load is memory that each run's fork would otherwise have to map.
    """
    import importlib.util
    import types

    spec = importlib.util.find_spec("py4.lang")
    if spec is None or spec.submodule_search_locations is None:
        raise ImportError("py4.lang is not an importable package", name="py4.lang")
    package = types.ModuleType("py4.lang")
    package.__path__ = list(spec.submodule_search_locations)
    package.__spec__, package.__package__ = spec, "py4.lang"
    sys.modules.setdefault("py4.lang", package)
    importlib.import_module(f"py4.lang.{module}")


def _to_py4(dialect: str):
    if dialect == "py4":
        from py4.lang.runtime import to_py4

        return to_py4
    from py4.lang.runtime_dict import to_py3

    return to_py3


def _wait_for_supervisor(pid: int, handoff_fd: int, sweep: bool) -> None:
    """The outer process only waits: it keeps no copy of the job pipes. The executor
    stops a worker with SIGTERM here: the supervisor is killed and, once it is gone,
    every process left in this tree (``sweep``: without a PID namespace, where killing
    the supervisor does not end the run's processes; they are this process's
    descendants, since it is a subreaper) is killed and reaped before this one exits."""
    for fd in (JOB_FD_IN, JOB_FD_OUT, handoff_fd):
        os.close(fd)
    signal.signal(signal.SIGTERM, lambda *_: os.kill(pid, signal.SIGKILL))
    code = 0
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            code = os.waitstatus_to_exitcode(status) & 0xFF
        except ChildProcessError:
            pass
        except InterruptedError:
            continue
        break
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # finish the sweep first
    if sweep:
        isolation.kill_descendants(reap=True)
    os._exit(code)


class Supervisor:
    """PID 1 of the worker's namespaces: runs jobs one at a time, forever."""

    def __init__(self, config: dict, caps: isolation.Capabilities, new_globals, to_py4):
        self.config, self.caps = config, caps
        self.new_globals, self.to_py4 = new_globals, to_py4
        if config["isolate"]:
            isolation.build_sandbox_root(caps, config.get("readonly_paths", []))
        privileged = os.geteuid() == 0 and "user" not in caps.namespaces
        self.run_uid = config["run_uid"] if privileged and config["isolate"] else None
        caps.drop_privileges = self.run_uid is not None
        if not caps.drop_privileges:
            caps.warnings.append("programs run with the worker's own uid")
        self.use_seccomp = bool(config.get("seccomp")) and _seccomp_available(caps)
        caps.seccomp = self.use_seccomp
        self.limits = isolation.Limits(**config["limits"])
        self.idle_limits = dataclasses.replace(self.limits, cpu_s=IDLE_CPU_LIMIT_S)
        self.warm_up_job = _warm_up_job()
        self.devnull = isolation.above_child_range(os.open("/dev/null", os.O_RDONLY))  # a child's stdin
        self.devnull_w = isolation.above_child_range(os.open("/dev/null", os.O_WRONLY))
        self.prepared: PreparedChild | None = None  # the child handed over for the next run
        self.last: PreparedChild | None = None  # the last run's child, until clean_up
        self.seq = 0  # prepared children so far: the run number of the executor's controls
        # Kernel state no earlier run may have touched (docs/boa.md, "Between runs").
        # Runs cannot make IPC objects where the seccomp filter refuses the calls; without
        # it each run gets an IPC namespace of its own (creating one cost ~0.22 ms of CPU
        # per run, plus the kernel's deferred teardown).
        self.private_ipc = caps.run_ipc_namespace = "ipc" in caps.namespaces and not self.use_seccomp
        self.pid_counter = isolation.PidCounter()
        self.kernel_state = isolation.KernelStateCheck()
        self.children = isolation.ChildrenOfInit.open() if caps.proc_hidepid else None
        caps.pid_counter_reset = self.pid_counter.active
        stat_fd = config.get("memory_stat_fd")
        self.memory_stat = None if stat_fd is None else cgroups.MemoryStat(stat_fd)
        caps.memory_check = self.memory_stat is not None
        self.memory_ceiling = 0  # what the group may hold after a run (set before the first)
        self.scratch_dir = isolation.Scratch(caps, *self._owner(), self.limits, config.get("host_scratch"))
        self.scratch = self.scratch_dir.reset()
        if caps.private_root:  # what a run could find in this process's memory
            config.pop("host_scratch", None)
            self.scratch_dir.forget_host_path()
            isolation.forget_host_paths()
        isolation.prepare_supervisor(self.scratch)
        # Runs without privileges inherit the supervisor's filter instead of installing
        # their own (its cost, per process, is a tenth of a run's cycle: seccomp.py).
        if self.use_seccomp and caps.drop_privileges and isolation.setuid_drops_capabilities():
            try:
                seccomp.install_filter(supervisor=True)
                caps.seccomp_inherited = True
            except OSError as exc:  # each child installs the whole filter, as without privileges
                caps.warnings.append(f"the supervisor's seccomp filter was refused ({exc})")
        self.child_installs_filter = self.use_seccomp and not caps.seccomp_inherited

    def serve(self) -> None:
        self.streams = _prepared_std_streams()
        self.handoff = socket.socket(fileno=self.config["handoff_fd"])
        gc.collect()
        gc.freeze()  # keep the warm heap shared copy-on-write with every run's child
        if self.memory_stat is not None:
            self.memory_ceiling = self.memory_stat.held_bytes() + MEMORY_SLACK_BYTES
        self.prepared = self.prepare_child()
        self.hand_over(self.prepared)
        write_message(JOB_FD_OUT, {"ready": True, "caps": self.caps.to_json(), "pid": os.getpid()})
        while True:
            try:
                os.write(JOB_FD_OUT, self.run_job())  # < PIPE_BUF: written in one piece
                # Cleaning up and preparing the next child after the run overlaps both with
                # the caller's own work. The verdict is the hand-over itself: the executor
                # waits for the next child's descriptors before the next job, and takes the
                # end of the hand-over socket (this process exiting) as "not clean".
                clean = self.clean_up()
            except (WorkerGone, OSError, ValueError):  # the executor is gone (or confused)
                os._exit(0)
            if not clean:
                os._exit(3)  # the executor starts a fresh worker in our place

    def prepare_child(self) -> PreparedChild:
        """Fork and confine the next run's child ahead of time; it waits for its job.

        Called only when no process of an earlier run is left and the scratch is fresh.
        """
        (out_r, out_w), (err_r, err_w), (chan_r, chan_w), (job_r, job_w), (tick_r, tick_w), (end_r, end_w) = (
            os.pipe() for _ in range(6))
        # Prepared here, not in the child: every line of Python the child runs before its
        # job costs copy-on-write faults. The child's ends go above the range it fills
        # (so that no dup2 there overwrites one before it has been moved); its result
        # channel's number is no secret from the supervisor, which never reads it.
        theirs = [isolation.above_child_range(fd) for fd in (out_w, err_w, chan_w, job_r, tick_w, end_w)]
        _enlarge_pipe(chan_r)
        chan_fd = random.randrange(NULL_FD_CHILD + 1, self.limits.nofile - 3)
        self.pid_counter.reset()
        pid = os.fork()
        if pid == 0:
            self._child(theirs, chan_fd)
        for fd in theirs:
            os.close(fd)
        for fd in (chan_r, out_r, err_r, tick_r):  # the executor reads without blocking
            os.set_blocking(fd, False)
        self.seq += 1
        return PreparedChild(pid, os.pidfd_open(pid), isolation.above_child_range(end_r),
                             [job_w, chan_r, out_r, err_r, tick_r])

    def hand_over(self, prepared: PreparedChild) -> None:
        """Give the executor every pipe of the prepared child, keeping no copy: this
        process never holds a job's code, source, test inputs, output or result values,
        so no later run's child, forked from it, can find them in its memory. The
        message carries this worker's usage so far (for benchmarks)."""
        usage = HandOver.pack_usage(*_usage())
        try:
            socket.send_fds(self.handoff, [usage], prepared.fds)
        finally:
            for fd in prepared.fds:
                os.close(fd)
            prepared.fds = []

    def run_job(self) -> bytes:
        """Watch the prepared child, from its hand-over, until the harness reports the end
        of its run, it exits, or the executor sends ``Kill`` (deadlines and the output cap
        are the executor's: it reads the run's pipes). Then kill every process of the run,
        wait for the child's exit (the other processes are reaped by ``clean_up``) and
        return the reply (``Reply``: how the run ended, with the kernel's exit status,
        and when). After an end report the executor has usually answered its caller
        already and drops the reply.
        """
        prepared, self.prepared = self.prepared, None
        assert prepared is not None  # serve() and a clean clean_up() hand one over first
        self.last = prepared
        poller = select.poll()
        for fd in (prepared.pidfd, prepared.end_fd, JOB_FD_IN):
            poller.register(fd, select.POLLIN)
        status, end, killed = None, False, False  # end: the harness (or a forger) said so
        while status is None and not end and not killed:
            for fd, events in poller.poll():
                if fd == prepared.pidfd:
                    status = self._reap_run_child(prepared)
                elif fd == prepared.end_fd:
                    end = bool(events & select.POLLIN)
                    if not end:  # closed by the program without a report: the exit decides
                        poller.unregister(fd)
                else:  # a control for an earlier run is stale
                    killed = Kill.read(JOB_FD_IN) == self.seq
        ended = time.monotonic()
        if end and status is None:  # see END_GRACE_S
            time.sleep(END_GRACE_S)
        _kill_run(prepared, self.run_uid)
        if status is None:  # killed just now: waits only for its exit
            status = self._reap_run_child(prepared)
        return Reply.pack(self.seq, ended, os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                          os.WTERMSIG(status) if os.WIFSIGNALED(status) else None)

    @staticmethod
    def _reap_run_child(prepared: PreparedChild) -> int:
        _, status = os.waitpid(prepared.pid, 0)
        prepared.reaped = True
        return status

    def clean_up(self) -> bool:
        """Reap, check no process is left, wipe the scratch, prepare the next child and
        hand it over; False (nothing handed over) when the worker is not clean."""
        last, self.last = self.last, None
        assert last is not None  # run_job() set it
        os.close(last.pidfd)
        os.close(last.end_fd)
        if not self._reap_and_check() or self.kernel_state.leftover() is not None:
            return False
        try:
            self.scratch = self.scratch_dir.reset()
            if not self._memory_released():
                return False
            self.prepared = self.prepare_child()
            self.hand_over(self.prepared)
        except OSError:
            return False
        return True

    def _memory_released(self) -> bool:
        """Whether the worker's memory group holds no more anonymous or shared memory than
        before its first run (give or take ``MEMORY_SLACK_BYTES``): what a run pinned
        (SysV shared memory in its IPC namespace, freed by the kernel shortly after its
        last process) would otherwise count against every later run. Waits up to
        ``MEMORY_RELEASE_TIMEOUT_S`` for the kernel to release it."""
        if self.memory_stat is None:
            return True
        deadline = None  # (a clean run's check makes no object it need not make)
        while self.memory_stat.held_bytes() > self.memory_ceiling:
            now = time.monotonic()
            if deadline is None:
                deadline = now + MEMORY_RELEASE_TIMEOUT_S
            elif now > deadline:
                return False
            time.sleep(0.002)
        return True

    def _owner(self) -> tuple[int, int]:
        uid = self.run_uid if self.run_uid is not None else os.geteuid()
        return uid, (self.run_uid if self.run_uid is not None else os.getegid())

    def _child(self, fds: list[int], chan_fd: int) -> None:
        """In the forked child: wire descriptors, confine, wait for the job, run it.

        Never returns. The job (inputs only, never expected outputs) arrives on a pipe
        after confinement, so nothing of it exists before the child is locked down.
        """
        try:
            out_w, err_w, chan_w, job_r, tick_w, end_w = fds  # all above the range filled here
            os.dup2(self.devnull, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            os.dup2(job_r, JOB_FD_CHILD, inheritable=False)
            os.dup2(self.devnull_w, NULL_FD_CHILD, inheritable=False)
            os.dup2(chan_w, chan_fd, inheritable=False)
            os.dup2(tick_w, chan_fd + 1, inheritable=False)
            os.dup2(end_w, chan_fd + 2, inheritable=False)
            os.closerange(NULL_FD_CHILD + 1, chan_fd)
            os.closerange(chan_fd + 3, 1 << 16)
            isolation.confine_child(self.idle_limits, self.run_uid, self.run_uid, self.scratch,
                                    self.child_installs_filter, self.private_ipc)
            sys.stdin, sys.stdout, sys.stderr = self.streams
            # typeshed declares these Final; the child rebinds them on purpose (a program's
            # sys.__stdout__ is its own stream too).
            sys.__stdin__, sys.__stdout__, sys.__stderr__ = self.streams  # type: ignore[misc]
            del fds
            child.warm_up(*self.warm_up_job, self.new_globals, self.to_py4)
            job = marshal.loads(read_frame(JOB_FD_CHILD))
            code = marshal.loads(read_frame(JOB_FD_CHILD))
            os.close(JOB_FD_CHILD)
            cpu = int(job["timeout_s"]) + 1  # lowering a limit needs no privilege
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
            child.register_source(job["filename"], job["source"])
            chan = child.Channel(chan_fd, job["token"], tick_fd=chan_fd + 1, end_fd=chan_fd + 2)
            if job["mode"] == "certify":  # its prints are dropped: they need not go anywhere
                os.dup2(NULL_FD_CHILD, 1)
                os.dup2(NULL_FD_CHILD, 2)
            os.close(NULL_FD_CHILD)
        except BaseException as exc:  # noqa: BLE001 - refuse to run unconfined
            os.write(2, f"boa: sandbox setup failed: {type(exc).__name__}: {exc}\n".encode())
            os._exit(125)
        try:
            if job["mode"] == "certify":
                child.certify_solution(job, code, chan, self.new_globals, self.to_py4)
            child.run_program(job, code, chan, self.new_globals)
        finally:
            os._exit(1)  # both exit themselves; never fall back into the supervisor's code

    def _reap_and_check(self) -> bool:
        """Reap every child; the worker is clean when no process but itself remains."""
        if self.children is not None and self.children.none():
            return True  # the common case, without polling or listing /proc
        deadline = time.monotonic() + REAP_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return self._no_strays()
            if pid == 0:
                time.sleep(0.0005)
        return False

    def _no_strays(self) -> bool:
        if os.getpid() != 1 or not self.caps.proc_hidepid:
            return True  # without a private /proc the absence of children is the check
        return [p for p in os.listdir("/proc") if p.isdigit() and p != "1"] == []


def _kill_run(prepared: PreparedChild, run_uid: int | None) -> None:
    """SIGKILL the run's child (through its pidfd: also without a PID namespace) and every
    other process of the run (``isolation.kill_everything_else``)."""
    if not prepared.reaped:
        try:
            signal.pidfd_send_signal(prepared.pidfd, signal.SIGKILL)
        except ProcessLookupError:
            pass
    isolation.kill_everything_else(run_uid)


def _enlarge_pipe(fd: int) -> None:
    """Let a run's result frames fit in its channel without the executor reading them
    while the run goes on (it reads them after the reply); the default size stays when
    the kernel refuses."""
    try:
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, CHANNEL_PIPE_BYTES)
    except OSError:
        pass


def _warm_up_job() -> tuple[bytes, bytes]:
    """A job and a no-op program, marshalled like real ones, for ``child.warm_up``."""
    job = {"mode": "run", "filename": child.WARM_UP_FILENAME, "source": "pass\n",
           "diagnostics": "verbatim", "timeout_s": 5.0, "output_cap": 2048,
           "token": bytes(16)}
    return marshal.dumps(job), marshal.dumps(compile("pass\n", child.WARM_UP_FILENAME, "exec"))


def _usage() -> tuple[float, int]:
    """CPU seconds and minor page faults of the supervisor and all its reaped run
    children so far (for benchmarks)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return (own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime,
            own.ru_minflt + children.ru_minflt)


def _seccomp_available(caps: isolation.Capabilities) -> bool:
    try:
        seccomp.build_filter()
        seccomp.build_filter(supervisor=True)
    except Exception as exc:  # noqa: BLE001 - optional layer
        caps.warnings.append(f"no seccomp filter ({exc})")
        return False
    return True


def _prepared_std_streams() -> tuple:
    """Text streams on fds 0/1/2 for the run's child, made once (the child only swaps
    them in: its fds 0/1/2 are /dev/null and its output pipes by then)."""
    import io

    def stream(fd: int, mode: str):
        return io.TextIOWrapper(io.FileIO(fd, mode, closefd=False), encoding="utf-8",
                                errors="backslashreplace", line_buffering=True)

    return stream(0, "r"), stream(1, "w"), stream(2, "w")


