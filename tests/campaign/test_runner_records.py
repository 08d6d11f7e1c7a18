"""Runs that notice damage, one runner per folder, records that tell the truth.

A done run whose outputs changed or went is redone with its dependants, saying why; ``--rerun``
redoes runs on purpose; an unreadable record is a run not done, not a stop. A second runner on a
folder is refused naming the first; a run whose runner is gone reads ``interrupted`` in the
console, the status and CAMPAIGN_STATUS.md; Ctrl-C and SIGTERM say what stopped and how to
resume. The runners that must be alive, killed or signalled are real processes.
"""

from __future__ import annotations

import io
import os
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from py4.campaign.dag import Node
from py4.campaign.ledgers import campaign_status
from py4.campaign.lock import CampaignLocked
from py4.campaign.records import node_status, record_dir
from py4.campaign.runner import run_campaign
from py4.campaign.status import run_states

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _cheap_manifests(monkeypatch):
    monkeypatch.setattr("py4.runs.library_versions", lambda *a, **k: {})
    monkeypatch.setattr("py4.runs.hardware_info", lambda: {})


def _chain(tmp_path: Path) -> list[Node]:
    """a -> b -> c, and d on its own."""
    return [Node(id="a", stage="corpus", run_dir=str(tmp_path / "a")),
            Node(id="b", stage="mix", run_dir=str(tmp_path / "b"), inputs=["a"]),
            Node(id="c", stage="eval", run_dir=str(tmp_path / "c"), inputs=["b"]),
            Node(id="d", stage="eval", run_dir=str(tmp_path / "d"))]


class Writes:
    """An executor that writes each run's folder (a weights file and a small one)."""

    def __init__(self):
        self.calls: list[str] = []

    def __call__(self, node: Node) -> None:
        self.calls.append(node.id)
        run = Path(node.run_dir)
        run.mkdir(parents=True, exist_ok=True)
        (run / "weights.bin").write_bytes(os.urandom(4096))
        (run / "results.json").write_text('{"ok": true}')

    def table(self, nodes):
        return {n.stage: self for n in nodes}


def _run(nodes, out, executor, **kw):
    logs: list[str] = []
    summary = run_campaign(nodes, out, executor.table(nodes), progress=False, log=logs.append, **kw)
    return summary, logs


# ---- outputs that changed or went ------------------------------------------------------------

def test_a_truncated_output_redoes_its_run_and_the_dependants_saying_why(tmp_path):
    nodes = _chain(tmp_path)
    _run(nodes, tmp_path, Writes())
    weights = tmp_path / "b" / "weights.bin"
    weights.write_bytes(weights.read_bytes()[:100])  # cut short, as a full disk or a bad copy leaves it
    again = Writes()
    summary, logs = _run(nodes, tmp_path, again)
    assert again.calls == ["b", "c"] and summary.skipped == ["a", "d"]  # skipped all four before
    assert any(line.startswith("b: running it again: ") and "weights.bin changed size (4096 -> 100 bytes)" in line
               for line in logs), logs
    assert any(line.startswith("c: running it again: its input b ran again after it") for line in logs), logs


def test_a_missing_output_redoes_its_run(tmp_path):
    nodes = _chain(tmp_path)
    _run(nodes, tmp_path, Writes())
    (tmp_path / "d" / "results.json").unlink()
    again = Writes()
    _, logs = _run(nodes, tmp_path, again)
    assert again.calls == ["d"]
    assert any("results.json is missing" in line for line in logs), logs


