"""The campaign's console (issue 21, trip 8): one progress display (runs done / total, current
run, elapsed, ETA); what each run prints goes to its stage log, not the console."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

from py4.campaign.dag import Node
from py4.campaign.progress import CampaignProgress, clock, stage_log_path
from py4.campaign.runner import run_campaign


def _nodes(tmp_path: Path) -> list[Node]:
    return [Node(id="a", stage="assets", run_dir=str(tmp_path / "a")),
            Node(id="b", stage="corpus", run_dir=str(tmp_path / "b"), inputs=["a"]),
            Node(id="c", stage="mix", run_dir=str(tmp_path / "c"), inputs=["b"])]


def _noisy(node: Node) -> None:
    print(f"{node.id}: step 1 {{'loss': 2.5}}")  # what trainers print
    sys.stderr.write(f"{node.id}: 50%|█████     | tqdm\n")
    os.write(1, f"{node.id}: fd-level output\n".encode())  # C code, child processes
    sys.stderr.write(f"{node.id}: FutureWarning: deprecated\n")  # what warnings.showwarning writes
    if node.id == "b":
        raise RuntimeError("corpus generation broke")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _run(tmp_path, stream, executor=_noisy):
    import py4.campaign.runner as runner

    original = runner.CampaignProgress
    runner.CampaignProgress = lambda total, out_dir, enabled=True, log=print: original(
        total, out_dir, enabled, log, stream=stream)
    try:
        return run_campaign(_nodes(tmp_path), tmp_path, {s: executor for s in ("assets", "corpus", "mix")},
                            log=lambda s: stream.write("LOG " + s + "\n"))
    finally:
        runner.CampaignProgress = original


def test_plain_console_gets_one_line_per_start_and_end_with_counter_and_eta(tmp_path, capfd, monkeypatch):
    import py4.campaign.progress as progress

    now = [1000.0]  # a clock that moves only while a run runs: 7 s each
    monkeypatch.setattr(progress, "_now", lambda: now[0])

    def slow_noisy(node: Node) -> None:
        now[0] += 7
        _noisy(node)

    stream = io.StringIO()
    summary = _run(tmp_path, stream, slow_noisy)
    assert summary.ran == ["a"] and summary.failed == ["b"] and summary.blocked == ["c"]
    console = stream.getvalue()
    lines = console.splitlines()
    assert lines[0].startswith("[1/3] run [assets] a (log: ") and lines[0].endswith("a/stage.log)")
    # a took 7 s; 2 runs left at 7 s each
    assert lines[1] == "[1/3] done a in 7 s; elapsed 0:00:07, ETA 0:00:14"
    assert lines[2].startswith("[2/3] run [corpus] b")
    assert lines[3].startswith("[2/3] FAILED b after 7 s") and "RuntimeError: corpus generation broke" in lines[3]
    assert "elapsed 0:00:14" in lines[3]
    assert lines[4] == "[3/3] blocked c: needs b"
    assert len(lines) == 5
    for noise in ("loss", "tqdm", "fd-level", "deprecated"):
        assert noise not in console
    out, err = capfd.readouterr()
    assert "fd-level" not in out and "tqdm" not in err  # nothing reached the real descriptors either
    log_a = stage_log_path(tmp_path, _nodes(tmp_path)[0]).read_text()
    for noise in ("[assets] a", "py4 smoke assets", "{'loss': 2.5}", "tqdm", "fd-level output",
                  "a: FutureWarning: deprecated"):
        assert noise in log_a, noise
    assert "corpus generation broke" in stage_log_path(tmp_path, _nodes(tmp_path)[1]).read_text()
    os.write(1, b"after the campaign\n")
    assert "after the campaign" in capfd.readouterr().out  # the descriptors are restored


def test_terminal_console_gets_a_progress_bar(tmp_path):
    stream = _Terminal()
    _run(tmp_path, stream)
    console = stream.getvalue()
    assert "campaign" in console and "3/3" in console and "ETA" in console
    assert "done a in" in console and "FAILED b" in console
    assert "fd-level" not in console and "loss" not in console


def test_disabled_progress_passes_everything_through(tmp_path, capfd):
    logs: list[str] = []
    run_campaign(_nodes(tmp_path), tmp_path, {s: _noisy for s in ("assets", "corpus", "mix")},
                 progress=False, log=logs.append)
    out, _ = capfd.readouterr()
    assert "fd-level output" in out and "a: step 1" in out
    assert any(line.startswith("[assets] a") for line in logs) and "[3/3] blocked c: needs b" in logs
    assert not stage_log_path(tmp_path, _nodes(tmp_path)[0]).exists()


def test_eta_is_the_mean_run_time_times_the_runs_left(tmp_path, monkeypatch):
    import py4.campaign.progress as progress

    now = [100.0]
    monkeypatch.setattr(progress, "_now", lambda: now[0])
    bar = CampaignProgress(5, tmp_path, stream=io.StringIO())
    nodes = _nodes(tmp_path)
    assert bar.eta() is None
    bar.skipped(nodes[0])  # takes no time, does not count
    for seconds in (10, 30):
        bar.started(nodes[1], resumed=False)
        now[0] += seconds
        bar.ended(nodes[1], ok=True)
    assert bar.finished == 3 and bar.eta() == 20 * 2
    assert clock(bar.eta()) == "0:00:40" and clock(3725) == "1:02:05"
    bar.close()
