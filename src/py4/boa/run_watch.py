"""The executor's side of one run: everything the run's child writes, read in the parent.

The worker's supervisor hands over each prepared child's pipes (``protocol.HandOver``):
the executor writes the job to the child and, while the run goes on, reads its stdout
and stderr (up to the output cap), its tick pipe (``.`` when a test starts, ``!`` and the
exit status byte when the harness has finished the run) and its result channel. It
enforces the wall-clock and per-test deadlines and the output cap, by sending the
supervisor ``Kill``. A test that starts within ``TICK_INTERVAL_S`` of the last tick is
signalled with the next tick or the end report instead (``child.Channel``), so the
per-test deadline counts from the last tick read plus that interval.

When the harness reports the end, the run's own process has flushed its output, written
its last result frame and stopped itself (SIGSTOP): what is in the pipes is the whole
run, and the executor answers at once. The harness reported the end to the supervisor
too, which kills the run's processes and cleans up meanwhile; its reply for that run
comes later and is dropped. Any other end (crash, ``os._exit``, deadline, output cap)
comes from the supervisor with the kernel's exit status, after it killed every process
of the run; the pipes are then read to their end.

A program can write the tick pipe too: a forged ``!`` ends the run there with the status
it wrote (as an ``os._exit`` would; the supervisor kills what it left running), and a
forged ``.`` restarts the per-test deadline, never the wall-clock one.
"""

from __future__ import annotations

import os
import select
import time

from py4.boa.protocol import (MAX_CHANNEL_BYTES, TICK_INTERVAL_S, FrameReader, JobHeader, Kill, Reply, RunReply,
                              StopReason, SupervisorReply, message_budget)

READ_CHUNK = 65536
CHANNEL_GRACE_S = 0.002  # how long a run's result channel is left unread (see RunWatch.wait)
DRAIN_LIMIT_S = 0.5  # how long the pipes of a killed run are read, waiting for their end


class ResultChannel:
    """The parent's end of one run's result channel: bytes up to a cap, then frames."""

    def __init__(self, fd: int, token: bytes, max_messages: int):
        self.fd = fd  # non-blocking (see HandOver)
        self.frames = FrameReader(token, max_messages)
        self.received = 0  # bytes read so far
        self.overflowed = False  # more than MAX_CHANNEL_BYTES came

    @property
    def refused(self) -> bool:
        """The run sent more than the cap or a frame the harness never writes."""
        return self.overflowed or self.frames.violation is not None

    def read(self) -> bool | None:
        """Read what is there: True when something was, None when nothing was, False at
        end of file."""
        try:
            data = os.read(self.fd, READ_CHUNK)
        except BlockingIOError:
            return None
        self._take(data)
        return bool(data)

    def _take(self, data: bytes) -> None:
        self.received += len(data)
        if self.received > MAX_CHANNEL_BYTES:
            self.overflowed = True
            self.frames.violation = self.frames.violation or "result channel overflow"
        elif data:
            self.frames.feed(data)

    def drain_ready(self) -> None:
        """Read what is in the pipe now, without waiting for its end: the run's harness
        wrote its last frame before it reported the end (the run's processes may still
        hold the pipe open, and a process the program forked may still be writing: the
        loop stops at the cap and after ``DRAIN_LIMIT_S``)."""
        until = time.monotonic() + DRAIN_LIMIT_S
        while not self.overflowed and time.monotonic() < until:
            try:
                data = os.read(self.fd, READ_CHUNK)
            except BlockingIOError:
                return
            self._take(data)
            if len(data) < READ_CHUNK:
                return  # the pipe is empty (or closed): nothing more was written before


