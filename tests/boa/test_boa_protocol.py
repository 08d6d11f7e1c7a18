"""The fixed-size messages between the executor and a worker's supervisor."""

from __future__ import annotations

import os
import signal
import socket

import pytest

from py4.boa.protocol import TICK_INTERVAL_S, HandOver, Kill, Reply, WorkerGone


def _through_a_pipe(data: bytes) -> int:
    read_end, write_end = os.pipe()
    os.write(write_end, data)
    os.close(write_end)
    return read_end


def test_kill_carries_the_run_number():
    fd = _through_a_pipe(Kill.pack(7) + Kill.pack(2**32 + 3))
    try:
        assert Kill.read(fd) == 7
        assert Kill.read(fd) == 3  # numbers wrap at 32 bits, as both sides count
        with pytest.raises(WorkerGone):
            Kill.read(fd)
    finally:
        os.close(fd)


def test_a_control_with_another_tag_is_refused():
    fd = _through_a_pipe(b"E" + Kill.pack(1)[1:])
    try:
        with pytest.raises(ValueError, match="unexpected control"):
            Kill.read(fd)
    finally:
        os.close(fd)


@pytest.mark.parametrize("exit_code, signal", [(0, None), (3, None), (None, 9), (255, None)])
def test_reply_round_trip(exit_code, signal):
    data = Reply.pack(41, 1234.5, exit_code, signal)
    assert len(data) == Reply.size < 512  # one write, never split (PIPE_BUF)
    fd = _through_a_pipe(data)
    try:
        assert Reply.read(fd) == {"seq": 41, "ended_at": 1234.5, "exit_code": exit_code, "signal": signal}
    finally:
        os.close(fd)


def test_hand_over_usage_round_trip_and_size_check():
    assert HandOver.unpack_usage(HandOver.pack_usage(1.25, 740)) == (1.25, 740)
    with pytest.raises(ValueError, match="hand-over of 3 bytes"):
        HandOver.unpack_usage(b"abc")
    assert HandOver.FDS == ("job", "channel", "stdout", "stderr", "ticks")


def test_a_frame_that_is_not_utf8_is_a_violation_not_an_exception():
    # The run's child controls its channel: bytes that match the frame shape but do not
    # decode stop the run like any forged frame (before: UnicodeDecodeError escaped feed).
    from py4.boa.protocol import FrameReader

    token = os.urandom(16)
    body = b'{"k": "exit", "code": 0, "exc": null, "report": "\xff\xfe"}'
    reader = FrameReader(token, 8)
    assert reader.feed(token + len(body).to_bytes(4, "big") + body) == []
    assert reader.violation == "malformed frame"


def test_quick_test_starts_share_a_tick_and_the_tick_count_stays_exact():
    # The harness signals a test's start on the tick pipe only when its last tick is
    # TICK_INTERVAL_S old (each tick wakes the executor); the starts it did not signal go
    # with the next tick or the end report, so the executor's byte budget still holds.
    # A datagram socket stands in for the pipe (it keeps each write apart), a fake clock
    # for time.
    from py4.boa import child  # the harness (imported by workers only)

    chan_r, chan_w = os.pipe()
    ticks, tick_w = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:  # the run's process: done() stops it
        try:
            clock = iter([0.0, 0.0001, 0.0002, 0.0003, 0.0003 + TICK_INTERVAL_S, 0.0004 + TICK_INTERVAL_S])
            child._monotonic = lambda: next(clock)
            chan = child.Channel(chan_w, b"t" * 16, tick_fd=tick_w.fileno())
            for i in range(-1, 5):
                chan.send({"k": "start", "i": i})
            chan.done(0)
        finally:
            os._exit(1)
    try:
        tick_w.close()
        ticks.settimeout(30)
        writes = [ticks.recv(64) for _ in range(3)]
        # the first start; the three owed and the late one; the last owed with the end
        assert writes == [b".", b"....", b".!\x00"]
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(chan_r)
        os.close(chan_w)
        ticks.close()
