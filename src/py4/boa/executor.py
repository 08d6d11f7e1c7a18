"""Boa's executor: run untrusted Python-4 programs fast, in isolated pre-forked workers.

``Executor`` compiles in the trusted parent (``frontend``), then hands the code object to
one of its workers (``worker``), each an isolated process that forks a confined child per
run. See ``docs/boa.md`` for what the sandbox covers and what it does not.

    with Executor(workers=2, timeout_s=5.0) as ex:
        result = ex.run('print("hi")\\n')
        results = ex.run_many([src1, src2, src3])

Statuses: ``ok`` (exit code 0), ``compile_error``, ``runtime_error`` (uncaught exception,
non-zero exit, or a crash such as a segfault), ``timeout`` (wall clock or CPU), ``memory``
(MemoryError under the memory limit), ``output_limit`` (stdout or stderr over the cap;
the run is stopped), ``killed`` (the process died of a signal the sandbox did not send,
the program flooded or forged the harness's own pipes, or the sandbox could not be set up).
"""

from __future__ import annotations

import itertools
import json
import logging
import marshal
import os
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, Iterable, Literal, get_args

from py4.boa import cgroups, frontend
from py4.boa.isolation import Limits
from py4.boa.protocol import (HandOver, Job, JobHeader, ReadyMessage, Rendering, RunReply, WorkerConfig,
                              WorkerGone, frame, is_ready_message, read_message, write_all)
from py4.boa.run_watch import RunWatch

log = logging.getLogger(__name__)

RunStatus = Literal["ok", "compile_error", "runtime_error", "timeout", "memory", "output_limit", "killed"]
STATUSES: tuple[RunStatus, ...] = get_args(RunStatus)
TRUNCATION_MARKER = "…[output truncated]"
# A traceback is Boa's report, not program output: it has its own cap, keeping its end
# (the exception line), so that a small output cap never hides what went wrong.
REPORT_CAP = 8192
REPORT_CUT = "…[traceback truncated]\n"
# Programs run as a uid/gid that no user has, one per worker, spread over a block per
# executor so that executors of different processes (tests, campaigns) rarely share one
# (a shared uid would share RLIMIT_NPROC; namespaces keep everything else apart).
RUN_UID_BASE, RUN_UID_BLOCKS, RUN_UID_BLOCK = 100_000, 15_000, 64
_executor_seq = itertools.count()


def _run_uid_block() -> int:
    """First uid of a fresh block for a new executor."""
    block = (os.getpid() * 31 + next(_executor_seq)) % RUN_UID_BLOCKS
    return RUN_UID_BASE + block * RUN_UID_BLOCK
BACKSTOP_GRACE_S = 3.0  # extra time before the parent kills a worker that does not answer
WORKER_START_TIMEOUT_S = 60.0
STOP_GRACE_S = 5.0  # a stopping worker's sweep of its runs' processes, then SIGKILL
# How long a worker may take to clean up after a run and hand over its next child (its
# own reaping waits up to 2 s) before the parent replaces it.
VERDICT_TIMEOUT_S = 2.0 + BACKSTOP_GRACE_S
TOKEN_BYTES = 16  # per-run random token framing the child's result channel
CRASH_SIGNALS: dict[int, str] = {signal.SIGSEGV: "Segmentation fault", signal.SIGBUS: "Bus error",
                 signal.SIGILL: "Illegal instruction", signal.SIGFPE: "Floating point exception",
                 signal.SIGABRT: "Aborted"}
_SRC_ROOT = str(Path(__file__).resolve().parents[2])
WORKER_ARGV0 = "boa-worker"
# What a worker runs first: read the configuration frame (4-byte length, JSON) from its
# job pipe, find the package, start. No path or setting appears on its command line.
WORKER_BOOT = (
    "import json, os, sys\n"
    "def read(n):\n"
    "    data = b''\n"
    "    while len(data) < n:\n"
    "        chunk = os.read(0, n - len(data))\n"
    "        if not chunk: os._exit(1)\n"
    "        data += chunk\n"
    "    return data\n"
    "config = json.loads(read(int.from_bytes(read(4), 'big')))\n"
    "sys.path.insert(0, config.pop('src_root'))\n"
    "from py4.boa.worker import main\n"
    "main(config)\n")