class RunWatch:
    """Watches one run from the executor: output, ticks, result frames, the supervisor.

    ``fds``: the prepared child's pipes as handed over (``HandOver.FDS``; the read ends are
    non-blocking; this object closes them all). ``token`` frames the result channel.
    ``job``: the executor's job dict (mode, deadlines, output cap).
    ``seq``: the run's number on its worker; ``reply_fd``/``control_fd``: the supervisor's
    reply pipe and control pipe.
    """

    def __init__(self, *, fds: dict[str, int], token: bytes, job: JobHeader, seq: int, reply_fd: int,
                 control_fd: int):
        self.job_fd, self.out_fd, self.err_fd, self.tick_fd = fds["job"], fds["stdout"], fds["stderr"], fds["ticks"]
        self.channel = ResultChannel(fds["channel"], token, message_budget(job))
        self.job, self.seq = job, seq
        self.reply_fd, self.control_fd = reply_fd, control_fd
        self.keep_output = job["mode"] == "run"
        self.cap = job["output_cap"]
        self.byte_cap = self.cap * 4 + 4  # a character is at most 4 bytes of UTF-8
        self.per_test_s = job.get("per_test_timeout_s") or 0.0
        # A test may have started up to TICK_INTERVAL_S after the tick that is read last.
        self.per_test_allowed_s = self.per_test_s + TICK_INTERVAL_S
        self.buffers = {self.out_fd: bytearray(), self.err_fd: bytearray()}
        self.overflow = {self.out_fd: False, self.err_fd: False}
        # A certification's stdout and stderr are /dev/null (the child swaps them after
        # reading its job): their pipes only ever report their end, and are not watched.
        self.open_fds = {self.out_fd, self.err_fd, self.tick_fd} if self.keep_output else {self.tick_fd}
        # The harness writes "." per test started (and one for loading the solution) and
        # "!" + status at the end: more than that on the tick pipe is a program's doing.
        self.tick_budget = (len(job.get("tests", ())) + 1 if job["mode"] == "certify" else 0) + 2
        self.reason: StopReason | None = None  # why the executor stopped the run, if it did
        self.end_code: int | None = None  # the status byte of the harness's "!"
        self.tick_bang = False  # a "!" was read; its status byte was not yet
        self.test_deadline: float | None = None
        self.started = self.ended = 0.0  # when the job was written; when the harness reported the end

    # ------------------------------------------------------------------ the run
    def wait(self, started: float, backstop_s: float) -> RunReply | None:
        """Follow the run whose job was written at ``started`` to its end; the reply (see
        ``_early_reply`` and ``_killed_reply``), or None when the supervisor did not
        answer within ``backstop_s`` (lost or hung).

        The result channel is watched only after ``CHANNEL_GRACE_S``: a run's frames
        usually fit in the channel's pipe (enlarged by the worker) and are read at the
        end, which saves this process a wake-up in the middle of most runs; a run that
        writes more waits at most that long for the first read.
        """
        poller = select.poll()  # not select(): the parent may hold more than 1024 fds
        for fd in (*self.open_fds, self.reply_fd):
            poller.register(fd, select.POLLIN)
        self.started = started
        backstop = started + backstop_s
        deadline = started + self.job["timeout_s"]
        early_reply = self._take_waiting_replies()
        if early_reply is not None:  # the prepared child had died before its job
            return self._killed_reply(early_reply)
        watching_channel = False
        while True:
            now = time.monotonic()
            test_over = self.test_deadline is not None and now >= self.test_deadline
            if self.reason is None and (now >= deadline or test_over):
                self._stop("timeout")
            if now >= backstop:
                return None
            wake = [backstop] if self.reason else [backstop, deadline, self.test_deadline or backstop]
            if not watching_channel:
                if now - started >= CHANNEL_GRACE_S:
                    poller.register(self.channel.fd, select.POLLIN)
                    watching_channel = True
                else:
                    wake.append(started + CHANNEL_GRACE_S)
            events = dict(poller.poll(max(min(wake) - now, 0) * 1000))
            for fd in (self.tick_fd, self.out_fd, self.err_fd, self.channel.fd):
                if fd in events and self._read(fd) is False:
                    poller.unregister(fd)  # end of file: every writer is gone (or the
                    self.open_fds.discard(fd)  # program closed its end): nothing more
            reported = self.end_code is not None and self.reason is None
            if self.reply_fd in events:  # read even now (it would wait for the next run)
                reply = self._supervisor_reply()
                if reply is not None and not reported:
                    return self._killed_reply(reply)
            if reported:
                return self._early_reply(events)

    def _take_waiting_replies(self) -> SupervisorReply | None:
        """Read the replies already waiting (the supervisor's for runs that the executor
        answered at the harness's report: all are written before the next child is
        handed over); this run's, when its child died before it got the job."""
        waiting, mine = select.poll(), None
        waiting.register(self.reply_fd, select.POLLIN)
        while waiting.poll(0):
            mine = self._supervisor_reply() or mine
        return mine

    def _supervisor_reply(self) -> SupervisorReply | None:
        """The supervisor's reply for this run; None for a stale one (of an earlier run,
        answered when its harness reported the end). Raises WorkerGone when the worker
        died."""
        reply = Reply.read(self.reply_fd)
        return reply if reply["seq"] == self.seq else None

    def _stop(self, reason: StopReason) -> None:
        """Ask the supervisor to kill the run now; it replies with the exit status."""
        self.reason = reason
        try:
            os.write(self.control_fd, Kill.pack(self.seq))
        except OSError:
            pass  # the worker is gone: the wait for its reply finds out

    # ------------------------------------------------------------------ reading
    def _read(self, fd: int) -> bool | None:
        """Read what ``fd`` has: True when something was, None when nothing was, False at
        end of file (every writer is gone)."""
        if fd == self.channel.fd:
            got = self.channel.read()
            if self.channel.refused and self.reason is None:
                self._stop("protocol")  # over the cap, or a forged frame: no honest run writes that
            return got
        try:
            data = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            return None
        if not data:
            return False
        if fd == self.tick_fd:
            self._take_ticks(data)
        else:
            self._take_output(fd, data)
        return True

    def _take_output(self, fd: int, data: bytes) -> None:
        buf = self.buffers[fd]
        room = self.byte_cap - len(buf)
        if len(data) > room:
            self.overflow[fd] = True
            data = data[:max(room, 0)]
        buf += data
        if self.reason is None and len(buf) > self.cap and len(buf.decode("utf-8", "replace")) > self.cap:
            self._stop("output_limit")

    def _take_ticks(self, data: bytes) -> None:
        self.tick_budget -= len(data)
        if self.tick_budget < 0:  # flooding the pipe: stop the run rather than read on
            if self.reason is None:
                self._stop("protocol")
            return
        if self.tick_bang:  # the status byte of a "!" that ended the previous read
            self.tick_bang = False
            self._ended(data[0])
            return
        end = data.find(b"!")
        if self.per_test_s and data.find(b".", 0, len(data) if end < 0 else end) >= 0:
            self.test_deadline = time.monotonic() + self.per_test_allowed_s
        if end == len(data) - 1:
            self.tick_bang = True
        elif end >= 0:
            self._ended(data[end + 1])

    def _ended(self, exit_code: int) -> None:
        if self.end_code is None:
            self.end_code = exit_code
            self.ended = time.monotonic()

    # ------------------------------------------------------------------ the end
    def _early_reply(self, events: dict[int, int]) -> RunReply:
        """The harness reported the end: what is in the pipes is all the run wrote.

        ``events`` is the poll that found the report: the harness flushed its output
        before reporting, so an output pipe with more to read was ready in that poll
        too (one not in it is empty, and is not read again).
        """
        for fd in (self.out_fd, self.err_fd):
            while fd in events and fd in self.open_fds and self._read(fd):
                pass
        self.channel.drain_ready()
        if self.channel.refused and self.reason is None:
            self.reason = "protocol"  # the run has ended: the supervisor is killing it already
        # The reason is the output cap's, if what was left in the pipes went over it.
        return self._reply(self.reason, self.end_code, None, self.ended - self.started)

    def _killed_reply(self, supervisor: SupervisorReply) -> RunReply:
        """The supervisor ended the run (every process of it is killed): read the pipes
        to their end. A run whose harness reported the end just before is answered as
        such (the supervisor saw it first)."""
        until = time.monotonic() + DRAIN_LIMIT_S
        fds = self.open_fds | {self.channel.fd}
        while fds and time.monotonic() < until:
            poller = select.poll()
            for fd in fds:
                poller.register(fd, select.POLLIN)
            for fd, _ in poller.poll(max(until - time.monotonic(), 0) * 1000):
                if self._read(fd) is False:
                    fds.discard(fd)
        if self.end_code is not None and self.reason is None:
            return self._reply(None, self.end_code, None, self.ended - self.started)
        duration = max(supervisor["ended_at"] - self.started, 0.0)
        return self._reply(self.reason, supervisor["exit_code"], supervisor["signal"], duration)

    def _reply(self, reason: StopReason | None, exit_code: int | None, signal_number: int | None,
               duration_s: float) -> RunReply:
        out, out_cut = _decode_capped(self.buffers[self.out_fd], self.cap, self.overflow[self.out_fd])
        err, err_cut = _decode_capped(self.buffers[self.err_fd], self.cap, self.overflow[self.err_fd])
        return {"reason": reason, "exit_code": exit_code, "signal": signal_number,
                "stdout": out, "stderr": err, "stdout_truncated": out_cut, "stderr_truncated": err_cut,
                "duration_s": round(duration_s, 6),
                "messages": self.channel.frames.messages, "violation": self.channel.frames.violation}

    def close(self) -> None:
        for fd in (self.job_fd, self.out_fd, self.err_fd, self.tick_fd, self.channel.fd):
            os.close(fd)


def _decode_capped(data: bytearray, cap: int, overflowed: bool) -> tuple[str, bool]:
    text = data.decode("utf-8", "replace")
    if len(text) > cap or overflowed:
        return text[:cap], True
    return text, False