def test_a_touched_file_with_its_content_is_no_change_and_verify_finds_a_same_size_edit(tmp_path):
    nodes = _chain(tmp_path)
    _run(nodes, tmp_path, Writes())
    results = tmp_path / "a" / "results.json"
    st = results.stat()  # as recorded
    os.utime(results, ns=(1, 1))  # mtime moved, content the same: hashed, found unchanged
    first = Writes()
    _run(nodes, tmp_path, first)
    assert first.calls == []
    results.write_text('{"ok": null}'[:st.st_size].ljust(st.st_size))  # same size, other bytes
    os.utime(results, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the recorded mtime: the cheap check passes
    cheap = Writes()
    _run(nodes, tmp_path, cheap)
    assert cheap.calls == []
    verified = Writes()
    _, logs = _run(nodes, tmp_path, verified, verify=True)
    assert verified.calls == ["a", "b", "c"]
    assert any("results.json changed content" in line for line in logs), logs


def test_rerun_redoes_the_matching_runs_and_their_dependants_from_scratch(tmp_path):
    nodes = _chain(tmp_path)
    _run(nodes, tmp_path, Writes())
    stale = tmp_path / "b" / "checkpoint-9"
    stale.mkdir()
    again = Writes()
    _, logs = _run(nodes, tmp_path, again, rerun="b")
    assert again.calls == ["b", "c"] and not stale.exists()
    assert "b: running it again: asked to (--rerun)" in logs
    later = Writes()
    _run(nodes, tmp_path, later)
    assert later.calls == []  # once redone, done again


def test_rerun_reaches_dependants_outside_the_selection_on_a_later_run(tmp_path):
    nodes = _chain(tmp_path)
    _run(nodes, tmp_path, Writes())
    first = Writes()
    _run(nodes, tmp_path, first, rerun="a", selected={"a"})
    assert first.calls == ["a"]
    rest = Writes()
    _run(nodes, tmp_path, rest)
    assert rest.calls == ["b", "c"]  # they read the old a


def test_an_unreadable_record_is_a_run_not_done_and_says_so(tmp_path):
    nodes = _chain(tmp_path)
    _run(nodes, tmp_path, Writes())
    record = record_dir(tmp_path, "b") / "run_manifest.json"
    record.write_text('{"status": "done", "fingerp')  # cut short
    assert node_status(tmp_path, nodes[1]) == "pending"
    assert [r.state for r in run_states(nodes, tmp_path)] == ["done", "pending", "done", "done"]
    assert "| `b` | mix | pending |" in campaign_status(nodes, tmp_path, "t")  # the ledgers do not stop either
    again = Writes()
    summary, logs = _run(nodes, tmp_path, again)
    assert summary.ok and again.calls == ["b", "c"]
    said = [line for line in logs if line.startswith("b: its record cannot be read (")]
    assert said and "treated as not done" in said[0], logs
    assert list(record.parent.glob("run_manifest.json.unreadable-*"))  # kept for a person to look at


def test_only_that_matches_nothing_exits_2_naming_the_closest_run_ids(tmp_path):
    from typer.testing import CliRunner

    from py4.campaign.cli import app

    result = CliRunner().invoke(app, ["run", str(ROOT / "configs/campaign/smoke.yaml"), "--out", str(tmp_path),
                                      "--only", "tiny/iso/midtrian"])
    assert result.exit_code == 2, result.output
    assert "matches no run" in result.output and "tiny/iso/midtrain" in result.output
    assert not (tmp_path / "_campaign").exists()


# ---- one runner per folder, and who is alive ------------------------------------------------

_CHILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import py4.runs
    py4.runs.hardware_info = lambda: {}  # no torch import: the child starts and stops in a moment
    py4.runs.library_versions = lambda *a, **k: {}
    from py4.campaign.dag import Node
    from py4.campaign.runner import run_campaign

    out = Path(sys.argv[1])
    def slow(node):
        print("started", flush=True)
        time.sleep(600)
    try:
        run_campaign([Node(id="slow", stage="eval", run_dir=str(out / "slow"))], out, {"eval": slow},
                     progress=False, log=lambda s: print(s, file=sys.stderr, flush=True),
                     resume_hint="py4 campaign run x.yaml")
    except KeyboardInterrupt as exc:
        sys.exit(143 if exc.args and exc.args[0] == "SIGTERM" else 130)
""")


@pytest.fixture
def ctrl_c_reaches_children():
    """SIGINT handled as a terminal's Ctrl-C would find it, in this process and the children it starts.

    A shell without job control starts its background jobs with SIGINT ignored (how CI or a
    session often launches the suite), every child inherits that, and Python then never raises
    KeyboardInterrupt. A child started from here gets SIGINT's default disposition instead."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture
def runner_child(tmp_path, ctrl_c_reaches_children):
    """A runner in another process, stopped inside its run; killed at the end whatever happens."""
    procs: list[subprocess.Popen] = []

    def start() -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(tmp_path)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        procs.append(proc)
        assert proc.stdout.readline().strip() == "started", proc.stderr.read()
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def test_a_second_runner_is_refused_naming_the_first_ones_pid_and_host(tmp_path, runner_child):
    first = runner_child()
    node = Node(id="slow", stage="eval", run_dir=str(tmp_path / "slow"))
    assert node_status(tmp_path, node) == "running"
    with pytest.raises(CampaignLocked, match=f"PID {first.pid} on {socket.gethostname()}"):
        run_campaign([node], tmp_path, {"eval": Writes()}, progress=False, log=lambda s: None)


def test_a_run_whose_runner_was_killed_reads_interrupted_everywhere(tmp_path, runner_child):
    proc = runner_child()
    proc.kill()  # SIGKILL: no handler runs, the record still says running
    proc.wait()
    node = Node(id="slow", stage="eval", run_dir=str(tmp_path / "slow"))
    assert node_status(tmp_path, node) == "interrupted"
    assert [r.state for r in run_states([node], tmp_path)] == ["interrupted"]
    assert "| `slow` | eval | interrupted |" in campaign_status([node], tmp_path, "t")
    logs: list[str] = []
    summary = run_campaign([node], tmp_path, {"eval": Writes()}, progress=False, log=logs.append)
    assert summary.ran == ["slow"] and any("resuming after interrupted" in line for line in logs)


@pytest.mark.parametrize("sig, said", [(signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "Ctrl-C")])
def test_a_signal_stops_the_runner_saying_what_stopped_and_how_to_resume(tmp_path, runner_child, sig, said):
    proc = runner_child()
    proc.send_signal(sig)
    assert proc.wait(timeout=120) == (143 if sig == signal.SIGTERM else 130)
    err = proc.stderr.read()
    assert f"stopped ({said}): slow ([eval], after" in err, err
    assert "Resume with: py4 campaign run x.yaml" in err, err
    assert node_status(tmp_path, Node(id="slow", stage="eval", run_dir=str(tmp_path / "slow"))) == "interrupted"


def test_the_console_calls_an_interrupted_run_interrupted_not_failed(tmp_path, ctrl_c_reaches_children):
    from py4.campaign.runner import run_subprocess

    stream = io.StringIO()
    import py4.campaign.runner as runner

    def killed_child(node: Node) -> None:  # a child stopped by Ctrl-C: the process group got SIGINT
        node.options = {"out": str(tmp_path / "x")}
        subprocess_stopped = subprocess.run([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), "
                                             "signal.SIGINT); import time; time.sleep(5)"])
        assert subprocess_stopped.returncode != 0
        raise KeyboardInterrupt  # what run_subprocess raises for it (checked below)

    original = runner.CampaignProgress
    runner.CampaignProgress = lambda *a, **k: original(*a, **k, stream=stream)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_campaign([Node(id="k", stage="eval", run_dir=str(tmp_path / "k"))], tmp_path, {"eval": killed_child},
                         log=lambda s: stream.write(s + "\n"))
    finally:
        runner.CampaignProgress = original
    console = stream.getvalue()
    assert "interrupted k after" in console and "FAILED" not in console, console
    # A child run ended by SIGINT is an interruption, not a failure.
    child = Node(id="c", stage="eval", run_dir=str(tmp_path / "c"))
    child_argv = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGINT)"]
    original_launch = Node.launch_argv
    try:
        Node.launch_argv = property(lambda self: child_argv)
        with pytest.raises(KeyboardInterrupt):
            run_subprocess(child)
    finally:
        Node.launch_argv = original_launch