@dataclass(kw_only=True)
class RunResult:
    """The outcome of one run; ``status`` is one of ``STATUSES``."""

    status: RunStatus
    exit_code: int | None
    stdout: str
    stderr: str
    diagnostics: list[dict[str, Any]] = field(default_factory=list)  # as diagnostic_to_json gives them
    duration_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RunRequest:
    """One program for ``run_many`` with its own options."""

    source: str | bytes
    timeout_s: float | None = None
    diagnostics: Rendering = "verbatim"
    filename: str = "<py4>"


class WorkerError(RuntimeError):
    """A worker could not be started (the message says why)."""


class _Worker:
    """The parent's handle on one worker process (used by one thread at a time)."""

    def __init__(self, index: int, settings: _Settings, cgroup: cgroups.WorkerCgroup, uid_block: int):
        self.index, self.cgroup, self.settings = index, cgroup, settings
        # Scratch for a worker without a private root (isolation off or refused), made
        # here and removed by ``remove_scratch``: a killed worker cannot remove it.
        self.host_scratch = tempfile.mkdtemp(prefix="boa-scratch-")
        self.run_uid = uid_block + index % RUN_UID_BLOCK
        self.proc: subprocess.Popen[bytes] | None = None
        self.control_fd = self.reply_fd = -1  # the worker's stdin (Kill) and stdout (messages, Reply)
        self.handoff: socket.socket | None = None  # the worker passes us prepared children
        self.handoff_poll: select.poll | None = None  # is the next child handed over?
        self.child_fds: dict[str, int] | None = None  # the prepared child's pipes (HandOver.FDS)
        self.caps: dict[str, Any] = {}
        self.verdict_pending = False  # the worker owes us its next child (= "clean")
        self.handover_seen = False  # child_ready saw it arrive: receive without polling again
        self.tokens = b""  # random bytes, TOKEN_BYTES per run (one getrandom per 256 runs)
        self.seq = 0  # runs sent to this worker (the supervisor's replies carry it)
        self.cpu_s = 0.0  # CPU time of this worker's supervisor and reaped runs (so far)
        self.minflt = 0  # their minor page faults
        self.cpu_s_lost, self.minflt_lost = 0.0, 0  # the same for the workers this one replaced

    def start(self) -> None:
        self.seq, self.handover_seen = 0, False
        self.handoff, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        settings = self.settings
        config: WorkerConfig = {
            "dialect": settings.dialect, "isolate": settings.isolate, "seccomp": settings.seccomp,
            "debug": settings.debug, "user_namespace": settings.user_namespace, "limits": asdict(settings.limits),
            "run_uid": self.run_uid, "cgroups": self.cgroup.to_config(), "host_scratch": self.host_scratch,
            "parent_pid": os.getpid(), "handoff_fd": theirs.fileno(), "src_root": _SRC_ROOT}
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
        try:
            # argv holds nothing of the configuration (a run can read /proc/self/cmdline):
            # the worker reads it from its job pipe first. argv[0] is a plain name, so the
            # interpreter finds its base installation (not the virtual environment, whose
            # path would show in sys.executable), and -S keeps site-packages off sys.path.
            self.proc = proc = subprocess.Popen(
                [WORKER_ARGV0, "-I", "-S", "-c", WORKER_BOOT], executable=sys.executable,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=None if config["debug"] else subprocess.DEVNULL,
                env=env, close_fds=True, pass_fds=[theirs.fileno()], start_new_session=True)
        finally:
            theirs.close()
        self.control_fd, self.reply_fd = _pipe_fd(proc.stdin), _pipe_fd(proc.stdout)
        try:
            write_all(self.control_fd, frame(json.dumps(config).encode("utf-8")))
        except OSError:
            pass  # the worker died at once: await_ready reports it
        self.handoff.setblocking(False)  # polled first (and a hand-over is one message)
        self.handoff_poll = select.poll()  # kept: asked before every dispatch
        self.handoff_poll.register(self.handoff.fileno(), select.POLLIN)

    def await_ready(self) -> None:
        ready = self._read_message(WORKER_START_TIMEOUT_S)
        if ready is None or not self._receive_child(WORKER_START_TIMEOUT_S):
            self.kill()
            raise WorkerError(f"Boa worker {self.index} did not start (see stderr with debug=True)")
        self.caps = ready["caps"]

    def _receive_child(self, timeout_s: float) -> bool:
        """Take the pipes of the worker's next prepared child (sent just before the
        worker's ready message, and after each run's clean-up) and its usage so far."""
        if self.handoff is None or self.handoff_poll is None:  # killed, not restarted
            return False
        if not self.handover_seen and not self.handoff_poll.poll(timeout_s * 1000):
            return False
        self.handover_seen = False
        try:  # close-on-exec: they must not leak into the caller's own children
            data, fds, _, _ = socket.recv_fds(self.handoff, HandOver.USAGE.size, len(HandOver.FDS),
                                              socket.MSG_CMSG_CLOEXEC)
        except OSError:
            return False
        try:
            if len(fds) != len(HandOver.FDS):
                raise ValueError(f"{len(fds)} descriptors handed over")
            self.cpu_s, self.minflt = HandOver.unpack_usage(data)
        except ValueError:
            for fd in fds:
                os.close(fd)
            return False
        self.child_fds = dict(zip(HandOver.FDS, fds, strict=True))  # (the count is checked above)
        return True

    def call(self, header: JobHeader, code: bytes, backstop_s: float) -> RunReply | None:
        """Send a job and follow the run to its end; None when the worker died or hung.

        First collects the verdict on the previous run's clean-up, and replaces the
        worker when it was not clean.
        """
        if self.proc is None:  # an earlier restart failed: try again (raises WorkerError)
            self.restart()
        if self.verdict_pending:  # the next child's descriptors are the "clean" verdict
            self.verdict_pending = False
            if not self._receive_child(VERDICT_TIMEOUT_S):
                log.warning("Boa worker %d was not clean after a run; replacing it", self.index)
                self.restart()
        if self.child_fds is None:  # an interrupted call (e.g. Ctrl-C) left the worker mid-run
            log.warning("Boa worker %d was left in the middle of a run; replacing it", self.index)
            self.restart()
        if len(self.tokens) < TOKEN_BYTES:
            self.tokens = os.urandom(TOKEN_BYTES * 256)
        token, self.tokens = self.tokens[:TOKEN_BYTES], self.tokens[TOKEN_BYTES:]
        fds, self.child_fds = self.child_fds, None
        if fds is None:  # restart() returns only once a child was handed over
            raise WorkerError(f"Boa worker {self.index} restarted without a prepared child")
        self.seq += 1  # the supervisor numbers its prepared children the same way
        job = _job_bytes({**header, "token": token}, code)
        started = time.monotonic()
        # The job first: everything else overlaps with the child's wake-up.
        try:
            write_all(fds["job"], job)
        except OSError:
            pass  # the child is gone; its supervisor reports how it ended
        oom_before = self.cgroup.oom_kills()
        watch = RunWatch(fds=fds, token=token, job=header, seq=self.seq, reply_fd=self.reply_fd,
                         control_fd=self.control_fd)
        try:
            reply = watch.wait(started, backstop_s)
        except (WorkerGone, OSError, ValueError):
            reply = None
        except Exception:  # a bug in reading one run is that run's outcome (logged with its traceback)
            log.exception("Boa worker %d: reading run %d failed; replacing the worker", self.index, self.seq)
            reply = None
        finally:
            watch.close()
        self.verdict_pending = reply is not None
        if reply is not None:
            reply["oom_killed"] = (reply["signal"] == signal.SIGKILL  # all it can explain
                                   and self.cgroup.oom_kills() > oom_before)
        return reply

    def child_ready(self) -> bool:
        """Whether the next job can go out at once (the next child was handed over)."""
        if not self.verdict_pending or self.proc is None or self.handoff_poll is None:
            return self.proc is not None
        self.handover_seen = bool(self.handoff_poll.poll(0))
        return self.handover_seen

    def _read_message(self, timeout_s: float) -> ReadyMessage | None:
        """The worker's ready message within ``timeout_s`` (None: lost or hung)."""
        poller = select.poll()
        poller.register(self.reply_fd, select.POLLIN)
        if not poller.poll(timeout_s * 1000):
            return None
        try:
            message = read_message(self.reply_fd)
        except (WorkerGone, OSError, ValueError):
            return None
        return message if is_ready_message(message) else None

    def kill(self) -> None:
        """Stop the worker and every process of its runs; returns when they are gone.

        SIGTERM first: the worker's outer process kills the supervisor and then (without
        a PID namespace, where runs' processes may have left the supervisor's group
        with ``setsid``) kills and reaps every process left in its tree. SIGKILL to the
        group is the backstop. Then the supervisor's end of the hand-over socket must
        close: it has stopped running (so it can no longer, e.g., recreate the scratch
        directory ``remove_scratch`` is about to remove).
        """
        if self.proc is None:
            return
        try:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            pass
        try:  # the whole group: outer process and supervisor (and with it every run)
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self._await_supervisor_exit()
        for stream in (self.proc.stdin, self.proc.stdout, self.handoff):
            if stream is not None:
                stream.close()
        for fd in (self.child_fds or {}).values():
            os.close(fd)
        self.proc, self.handoff, self.handoff_poll, self.child_fds = None, None, None, None
        self.control_fd = self.reply_fd = -1

    def _await_supervisor_exit(self) -> None:
        """Wait (≤ STOP_GRACE_S) for the end of the hand-over socket: only the supervisor
        holds its other end, so EOF means it has stopped running."""
        if self.handoff is None:
            return
        deadline = time.monotonic() + STOP_GRACE_S
        while (left := deadline - time.monotonic()) > 0:
            if not select.select([self.handoff], [], [], left)[0]:
                return
            try:
                data, fds, _, _ = socket.recv_fds(self.handoff, 64, len(HandOver.FDS))
            except BlockingIOError:
                continue
            except OSError:
                return
            for fd in fds:  # a child handed over meanwhile
                os.close(fd)
            if not data:
                return

    def remove_scratch(self) -> None:
        """Remove the host scratch directory (call when the worker is dead)."""
        shutil.rmtree(self.host_scratch, ignore_errors=True)

    def restart(self) -> None:
        self.kill()
        self.verdict_pending = False
        self.cpu_s_lost, self.cpu_s = self.cpu_s_lost + self.cpu_s, 0.0
        self.minflt_lost, self.minflt = self.minflt_lost + self.minflt, 0
        self.start()
        self.await_ready()


