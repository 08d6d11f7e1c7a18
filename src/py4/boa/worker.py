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
blocked reading its job from a pipe. The supervisor passes that pipe and the child's
result channel to the executor, which writes the job and reads the results directly (so
the supervisor never holds code, inputs or result values).

For each job it enforces the wall-clock and per-test deadlines and the output cap. When
the harness reports the end of the run (``!`` and the exit status on the tick pipe) the
supervisor stops every process of the run (SIGSTOP to all, as PID 1), collects what is in
the output pipes and replies at once; only then does it kill them all, wait for their
teardown and reap them, check that none remain, wipe the scratch tmpfs and prepare the
next child, and hand it over (the hand-over is the "clean" verdict; a worker that is
not clean exits instead). Runs that end otherwise (crash, timeout,
output cap, ``os._exit``) are killed and reaped before the reply, as the exit status then
comes from the kernel.
"""

from __future__ import annotations

import dataclasses
import fcntl
import gc
import importlib
import json
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
from py4.boa.protocol import JobHeader, WorkerGone, read_frame, write_message

JOB_FD_IN, JOB_FD_OUT = 0, 1
READ_CHUNK = 65536
JOB_FD_CHILD = 3  # where a prepared child reads its job
CHANNEL_PIPE_BYTES = 2**20  # pipe size asked for a run's result channel
REAP_TIMEOUT_S = 2.0  # a run's processes must all be gone this long after the kill
IDLE_CPU_LIMIT_S = 600  # CPU limit while a prepared child waits (lowered per job)


@dataclass
class PreparedChild:
    """A confined child waiting for its job: its watch, and the ends of its pipes."""

    pid: int
    watch: "RunWatch"  # its stdout, stderr, tick pipe and pidfd, read by the supervisor
    job_fd: int  # handed to the executor, which writes the job
    chan_fd: int  # handed to the executor, which reads the results


def main(argv: list[str]) -> None:
    """Entry point of a worker process; ``argv[0]`` is its JSON configuration."""
    config = json.loads(argv[0])
    # No parent-death signal here: the kernel sends it when the *thread* that started us
    # exits, and executors restart workers from short-lived pool threads. The job pipe
    # ties us to the executor instead: when it dies, the supervisor's next read or write
    # on the pipe fails and the supervisor exits, taking the namespace with it.
    if os.getppid() != config["parent_pid"]:
        os._exit(1)  # the executor died before we started
    if config["dialect"] == "py4":
        _import_runtime_only()
    for name in PRELOAD_MODULES:
        importlib.import_module(name)
    new_globals = new_globals_factory(config["dialect"])
    to_py4 = _to_py4(config["dialect"])
    caps = isolation.Capabilities()
    try:  # before unsharing: the group's files are in the host's filesystem
        cgroups.join(config.get("cgroups", []))
    except OSError as exc:
        caps.warnings.append(f"could not join the worker's cgroups ({exc})")
    if config["isolate"]:
        isolation.isolate_worker(caps, user_namespace=config.get("user_namespace", False))
    else:
        caps.warnings.append("isolation disabled by configuration")
    pid = os.fork()
    if pid:
        _wait_for_supervisor(pid, config["handoff_fd"])
    isolation.die_with_parent()  # the outer process is single-threaded: this is reliable
    Supervisor(config, caps, new_globals, to_py4).serve()


def _import_runtime_only() -> None:
    """Import ``py4.lang.runtime`` without the package's ``__init__`` (the compiler).

    Runs never compile: the worker needs only the runtime, and every module it does
    not load is memory that each run's fork would otherwise have to map.
    """
    import importlib.util
    import types

    spec = importlib.util.find_spec("py4.lang")
    package = types.ModuleType("py4.lang")
    package.__path__ = list(spec.submodule_search_locations)
    package.__spec__, package.__package__ = spec, "py4.lang"
    sys.modules.setdefault("py4.lang", package)
    importlib.import_module("py4.lang.runtime")


def _to_py4(dialect: str):
    if dialect == "py4":
        from py4.lang.runtime import to_py4

        return to_py4
    return lambda value: value


def _wait_for_supervisor(pid: int, handoff_fd: int) -> None:
    """The outer process only waits: it keeps no copy of the job pipes."""
    for fd in (JOB_FD_IN, JOB_FD_OUT, handoff_fd):
        os.close(fd)
    signal.signal(signal.SIGTERM, lambda *_: os.kill(pid, signal.SIGKILL))
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
        except ChildProcessError:
            os._exit(0)
        except InterruptedError:
            continue


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
        self.sink = bytearray(READ_CHUNK)  # shared by every run's watch
        self.devnull = _above_child_range(os.open("/dev/null", os.O_RDONLY))  # a child's stdin
        self.dying_pidfd: int | None = None  # of a child killed after an early reply
        self.kill_pending = False  # the last run's processes are stopped, not yet killed
        self.scratch = isolation.reset_scratch(caps, *self._owner(), self.limits,
                                               config.get("host_scratch"))
        isolation.prepare_supervisor(self.scratch)

    def serve(self) -> None:
        self.streams = _prepared_std_streams()
        self.handoff = socket.socket(fileno=self.config["handoff_fd"])
        gc.collect()
        gc.freeze()  # keep the warm heap shared copy-on-write with every run's child
        self.prepared = self.prepare_child()
        self.hand_over(self.prepared)
        self.usage = _usage()
        write_message(JOB_FD_OUT, {"ready": True, "caps": self.caps.to_json(), "pid": os.getpid()})
        while True:
            try:
                job = JobHeader.read(JOB_FD_IN)
            except (WorkerGone, OSError, ValueError):
                os._exit(0)
            reply = self.run_job(job)
            # As of the end of the last clean-up (measured there, off the run's path).
            reply["worker_cpu_s"], reply["worker_minflt"] = self.usage
            # Cleaning up and preparing the next child after the reply overlaps both with
            # the caller's own work. The verdict is the hand-over itself: the executor
            # waits for the next child's descriptors before the next job, and takes the
            # end of the hand-over socket (this process exiting) as "not clean".
            try:
                write_message(JOB_FD_OUT, reply)
                clean = self.clean_up()
            except OSError:  # the executor is gone
                os._exit(0)
            if not clean:
                os._exit(3)  # the executor starts a fresh worker in our place

    def prepare_child(self) -> PreparedChild:
        """Fork and confine the next run's child ahead of time; it waits for its job.

        Called only when no process of an earlier run is left and the scratch is fresh.
        """
        (out_r, out_w), (err_r, err_w), (chan_r, chan_w), (job_r, job_w), (tick_r, tick_w) = (
            os.pipe() for _ in range(5))
        # Prepared here, not in the child: every line of Python the child runs before its
        # job costs copy-on-write faults. The child's ends go above the range it fills
        # (so that no dup2 there overwrites one before it has been moved); its result
        # channel's number is no secret from the supervisor, which never reads it.
        theirs = [_above_child_range(fd) for fd in (out_w, err_w, chan_w, job_r, tick_w)]
        _enlarge_pipe(chan_r)
        chan_fd = random.randrange(JOB_FD_CHILD + 1, self.limits.nofile - 2)
        pid = os.fork()
        if pid == 0:
            self._child(theirs, chan_fd)
        for fd in theirs:
            os.close(fd)
        return PreparedChild(pid, RunWatch(pid, [out_r, err_r, tick_r], self.sink), job_w, chan_r)

    def hand_over(self, prepared: PreparedChild) -> None:
        """Give the executor the prepared child's job pipe (it writes the job straight to
        the child) and result channel (it reads the results itself), keeping no copy: this
        process never holds a job's code, source, test inputs or result values, so no
        later run's child, forked from it, can find them in its memory."""
        socket.send_fds(self.handoff, [b"c"], [prepared.job_fd, prepared.chan_fd])
        os.close(prepared.job_fd)
        os.close(prepared.chan_fd)

    def run_job(self, job: dict) -> dict:
        """Watch the prepared child run the job the executor is writing to it.

        ``job`` holds only what supervision needs (mode, deadlines, output cap).
        When this returns, every process of the run is dead, or (after an early end, as
        PID 1 of the namespace) stopped by SIGSTOP: none runs another instruction of the
        program, and ``clean_up`` kills them after the reply, so that their teardown
        does not delay it.
        """
        prepared, self.prepared = self.prepared, None
        watch = prepared.watch
        watch.start(job, time.monotonic())
        self.kill_pending = False
        try:
            watch.loop()
        finally:
            if watch.early and isolation.stop_everything_else():
                self.kill_pending = True
            else:
                if watch.early:
                    signal.pidfd_send_signal(watch.pidfd, signal.SIGKILL)
                isolation.kill_everything_else(self.run_uid)
            watch.finish()
        self.dying_pidfd = watch.pidfd if watch.early else None
        self.last_watch = watch  # closed by clean_up, after the reply
        return watch.reply()

    def clean_up(self) -> bool:
        """Reap, check no process is left, wipe the scratch, prepare the next child and
        hand it over; False (nothing handed over) when the worker is not clean."""
        self.last_watch.close()
        if self.kill_pending:
            isolation.kill_everything_else(self.run_uid)
            self.kill_pending = False
        dying, self.dying_pidfd = self.dying_pidfd, None
        if dying is not None:  # an early reply: wait for the killed child's teardown
            ready = select.poll()
            ready.register(dying, select.POLLIN)
            ready.poll(REAP_TIMEOUT_S * 1000)
            os.close(dying)
        if not self._reap_and_check():
            return False
        try:
            self.scratch = isolation.reset_scratch(self.caps, *self._owner(), self.limits,
                                                   self.config.get("host_scratch"))
            self.prepared = self.prepare_child()
            self.hand_over(self.prepared)
        except OSError:
            return False
        self.usage = _usage()
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
            out_w, err_w, chan_w, job_r, tick_w = fds  # all above the range filled here
            os.dup2(self.devnull, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            os.dup2(job_r, JOB_FD_CHILD, inheritable=False)
            os.dup2(chan_w, chan_fd, inheritable=False)
            os.dup2(tick_w, chan_fd + 1, inheritable=False)
            os.closerange(JOB_FD_CHILD + 1, chan_fd)
            os.closerange(chan_fd + 2, 1 << 16)
            isolation.confine_child(self.idle_limits, self.run_uid, self.run_uid, self.scratch, self.use_seccomp)
            sys.stdin, sys.stdout, sys.stderr = self.streams
            sys.__stdin__, sys.__stdout__, sys.__stderr__ = self.streams
            del fds
            child.warm_up(*self.warm_up_job, self.new_globals, self.to_py4)
            job = marshal.loads(read_frame(JOB_FD_CHILD))
            code = marshal.loads(read_frame(JOB_FD_CHILD))
            os.close(JOB_FD_CHILD)
            cpu = int(job["timeout_s"]) + 1  # lowering a limit needs no privilege
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
            child.register_source(job["filename"], job["source"])
            chan = child.Channel(chan_fd, job["token"], tick_fd=chan_fd + 1)
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


def _enlarge_pipe(fd: int) -> None:
    """Let a run's result frames fit in its channel without the executor reading them
    while the run goes on (it reads them after the reply); the default size stays when
    the kernel refuses."""
    try:
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, CHANNEL_PIPE_BYTES)
    except OSError:
        pass


