"""The campaign's console: one progress display (runs done / total, current run, elapsed, ETA)
with the current run's own progress under it; what each run prints goes to its stage log, not
the console. The ETA sums each stage's expected cost, not a mean over runs."""

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
    runner.CampaignProgress = lambda *a, **k: original(*a, **k, stream=stream)
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
    # before any run: the smoke costs of assets, corpus and mix (60 + 5 + 2.5 s)
    assert lines[0].startswith("[1/3] run [assets] a (log: ") and lines[0].endswith("a/stage.log); ETA 0:01:08")
    # a took 7 s; left: a corpus and a mix run at their stages' costs, not 2 x 7 s
    assert lines[1] == "[1/3] done a in 7 s; elapsed 0:00:07, ETA 0:00:08"
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


def test_eta_sums_each_stage_expected_cost_from_the_records_not_a_mean_over_runs(tmp_path, monkeypatch):
    """A long run first (an asset build, a midtraining) made the mean-based ETA huge for the many
    short evaluations after it; each stage's cost is its own runs' mean."""
    import py4.campaign.progress as progress
    from py4.campaign.records import record_dir
    from py4.runs import atomic_write_json

    now = [100.0]
    monkeypatch.setattr(progress, "_now", lambda: now[0])
    earlier = [Node(id="m1", stage="midtrain", run_dir=str(tmp_path / "m1"), gpus=1),
               Node(id="e1", stage="eval", run_dir=str(tmp_path / "e1"))]
    for node, seconds in zip(earlier, (100.0, 4.0), strict=True):  # recorded by an earlier invocation
        atomic_write_json(record_dir(tmp_path, node) / "run_manifest.json",
                          {"status": "done", "timings": {"total_s": seconds}})
    todo = [Node(id="m2", stage="midtrain", run_dir=str(tmp_path / "m2"), gpus=1),
            Node(id="e2", stage="eval", run_dir=str(tmp_path / "e2")),
            Node(id="e3", stage="eval", run_dir=str(tmp_path / "e3"))]
    bar = CampaignProgress(5, tmp_path, stream=io.StringIO(), nodes=[*earlier, *todo],
                           to_run={n.id for n in todo}, history=[*earlier, *todo])
    bar.skipped(earlier[0])
    bar.skipped(earlier[1])
    assert bar.eta() == 100 + 4 + 4
    bar.started(todo[0], resumed=False)
    now[0] += 30
    assert bar.eta() == 70 + 4 + 4  # the current run's cost less what it has taken
    now[0] += 20
    bar.ended(todo[0], ok=True)
    assert bar.expected("midtrain") == 75  # its stage's cost now counts this run too
    assert bar.eta() == 4 + 4  # a mean over this invocation's runs said 2 x 50 s
    assert clock(bar.eta()) == "0:00:08" and clock(3725) == "1:02:05"
    bar.close()


def test_a_stage_with_no_record_of_a_gpu_campaign_costs_the_mean_of_the_others(tmp_path):
    todo = [Node(id="g", stage="grpo", run_dir=str(tmp_path / "g"), gpus=8)]
    bar = CampaignProgress(1, tmp_path, stream=io.StringIO(), nodes=todo, history=todo)
    assert bar.eta() is None  # nothing has run: unknown, not a smoke figure for an 8-GPU run
    bar.close()


def _reporting(steps: int, stream: io.StringIO, seen: str):
    """An executor that reports training steps as a stage does and waits until the display shows them."""
    import time

    from py4.run_progress import report

    def run(node: Node) -> None:
        for step in range(1, steps + 1):
            report("step", step, steps, loss=2.5 / step)
        deadline = time.monotonic() + 20  # the display reads the file once a second
        while seen not in stream.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
    return run


def _run_one(tmp_path, stream, executor) -> None:
    import py4.campaign.runner as runner

    original = runner.CampaignProgress
    runner.CampaignProgress = lambda *a, **k: original(*a, **k, stream=stream)
    try:
        run_campaign([Node(id="m", stage="midtrain", run_dir=str(tmp_path / "m"))], tmp_path,
                     {"midtrain": executor}, log=lambda s: None)
    finally:
        runner.CampaignProgress = original


def test_the_terminal_shows_the_current_runs_own_progress_under_the_campaign_line(tmp_path):
    stream = _Terminal()
    _run_one(tmp_path, stream, _reporting(4, stream, "step 4/4, loss 0.625"))
    console = stream.getvalue()
    assert "step 4/4, loss 0.625" in console and "campaign" in console


def test_a_log_gets_the_current_runs_progress_as_lines(tmp_path, monkeypatch):
    import py4.campaign.progress as progress

    monkeypatch.setattr(progress, "_LOG_EVERY_S", 0.0)
    stream = io.StringIO()
    _run_one(tmp_path, stream, _reporting(3, stream, "m: step 3/3"))
    assert "  m: step 3/3, loss 0.8333" in stream.getvalue().splitlines()


def test_stages_report_their_own_progress_to_the_file_the_runner_names(tmp_path, monkeypatch):
    """An evaluation reports its episodes, a training stage (through the callback every trainer
    has) its step and loss; without the variable nothing is written."""
    from types import SimpleNamespace

    import py4.run_progress as run_progress
    from py4.evaluate.config import load_eval_config
    from py4.evaluate.harness import run
    from py4.train.callbacks import GuardCallback

    path = tmp_path / "progress.json"
    monkeypatch.setattr(run_progress, "_last_write", 0.0)
    monkeypatch.setenv(run_progress.ENV, str(path))
    run(load_eval_config(None, ["policy.name=gold", "splits=[test_heldin]", "limit=2"]), tmp_path / "eval",
        progress=False)
    assert run_progress.describe(run_progress.read(path)) == "test_heldin episodes 2/2"
    callback = GuardCallback()
    callback.on_log(None, SimpleNamespace(global_step=3), None, logs={"loss": 2.5})
    callback.on_step_end(None, SimpleNamespace(global_step=4, max_steps=4, is_world_process_zero=True), None)
    assert run_progress.describe(run_progress.read(path)) == "step 4/4, loss 2.5"
    monkeypatch.delenv(run_progress.ENV)
    path.unlink()
    callback.on_step_end(None, SimpleNamespace(global_step=4, max_steps=4, is_world_process_zero=True), None)
    assert not path.exists()