def _pipe_fd(stream: IO[bytes] | None) -> int:
    """The descriptor of a pipe ``Popen`` made (asked with ``subprocess.PIPE``: never None)."""
    if stream is None:
        raise WorkerError("the worker was started without its pipes")
    return stream.fileno()


@dataclass(frozen=True, kw_only=True)
class _Settings:
    """What every worker of one executor is started with (``WorkerConfig`` adds each one's own)."""

    dialect: frontend.Dialect
    isolate: bool
    seccomp: bool
    debug: bool
    user_namespace: bool
    limits: Limits


def _job_bytes(job: Job, code: bytes) -> bytes:
    """The job as a prepared child reads it: two frames (the job dict and the code object,
    both marshalled: cheap to load in the child), written at once (so that the child,
    woken by the first, need not wait again)."""
    # typeshed's marshal.dumps takes dict but no TypedDict (a plain dict at run time).
    return frame(marshal.dumps(job)) + frame(code)  # type: ignore[arg-type]


class Executor:
    """A pool of isolated workers running untrusted programs; a context manager.

    ``workers``: number of worker processes (default: one per core). ``timeout_s``: wall
    clock per run. ``output_cap``: characters kept of stdout and of stderr. ``memory_mb``:
    address-space limit of a run. ``dialect``: ``py4`` (default) or ``python3``.
    ``isolate=False`` turns namespaces off (for debugging only). ``user_namespace=True``
    makes a root worker enter a user namespace first, as a non-root one always does
    (programs then keep the worker's uid: see docs/boa.md). ``seccomp=False`` runs
    without the seccomp filter; with ``True`` (the default) an executor whose workers
    cannot install it does not start.

    Raises WorkerError when the workers cannot be started.
    """

    def __init__(self, workers: int | None = None, timeout_s: float = 5.0, output_cap: int = 2048,
                 *, memory_mb: int = 512, nproc: int = 32, dialect: frontend.Dialect = "py4",
                 isolate: bool = True, seccomp: bool = True, user_namespace: bool = False,
                 debug: bool = False):
        if dialect not in ("py4", "python3"):
            raise ValueError(f"unknown dialect {dialect!r}; expected 'py4' or 'python3'")
        if timeout_s <= 0 or output_cap < 0:
            raise ValueError("timeout_s must be > 0 and output_cap >= 0")
        self.timeout_s, self.output_cap, self.dialect = float(timeout_s), int(output_cap), dialect
        limits = Limits(cpu_s=int(timeout_s) + 1, memory_bytes=memory_mb * 2**20, nproc=nproc)
        settings = _Settings(dialect=dialect, isolate=isolate, seccomp=seccomp, debug=debug,
                             user_namespace=user_namespace, limits=limits)
        self._limits = limits
        count = workers or os.cpu_count() or 1
        # Cgroup names are visible to runs (/proc/self/cgroup): random, they carry nothing
        # (not the executor's PID, not an address).
        tag = f"boa-{secrets.token_hex(8)}"
        groups = [cgroups.create(f"{tag}-{i}", limits.memory_bytes, nproc + 16) if isolate
                  else cgroups.WorkerCgroup(error="isolation disabled") for i in range(count)]
        self._cgroup_warning = next((g.error for g in groups if g.error), None)
        uid_block = _run_uid_block()
        self._workers = [_Worker(i, settings, group, uid_block) for i, group in enumerate(groups)]
        self._idle: list[_Worker] = []  # least recently used first
        self._idle_changed = threading.Condition()
        self._closed = False
        # Workers and cgroups go away with the executor even if close() is never called.
        self._finalizer = weakref.finalize(self, _shut_down, self._workers)
        try:
            for worker in self._workers:
                worker.start()
            for worker in self._workers:
                worker.await_ready()
                self._release(worker)
        except BaseException:
            self.close()
            raise
        caps = self.capabilities
        if seccomp and not caps.get("seccomp"):
            self.close()
            reasons = "; ".join(w for w in caps.get("warnings", []) if "seccomp" in w) or "unknown"
            raise WorkerError(f"the seccomp filter cannot be installed here ({reasons}); pass "
                              "seccomp=False to run without it, knowingly")
        for warning in caps.get("warnings", []):
            log.warning("Boa sandbox: %s", warning)

    # ------------------------------------------------------------------ lifecycle
    @property
    def capabilities(self) -> dict[str, Any]:
        """What isolation the workers actually got (namespaces, root, privileges, …)."""
        caps = dict(self._workers[0].caps)
        caps["cgroup_limits"] = self._cgroup_warning is None
        if self._cgroup_warning:
            caps["warnings"] = [*caps.get("warnings", []), self._cgroup_warning]
        return caps

    def worker_cpu_seconds(self) -> float:
        """CPU seconds used by all workers' supervisors and runs, as of each worker's last
        clean-up (for benchmarks)."""
        return sum(w.cpu_s + w.cpu_s_lost for w in self._workers)

    def worker_page_faults(self) -> int:
        """Minor page faults of all workers' supervisors and runs, as of each worker's
        last clean-up (for benchmarks)."""
        return sum(w.minflt + w.minflt_lost for w in self._workers)

    @property
    def workers(self) -> int:
        return len(self._workers)

    def close(self) -> None:
        """Kill the workers (and every run in them) and remove their cgroups."""
        self._closed = True
        self._finalizer()

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ running
    def run(self, source: str | bytes, *, timeout_s: float | None = None,
            diagnostics: Rendering = "verbatim", filename: str = "<py4>") -> RunResult:
        """Compile and run one program. Programs read an empty stdin (``/dev/null``).

        Never raises for anything the program does; raises ValueError for a bad
        ``diagnostics`` mode, RuntimeError when the executor is closed, and WorkerError
        when a lost worker cannot be replaced.
        """
        if diagnostics not in ("verbatim", "generic"):
            raise ValueError(f"unknown diagnostics mode {diagnostics!r}; expected 'verbatim' or 'generic'")
        compiled = frontend.compile_source(source, filename, self.dialect)
        diags = [frontend.diagnostic_to_json(d, diagnostics) for d in compiled.diagnostics]
        if not compiled.ok or compiled.marshalled is None:  # (a program that compiled has its code)
            return RunResult(status="compile_error", exit_code=None, stdout="",
                             stderr=_render_errors(compiled, diagnostics), diagnostics=diags)
        timeout = float(timeout_s or self.timeout_s)
        header: JobHeader = {"mode": "run", "filename": filename, "source": _text(source),
                             "diagnostics": diagnostics, "timeout_s": timeout, "output_cap": self.output_cap}
        reply = self.dispatch(header, compiled.marshalled, timeout)
        return _run_result(reply, diags, self.output_cap, timeout)

    def run_many(self, requests: Iterable[str | bytes | RunRequest]) -> list[RunResult]:
        """Run many programs on all workers at once; results come back in input order."""
        items = [r if isinstance(r, RunRequest) else RunRequest(r) for r in requests]
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            return list(pool.map(lambda r: self.run(r.source, timeout_s=r.timeout_s,
                                                    diagnostics=r.diagnostics, filename=r.filename), items))

    def dispatch(self, header: JobHeader, code: bytes, timeout_s: float) -> RunReply | None:
        """Send one job to an idle worker and return its reply (None: the worker was lost).

        The parent's own deadline (timeout + grace) backs up the worker's: a worker that
        does not answer in time is killed with its whole namespace and replaced.
        """
        if self._closed:
            raise RuntimeError("this Executor is closed")
        worker = self._acquire()
        try:
            reply = worker.call(header, code, timeout_s + BACKSTOP_GRACE_S)
            if reply is None:
                worker.restart()
            return reply
        finally:
            self._release(worker)

    def _acquire(self) -> "_Worker":
        """An idle worker, preferring one whose next child is already prepared (so that
        back-to-back runs alternate and one worker's clean-up overlaps another's run)."""
        with self._idle_changed:
            while not self._idle:
                self._idle_changed.wait()
            chosen = next((w for w in self._idle if w.child_ready()), self._idle[0])
            self._idle.remove(chosen)
            return chosen

    def _release(self, worker: "_Worker") -> None:
        with self._idle_changed:
            self._idle.append(worker)
            self._idle_changed.notify()