# ---- status sees damage as the runner does ---------------------------------------------------

def test_status_shows_a_damaged_run_and_its_dependants_saying_why(tmp_path):
    from rich.console import Console

    from py4.campaign.status import status_tables, summary_line

    nodes = _chain(tmp_path)
    _run(nodes, tmp_path, Writes())
    weights = tmp_path / "b" / "weights.bin"
    weights.write_bytes(weights.read_bytes()[:100])
    rows = run_states(nodes, tmp_path)
    assert [r.state for r in rows] == ["done", "damaged", "damaged", "done"]
    assert "weights.bin changed size (4096 -> 100 bytes)" in rows[1].why
    assert rows[2].why == "its input b is damaged (redone before it)"
    assert summary_line(rows).endswith("0 blocked, 2 damaged")
    console = Console(record=True, width=400)
    for table in status_tables(rows, out_dir=tmp_path):
        console.print(table)
    shown = console.export_text()
    assert "damaged" in shown and "changed size" in shown
    again = Writes()
    _run(nodes, tmp_path, again)
    assert again.calls == ["b", "c"]  # what the status called damaged is what the runner redid
    assert [r.state for r in run_states(nodes, tmp_path)] == ["done"] * 4


def _same_size_rewrite(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` (a new file, so a new inode) and give it back its mtime."""
    st = path.stat()
    new = path.with_name(path.name + ".new")
    new.write_bytes(data)
    os.replace(new, path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_status_verify_finds_a_same_size_edit_that_the_cheap_check_misses(tmp_path):
    nodes = _chain(tmp_path)
    _run(nodes, tmp_path, Writes())
    results = tmp_path / "d" / "results.json"
    _same_size_rewrite(results, b'{"ok": null}'[:results.stat().st_size].ljust(results.stat().st_size))
    assert [r.state for r in run_states(nodes, tmp_path)] == ["done"] * 4
    rows = run_states(nodes, tmp_path, verify=True)
    assert [r.state for r in rows] == ["done", "done", "done", "damaged"]
    assert "results.json changed content" in rows[3].why


class CountingHashes:
    def __init__(self, monkeypatch):
        from py4.campaign import records

        self.paths: list[str] = []
        real = records.file_sha256

        def counted(path):
            self.paths.append(Path(path).name)
            return real(path)

        monkeypatch.setattr(records, "file_sha256", counted)

    def take(self) -> list[str]:
        out, self.paths = sorted(self.paths), []
        return out


def test_a_repeated_verify_hashes_only_what_changed_since_it_was_last_hashed(tmp_path, monkeypatch):
    monkeypatch.setattr("py4.campaign.records.SETTLED_NS", 0, raising=False)  # files count as settled at once
    nodes = _chain(tmp_path)
    _run(nodes, tmp_path, Writes())
    hashes = CountingHashes(monkeypatch)

    def verified_run() -> list[str]:
        again = Writes()
        _run(nodes, tmp_path, again, verify=True)
        return again.calls

    assert verified_run() == []
    assert hashes.take() == []  # the record hashed them, and nothing changed since
    results = tmp_path / "a" / "results.json"
    _same_size_rewrite(results, results.read_bytes())  # rewritten with the same content (a copy)
    assert verified_run() == []
    assert hashes.take() == ["results.json"]
    assert verified_run() == []
    assert hashes.take() == []  # that check is kept beside the record
    _same_size_rewrite(results, b"x" * results.stat().st_size)
    assert [r.state for r in run_states(nodes, tmp_path, verify=True)][0] == "damaged"
    assert hashes.take() == ["results.json"]
    assert verified_run() == ["a", "b", "c"]


def test_a_file_that_changed_just_before_it_was_recorded_is_hashed_by_verify_not_trusted(tmp_path, monkeypatch):
    monkeypatch.setattr("py4.campaign.records.SETTLED_NS", 10**18, raising=False)  # nothing has settled
    nodes = _chain(tmp_path)
    _run(nodes, tmp_path, Writes())
    hashes = CountingHashes(monkeypatch)
    run_states(nodes, tmp_path, verify=True)
    assert hashes.take() == ["results.json"] * 4 + ["weights.bin"] * 4
    run_states(nodes, tmp_path, verify=True)
    assert len(hashes.take()) == 8  # still not settled: hashed again


def test_a_file_fresh_when_its_stat_was_taken_gets_no_stat_key_however_long_the_hashing(tmp_path, monkeypatch):
    import time as real_time
    from types import SimpleNamespace

    from py4.campaign import records

    (tmp_path / "weights.bin").write_bytes(b"w" * 100)
    later = [0]
    hash_files = records.hash_files

    def slow_hashing(paths, workers=None):  # the clock moves on 10 s while the files hash
        later[0] = 10**10
        return hash_files(paths, workers)

    monkeypatch.setattr(records, "hash_files", slow_hashing)
    monkeypatch.setattr(records, "time", SimpleNamespace(time_ns=lambda: real_time.time_ns() + later[0]))
    seen = records.snapshot_outputs(tmp_path)
    assert "stat" not in seen["weights.bin"]  # a rewrite in the same ctime tick would go unseen
