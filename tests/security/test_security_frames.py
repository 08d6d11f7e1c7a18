"""Attacks on the parent through forged result frames.

A program can find its own result channel and token (here: the harness's ``Channel``
object, reached through ``gc``) and write correctly-tokened frames of any shape. The parent
accepts only the frames the harness writes (known kinds, exactly their fields, scalar
values of bounded size, at most as many as the job calls for); anything else ends that run
with status ``killed`` and says why, and never raises in the parent, never takes its
memory, and never costs the other runs of a batch their results.
"""

from __future__ import annotations

import functools
import json
import os
import tracemalloc

import pytest
from typer.testing import CliRunner

from py4.boa.certify import certify
from py4.boa.cli import app
from py4.boa.protocol import MAX_CHANNEL_BYTES
from py4.boa.run_watch import ResultChannel
from security_fixtures import EXPECTED_MARKER

pytestmark = pytest.mark.security

# Binds `send_raw(body)`: write one correctly-tokened frame with ``body`` (bytes) as its JSON.
# Plain Python 3 (the `python3_sandbox`): a Python-4 program cannot use gc (the capability
# set), and the parent's reading of the channel must hold for any code a run executes.
FIND_CHANNEL = ("import gc, os\n"
                "chan = [o for o in gc.get_objects() if type(o).__name__ == 'Channel'][0]\n"
                "def send_raw(body):\n"
                "    os.write(chan._fd, chan._token + len(body).to_bytes(4, 'big') + body)\n")
NESTED_EXIT = ("send_raw(b'{\"k\": \"exit\", \"code\": 0, \"exc\": ' + b'[' * 100000 + b']' * 100000"
               " + b', \"report\": \"\"}')\n")
HONEST = f"def solve(x):\n    return {EXPECTED_MARKER} + x - 1\n"


def _serves_next(executor) -> None:
    result = executor.run("import os\nprint(6 * 7, len([p for p in os.listdir('/proc') if p.isdigit()]))\n")
    assert result.status == "ok" and result.stdout == "42 1\n", result


def test_a_python4_program_cannot_reach_the_channel(sandbox):
    result = sandbox.executor.run("use gc\nprint(len(gc.get_objects()))\n")
    assert result.status == "compile_error" and "module `gc` is not available" in result.stderr, result


FORGED = "boa: stopped: the program wrote to the harness's result channel"


def test_the_channel_is_where_the_attacks_write(python3_sandbox):
    # Control: a well-formed frame of a known kind is taken as the harness's own (the run
    # then ends before the harness writes its real report).
    result = python3_sandbox.run(FIND_CHANNEL + "send_raw(b'{\"k\": \"exit\", \"code\": 3, \"exc\": null, "
                                        "\"report\": \"forged report\\\\n\"}')\nos._exit(3)\n")
    assert result.status == "runtime_error" and "forged report" in result.stderr, result
    _serves_next(python3_sandbox)


def test_deeply_nested_frame_ends_the_run_not_the_parent(python3_sandbox):
    result = python3_sandbox.run(FIND_CHANNEL + NESTED_EXIT + "print('sent')\n")
    assert result.status == "killed" and FORGED in result.stderr and "malformed frame" in result.stderr, result
    _serves_next(python3_sandbox)


def test_boa_run_json_prints_json_for_a_nested_frame(tmp_path, monkeypatch):
    # `boa run` with the Python 3 dialect (see FIND_CHANNEL), as its executor would run it.
    from py4.boa import executor

    monkeypatch.setattr(executor, "Executor", functools.partial(executor.Executor, dialect="python3"))
    (tmp_path / "attack.p4").write_text(FIND_CHANNEL + NESTED_EXIT)
    result = CliRunner().invoke(app, ["run", str(tmp_path / "attack.p4"), "--json"])
    report = json.loads(result.stdout)  # JSON, not a traceback
    assert report["status"] == "killed" and FORGED in report["stderr"], result.output


def test_a_batch_keeps_every_honest_result_beside_a_nested_frame(python3_sandbox):
    results = python3_sandbox.run_many(["print(1)\n", FIND_CHANNEL + NESTED_EXIT, "print(3)\n"])
    assert [(r.status, r.stdout) for r in (results[0], results[2])] == [("ok", "1\n"), ("ok", "3\n")]
    assert results[1].status == "killed" and FORGED in results[1].stderr
    _serves_next(python3_sandbox)


def test_forged_error_frame_with_a_nested_field_voids_the_certificate(python3_sandbox, marker_problem):
    # A well-formed JSON frame whose "line" is a list nested 900 deep: read as is, it
    # reached the certificate, whose serialisation then raised RecursionError.
    source = (FIND_CHANNEL + "send_raw(b'{\"k\": \"start\", \"i\": 0}')\n"
              "send_raw(b'{\"k\": \"error\", \"i\": 0, \"type\": \"E\", \"line\": ' + b'[' * 900"
              " + b']' * 900 + b'}')\n" + HONEST)
    cert = certify(marker_problem, source, executor=python3_sandbox)
    assert cert.compiled and not cert.certified and cert.status == "killed", cert
    json.dumps(cert.to_json())  # serialisable: nothing forged inside
    _serves_next(python3_sandbox)


def test_frames_of_many_empty_objects_keep_the_parents_memory_bounded(python3_sandbox):
    # 8 MiB frames of `[{},{},…]` under the channel cap took the parent from ~18 to ~640 MiB.
    attack = (FIND_CHANNEL + "body = b'{\"k\": \"exit\", \"code\": 0, \"exc\": [' + b'{},' * 2700000"
              " + b'{}], \"report\": \"\"}'\nfor n in range(3):\n    send_raw(body)\n")
    tracemalloc.start()
    try:
        result = python3_sandbox.run(attack, timeout_s=5.0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.status == "killed" and FORGED in result.stderr, result
    # The stated budget (docs/boa.md): the channel's cap plus one frame, per run.
    assert peak < MAX_CHANNEL_BYTES + 16 * 2**20, peak
    _serves_next(python3_sandbox)


def test_more_frames_than_the_job_calls_for_stop_the_run(python3_sandbox):
    # Each frame is well-formed; a run's harness writes one exit report, not thousands.
    result = python3_sandbox.run(FIND_CHANNEL + "for n in range(100000):\n"
                         "    send_raw(b'{\"k\": \"start\", \"i\": 0}')\n", timeout_s=5.0)
    assert result.status == "killed" and "more frames than the harness writes" in result.stderr, result
    _serves_next(python3_sandbox)


def test_draining_a_channel_that_never_stops_is_bounded(monkeypatch):
    # A process the program forked can keep writing after the harness reported the end
    # (on a many-core host it outpaces the reader): the parent's last read of the channel
    # stops at the cap, it does not follow the writer. Here the writer never stops.
    from py4.boa import run_watch

    read_end, write_end = os.pipe()
    monkeypatch.setattr(run_watch.os, "read", lambda fd, size: b"x" * size)
    channel = ResultChannel(read_end, b"t" * 16, max_messages=4)
    try:
        channel.drain_ready()
    finally:
        os.close(read_end)
        os.close(write_end)
    assert channel.overflowed and channel.refused