def _shut_down(workers: list[_Worker]) -> None:
    for worker in workers:
        worker.kill()
    for worker in workers:
        worker.cgroup.remove()
        worker.remove_scratch()


def _text(source: str | bytes) -> str:
    return source.decode("utf-8", "replace") if isinstance(source, bytes) else source


def _render_errors(compiled: frontend.Compiled, mode: Rendering) -> str:
    return "".join(d.render(mode) + "\n" for d in compiled.diagnostics if d.severity == "error")


def _cut(text: str, truncated: bool) -> str:
    return text + TRUNCATION_MARKER if truncated else text


def _run_result(reply: RunReply | None, diags: list[dict[str, Any]], cap: int, timeout: float) -> RunResult:
    if reply is None:
        return RunResult(status="killed", exit_code=None, stdout="",
                         stderr="boa: the run's worker was lost and replaced\n", diagnostics=diags, duration_s=timeout)
    stdout = _cut(reply["stdout"], reply["stdout_truncated"])
    stderr = _cut(reply["stderr"], reply["stderr_truncated"])
    exits = [m for m in reply["messages"] if m.get("k") == "exit"]
    report = exits[-1].get("report") if exits else None
    if isinstance(report, str) and report:  # the harness's traceback: capped on its own
        stderr += report if len(report) <= REPORT_CAP else REPORT_CUT + report[-REPORT_CAP:]
    status, exit_code = _status_of(reply)
    if reply["signal"] in CRASH_SIGNALS and reply["reason"] is None:
        stderr += f"{CRASH_SIGNALS[reply['signal']]} (signal {reply['signal']})\n"
    if status == "timeout":
        stderr += f"boa: timed out after {timeout:g} s\n"
    if reply["reason"] == "protocol":
        forged = reply.get("violation")
        stderr += (f"boa: stopped: the program wrote to the harness's result channel: {forged}\n" if forged
                   else "boa: stopped: the program flooded the harness's own pipes\n")
    return RunResult(status=status, exit_code=exit_code, stdout=stdout, stderr=stderr, diagnostics=diags,
                     duration_s=reply["duration_s"])


def _status_of(reply: RunReply) -> tuple[RunStatus, int | None]:
    reason, sig, code = reply["reason"], reply["signal"], reply["exit_code"]
    if reason == "timeout":
        return "timeout", None
    if reason == "output_limit":
        return "output_limit", None
    if reason == "protocol":
        return "killed", None
    if sig is not None:
        if sig == signal.SIGXCPU:
            return "timeout", None
        if sig in CRASH_SIGNALS:
            return ("memory" if "MemoryError" in reply["stderr"] else "runtime_error"), None
        if sig == signal.SIGKILL and reply.get("oom_killed"):
            return "memory", None  # the worker's memory group ran out
        return "killed", None
    if code == 125 and "boa: sandbox setup failed" in reply["stderr"]:
        return "killed", None
    exits = [m for m in reply["messages"] if m.get("k") == "exit"]
    exc = exits[-1].get("exc") if exits else None
    if isinstance(exc, dict) and exc.get("type") == "MemoryError":
        return "memory", code
    return ("ok" if code == 0 else "runtime_error"), code