def _above_child_range(fd: int) -> int:
    """Move ``fd`` to a close-on-exec descriptor above any a run's child fills."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 256)
    os.close(fd)
    return high


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


class RunWatch:
    """Supervises one child: deadlines, output caps, exit status.

    Built when the child is prepared (its descriptors and pidfd are registered before the
    job exists, off the run's critical path); ``start`` arms it with the job.

    Reads the child's stdout and stderr (kept up to the cap for ``run`` jobs; for
    ``certify`` jobs read into a scratch buffer and dropped) and its tick pipe (``.`` per
    test started; ``!`` and the exit status byte when the harness has finished the run).
    Result frames never pass through here: the executor reads them.

    On ``!`` the run is over (``early``): the supervisor stops every process of the run
    at once (the child was waiting to be killed; a program that forges the bytes is
    stopped as if it had called ``os._exit``), reads what is already in the output
    pipes and replies; the kill and the kernel's teardown come after the reply.
    """

    def __init__(self, pid: int, fds: list[int], sink: bytearray):
        self.pid = pid
        self.out_fd, self.err_fd, self.tick_fd = fds
        self.sink = sink  # what is read only to be dropped lands here; zeroed after use
        self.sink_used = 0
        self.buffers = {self.out_fd: bytearray(), self.err_fd: bytearray()}
        self.overflow = {self.out_fd: False, self.err_fd: False}
        self.test_deadline: float | None = None
        self.reason: str | None = None
        self.status: int | None = None
        self.early = False  # the harness said the run was over; the child was killed then
        self.tick_bang = False  # a "!" was read; its status byte was not yet
        self.poller = select.poll()
        self.open_fds: set[int] = set()
        for fd in fds:
            os.set_blocking(fd, False)
            self._watch(fd)
        self.pidfd = os.pidfd_open(pid)
        self._watch(self.pidfd)

    def start(self, job: dict, started: float) -> None:
        self.job, self.started, self.ended = job, started, started
        self.keep_output = job["mode"] == "run"
        self.byte_cap = job["output_cap"] * 4 + 4
        self.deadline = started + job["timeout_s"]

    def _watch(self, fd: int) -> None:
        self.poller.register(fd, select.POLLIN)
        self.open_fds.add(fd)

    def _unwatch(self, fd: int) -> None:
        self.poller.unregister(fd)
        self.open_fds.discard(fd)

    def loop(self) -> None:
        while self.status is None:
            now = time.monotonic()
            limit = self.deadline if self.test_deadline is None else min(self.deadline, self.test_deadline)
            if now >= limit:
                self.reason = "timeout"
                return
            for fd, _ in self.poller.poll(max((limit - now) * 1000, 0)):
                if fd == self.pidfd:
                    self._collect_exit()
                else:
                    self._read(fd)
                if self.reason or self.early:
                    return

    def _collect_exit(self) -> None:
        _, status = os.waitpid(self.pid, 0)
        self.status = status
        self.ended = time.monotonic()
        self._unwatch(self.pidfd)
        os.close(self.pidfd)

    def _read(self, fd: int) -> bool:
        """Read what ``fd`` has; False when nothing was there (or at end of file)."""
        if fd == self.tick_fd:
            return self._read_ticks()
        if not self.keep_output:
            return self._read_into_sink(fd) > 0
        try:
            data = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            return False
        if not data:
            self._unwatch(fd)
            return False
        buf = self.buffers[fd]
        room = self.byte_cap - len(buf)
        if len(data) > room:
            self.overflow[fd] = True
            data = data[:max(room, 0)]
        buf += data
        if self._over_cap(fd):
            self.reason = "output_limit"
        return True

    def _read_into_sink(self, fd: int) -> int:
        try:
            count = os.readv(fd, [self.sink])
        except BlockingIOError:
            return 0
        if not count:
            self._unwatch(fd)
        self.sink_used = max(self.sink_used, count)
        return count

    def _read_ticks(self) -> bool:
        """Parse the tick pipe in ``sink`` (a program may write anything here, and nothing
        it wrote may stay in the memory that later children inherit)."""
        count = self._read_into_sink(self.tick_fd)
        if not count:
            return False
        if self.tick_bang:  # the status byte of a "!" that ended the previous read
            self.tick_bang = False
            self._done(self.sink[0])
            return True
        end = self.sink.find(b"!", 0, count)
        if self.job["mode"] == "certify" and self.sink.find(b".", 0, count if end < 0 else end) >= 0:
            self.test_deadline = time.monotonic() + self.job["per_test_timeout_s"]
        if end == count - 1:
            self.tick_bang = True
        elif end >= 0:
            self._done(self.sink[end + 1])
        return True

    def _done(self, exit_code: int) -> None:
        if self.status is not None:
            return  # the kernel's status came first
        self.status = exit_code << 8  # as waitpid reports an exit with that code
        self.ended = time.monotonic()
        self.early = True

    def _over_cap(self, fd: int) -> bool:
        buf, cap = self.buffers[fd], self.job["output_cap"]
        return len(buf) > cap and len(buf.decode("utf-8", "replace")) > cap

    def finish(self) -> None:
        """After every process was killed: collect the exit status and drain the pipes.

        An ``early`` run's output is complete once what is in the pipes is read (the
        harness flushed it before saying the run was over); otherwise the status is
        the kernel's and the pipes are read to their end (every writer is dead).
        """
        if self.early:  # the status is the harness's; the pidfd stays open for the clean-up
            self._unwatch(self.pidfd)
            ready = {fd for fd, _ in self.poller.poll(0)}  # one call, not a read per pipe
            for fd in (self.out_fd, self.err_fd):
                while fd in ready and fd in self.open_fds and self._read(fd):
                    pass
        else:
            if self.status is None:
                try:
                    self._collect_exit()
                except ChildProcessError:
                    self.status = -1
            drain_until = time.monotonic() + 0.5
            while self.open_fds and time.monotonic() < drain_until:
                for fd, _ in self.poller.poll(max((drain_until - time.monotonic()) * 1000, 0)):
                    self._read(fd)

    def close(self) -> None:
        """Close the run's pipes and zero what the run wrote into ``sink`` (before any
        later child is forked)."""
        for fd in (self.out_fd, self.err_fd, self.tick_fd):
            os.close(fd)
        self.sink[:self.sink_used] = bytes(self.sink_used)

    def reply(self) -> dict:
        cap = self.job["output_cap"]
        out, out_cut = _decode_capped(self.buffers[self.out_fd], cap, self.overflow[self.out_fd])
        err, err_cut = _decode_capped(self.buffers[self.err_fd], cap, self.overflow[self.err_fd])
        status = self.status if self.status is not None and self.status >= 0 else None
        return {
            "reason": self.reason,
            "exit_code": os.WEXITSTATUS(status) if status is not None and os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if status is not None and os.WIFSIGNALED(status) else None,
            "stdout": out, "stderr": err, "stdout_truncated": out_cut, "stderr_truncated": err_cut,
            "duration_s": round(self.ended - self.started, 6), "early": self.early,
        }


def _decode_capped(data: bytearray, cap: int, overflowed: bool) -> tuple[str, bool]:
    text = data.decode("utf-8", "replace")
    if len(text) > cap or overflowed:
        return text[:cap], True
    return text, False


if __name__ == "__main__":  # pragma: no cover - started by the executor
    main(sys.argv[1:])
