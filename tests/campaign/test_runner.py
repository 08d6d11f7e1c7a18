"""Runner: dependency order, skip-done, resume after an interrupted run, ledgers, result reports.

Stages are dispatched through the executor table, so these tests substitute cheap fakes
that write what the real stages write (run_manifest.json, results.json).
"""

import json
from pathlib import Path

import pytest

from py4.campaign.dag import Node, build_dag
from py4.campaign.ledgers import write_ledgers
from py4.campaign.records import node_status
from py4.campaign.runner import run_campaign
from py4.campaign.spec import load_campaign
from py4.runs import RunRecorder

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _cheap_manifests(monkeypatch):
    # Hundreds of records per test: skip the (slow) library/hardware probes of each manifest.
    monkeypatch.setattr("py4.runs.library_versions", lambda *a, **k: {})
    monkeypatch.setattr("py4.runs.hardware_info", lambda: {})


def _spec(tmp_path):
    return load_campaign(ROOT / "configs/campaign/smoke.yaml", [f"out_dir={tmp_path}"])


class FakeStages:
    """Writes a done stage manifest (and eval results) per node; can interrupt one node once."""

    def __init__(self, interrupt: str | None = None, fail: str | None = None):
        self.calls: list[str] = []
        self.interrupt, self.fail = interrupt, fail

    def __call__(self, node):
        self.calls.append(node.id)
        with RunRecorder(node.run_dir, None, f"fake.{node.stage}") as rec:
            if node.id == self.fail:
                raise RuntimeError("boom")
            if node.id == self.interrupt:
                self.interrupt = None
                raise KeyboardInterrupt
            if node.stage == "eval":
                dose = node.meta.dose or 0
                splits = {s: {"certified_rate": (min(dose, 32) / 32 if s == "train_sanity" else 0.0),
                              "pass_at_k": {"1": 0.1, "2": 0.2}, "outcomes": {"certified": 1}, "problems": 4,
                              "episodes": 8, "mean_reward": 0.0, "per_rule": {"P4-02": {"certified_rate": 0.5}}}
                          for s in node.meta.splits}
                Path(node.run_dir, "results.json").write_text(json.dumps({"splits": splits}))
            if node.stage == "grpo":
                rec.set(reward_log=[{"step": 1, "reward": -0.2}, {"step": 2, "reward": 0.1}])
            rec.add_output("model", Path(node.run_dir))

    def table(self, nodes):
        return {n.stage: self for n in nodes}


def test_runs_everything_in_order_then_skips_everything(tmp_path):
    spec = _spec(tmp_path)
    nodes = build_dag(spec)
    fake = FakeStages()
    summary = run_campaign(nodes, spec.out_dir, fake.table(nodes), progress=False, log=lambda s: None)
    assert summary.ok and len(summary.ran) == len(nodes) and fake.calls == [n.id for n in nodes]
    again = FakeStages()
    summary2 = run_campaign(nodes, spec.out_dir, again.table(nodes), progress=False, log=lambda s: None)
    assert again.calls == [] and len(summary2.skipped) == len(nodes)


def test_interrupted_run_is_resumed_and_others_skipped(tmp_path):
    spec = _spec(tmp_path)
    nodes = build_dag(spec)
    target = "tiny/iso/midtrain"
    fake = FakeStages(interrupt=target)
    with pytest.raises(KeyboardInterrupt):
        run_campaign(nodes, spec.out_dir, fake.table(nodes), progress=False, log=lambda s: None)
    node = next(n for n in nodes if n.id == target)
    assert node_status(spec.out_dir, node) == "interrupted"
    done_before = [i for i in fake.calls if i != target]
    second = FakeStages()
    logs = []
    summary = run_campaign(nodes, spec.out_dir, second.table(nodes), progress=False, log=logs.append)
    assert second.calls[0] == target and not set(done_before) & set(second.calls)
    assert any("resuming after interrupted" in line for line in logs)
    assert summary.ok and node_status(spec.out_dir, node) == "done"
    record = json.loads((tmp_path / "_campaign/runs/tiny/iso/midtrain/run_manifest.json").read_text())
    assert record["attempt"] == 2 and record["resumed_from"] == "interrupted"


def test_failure_blocks_dependants_only(tmp_path):
    spec = _spec(tmp_path)
    nodes = build_dag(spec)
    fake = FakeStages(fail="tiny/control/midtrain")
    summary = run_campaign(nodes, spec.out_dir, fake.table(nodes), progress=False, log=lambda s: None)
    assert summary.failed == ["tiny/control/midtrain"]
    assert "tiny/control/sft" in summary.blocked and "tiny/iso/sft" in summary.ran


def test_only_pattern_runs_selected_and_blocks_on_missing_inputs(tmp_path):
    spec = _spec(tmp_path)
    nodes = build_dag(spec)
    fake = FakeStages()
    summary = run_campaign(nodes, spec.out_dir, fake.table(nodes), selected={"assets", "corpus", "tiny/iso/mix"},
                           progress=False, log=lambda s: None)
    assert fake.calls == ["assets", "corpus"] and summary.blocked == ["tiny/iso/mix"]


def test_ledgers_and_results(tmp_path):
    from py4.report.results import write_results

    spec = _spec(tmp_path)
    nodes = build_dag(spec)
    fake = FakeStages(fail="tiny/prop/eft_8")
    run_campaign(nodes, spec.out_dir, fake.table(nodes), progress=False, log=lambda s: None)
    status, weights = write_ledgers(nodes, spec.out_dir, spec.name)
    text = status.read_text()
    assert "| `tiny/iso/midtrain` | midtrain | done | 1 |" in text
    assert "| `tiny/prop/eft_8` | eft | failed |" in text and "| `eval:tiny/prop/eft_8` | eval | pending |" in text
    w = weights.read_text()
    assert "| `tiny/iso/eft_32` | LoRA adapter | done |" in w and "`tiny/iso/sft`" in w
    paths = write_results(spec, tmp_path / "report", calibration=False)
    data = json.loads((tmp_path / "report/results.json").read_text())
    sanity = {(e["arm"], e["dose"]): e["certified_rate"] for e in data["entries"]
              if e["split"] == "train_sanity" and e["kind"] == "eft"}
    assert sanity[("iso", 0)] == 0.0 and sanity[("iso", 32)] == 1.0
    assert "eval:tiny/prop/eft_8" in data["missing_evaluations"]
    assert data["grpo_reward_per_step"] == [{"step": 1, "reward": -0.2}, {"step": 2, "reward": 0.1}]
    md = (tmp_path / "report/results.md").read_text()
    assert ("| Tiny Gemma-3 (smoke) | iso-token | 32 | train_sanity | 1.000 | [0.676, 1.000] | 8/8 | "
            "@1 0.100, @2 0.200 | 4 x 2 |") in md
    assert "## GRPO ladder" in md and "### test_heldin" in md
    for name in ("dose_response.png", "grpo_ladder.png"):
        assert (tmp_path / "report" / name).read_bytes()[:4] == b"\x89PNG"
    assert {p.name for p in paths} == {"results.json", "results.md", "probes.json", "dose_response.png",
                                       "grpo_ladder.png", "index.html"}


def _gold_eval(run: Path, **fields) -> Node:
    """An ``eval`` run of the gold policy on one problem (seconds, no model)."""
    from py4.overrides import overrides

    return Node(id="gold", stage="eval", run_dir=str(run), overrides=overrides({"limit": 1}),
                options={"out": str(run), "policy": "gold", "split": ["test_heldin"], "progress": False}, **fields)


def test_inprocess_executor_runs_the_stage_through_the_registry_and_reports_failures(tmp_path, capsys):
    from py4.campaign.runner import RunFailed, run_inprocess

    run_inprocess(_gold_eval(tmp_path / "eval"))
    assert json.loads((tmp_path / "eval/results.json").read_text())["splits"]["test_heldin"]["certified_rate"] == 1.0
    # A user's error (the config file is missing): its message, which names the file; no traceback.
    with pytest.raises(RunFailed, match="nope.yaml"):
        run_inprocess(_gold_eval(tmp_path / "bad", config=str(tmp_path / "nope.yaml")))
    assert "Traceback" not in capsys.readouterr().err


def test_the_stage_log_says_what_a_non_training_stage_made_not_its_repr(tmp_path, capsys):
    from py4.campaign.runner import run_inprocess

    run_inprocess(_gold_eval(tmp_path / "eval"))
    done = [line for line in capsys.readouterr().out.splitlines() if line.startswith("done eval:")]
    assert done == ['done eval: test_heldin: certified 1.000, pass@k {"1": 1.0}, '
                    'outcomes {"certified": 1, "uncertified": 0, "no_submission": 0, "truncated": 0}, '
                    'mean reward +1.000'], done


def test_a_done_run_whose_command_changed_runs_again(tmp_path, capfd):
    spec = _spec(tmp_path)
    nodes = build_dag(spec)
    run_campaign(nodes, spec.out_dir, FakeStages().table(nodes), progress=False, log=lambda s: None)
    changed = build_dag(load_campaign(ROOT / "configs/campaign/smoke.yaml",
                                      [f"out_dir={tmp_path}", "corpus.iso.value=1234"]))
    fake, logs = FakeStages(), []
    run_campaign(changed, spec.out_dir, fake.table(changed), progress=True, log=logs.append)
    # the subset and everything downstream of it (the iso and control mixes, their models, ...)
    assert fake.calls[0] == "corpus_iso" and "tiny/control/mix" in fake.calls and "tiny/iso/sft" in fake.calls
    assert "corpus" not in fake.calls and "tiny/prop/midtrain" not in fake.calls
    # It starts again, it does not resume: the log, the progress line and the record said it resumed.
    captured = capfd.readouterr()  # the progress display writes to (a copy of) the stderr descriptor
    shown = logs + captured.out.splitlines() + captured.err.splitlines()
    assert not [line for line in shown if "resum" in line], shown
    assert any("run [subset] corpus_iso" in line for line in shown), shown
    record = json.loads((tmp_path / "_campaign/runs/corpus_iso/run_manifest.json").read_text())
    assert record["resumed_from"] is None


def test_a_changed_run_starts_from_scratch_but_grpo_segments_keep_their_shared_folder(tmp_path):
    """A stale checkpoint of other settings must not be resumed (run.resume: auto would)."""
    spec = _spec(tmp_path)
    nodes = build_dag(spec)
    run_campaign(nodes, spec.out_dir, FakeStages().table(nodes), progress=False, log=lambda s: None)
    eft = next(n for n in nodes if n.id == "tiny/iso/eft_8")
    first, later = [n for n in nodes if n.stage == "grpo"]
    assert first.run_dir == later.run_dir
    stale = {eft.id: Path(eft.run_dir, "checkpoint-100"), first.id: Path(first.run_dir, "checkpoint-4")}
    for path in stale.values():
        path.mkdir()
    changed = build_dag(load_campaign(ROOT / "configs/campaign/smoke.yaml", [
        f"out_dir={tmp_path}", "eft.overrides=[optimisation.max_steps=7]",
        "eft.warmstart_overrides=[optimisation.max_steps=3]"]))
    seen: dict[str, bool] = {}

    class Probe(FakeStages):
        def __call__(self, node):
            if node.id in stale:
                seen[node.id] = stale[node.id].exists()
            if node.id == later.id:
                seen[later.id] = Path(first.run_dir, "checkpoint-2").exists()
            super().__call__(node)
            if node.id == first.id:  # the first segment writes the checkpoint the second resumes
                Path(node.run_dir, "checkpoint-2").mkdir()

    probe = Probe()
    run_campaign(changed, spec.out_dir, probe.table(changed), progress=False, log=lambda s: None)
    assert seen == {eft.id: False, first.id: False, later.id: True}


def test_subprocess_runs_do_not_depend_on_path_or_an_activated_venv(monkeypatch, tmp_path):
    """Defect 16: `.venv/bin/py4 campaign run --subprocess` (and `make demo`) with no venv on PATH.

    A multi-GPU node starts under accelerate: it must be this interpreter's accelerate, not a
    bare `accelerate` looked up on PATH (which a non-activated venv does not provide).
    """
    import shutil
    import sys

    from py4.campaign.dag import Node
    from py4.campaign.runner import RunFailed, run_subprocess

    bare = "/usr/bin:/bin"
    monkeypatch.setenv("PATH", bare)
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    assert shutil.which("accelerate", path=bare) is None and shutil.which("py4", path=bare) is None
    multi_gpu = Node(id="mid", stage="midtrain", config=str(tmp_path / "nope.yaml"), run_dir=str(tmp_path), gpus=4)
    assert multi_gpu.launch_argv[:3] == [sys.executable, "-m", "accelerate.commands.launch"]
    with pytest.raises(RunFailed, match="exited with"):  # the stage's own error: accelerate and py4 started
        run_subprocess(multi_gpu)  # raised FileNotFoundError: 'accelerate' before the fix
    run_subprocess(_gold_eval(tmp_path / "eval"))
    assert (tmp_path / "eval/results.json").is_file()


@pytest.mark.smoke
@pytest.mark.parametrize("ending", ["fails", "is interrupted"])
def test_the_runner_stops_an_evaluations_server_however_the_run_ends(tmp_path, ending):
    """Defect 9: the runner owns the server's lifecycle: up while the evaluation runs, never left running."""
    import os
    import socket

    import httpx

    from py4.campaign.dag import Node
    from py4.campaign.records import record_dir
    from py4.evaluate.serve import ServeConfig, plan_server
    from py4.rehearsal.standins import build_standin

    weights = build_standin("glm45", "it", tmp_path / "graft", seed=0)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = plan_server(ServeConfig(engine="transformers", port=port), str(weights), name="glm45/graft",
                         scratch=str(tmp_path / "eval/served_model"))
    node = Node(id="eval:glm45/graft", stage="eval", options={"out": str(tmp_path / "eval")},
                run_dir=str(tmp_path / "eval"), server=server)
    seen = {}

    def evaluation(n):
        seen["models"] = [m["id"] for m in httpx.get(f"{n.server.base_url}/models").json()["data"]]
        raise RuntimeError("the evaluation failed") if ending == "fails" else KeyboardInterrupt

    if ending == "fails":
        summary = run_campaign([node], tmp_path, {"eval": evaluation}, progress=False, log=lambda s: None)
        assert summary.failed == [node.id]
    else:
        with pytest.raises(KeyboardInterrupt):
            run_campaign([node], tmp_path, {"eval": evaluation}, progress=False, log=lambda s: None)
    assert seen["models"] == [server.request_model]  # it was serving while the evaluation ran
    log = record_dir(tmp_path, node) / "server.log"
    pid = int(next(line for line in log.read_text().splitlines() if line.startswith("pid "))[4:])
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not (tmp_path / "eval/served_model").exists()
    assert node_status(tmp_path, node) == ("failed" if ending == "fails" else "interrupted")
    recorded = json.loads((record_dir(tmp_path, node) / "run_manifest.json").read_text())["server"]
    assert recorded["language_model_only"] is False and recorded["command"] == server.command


def test_each_run_gets_the_runners_reading_of_the_load_and_its_start_samples_nothing(tmp_path, monkeypatch):
    """The runner measures the machine between runs and hands each run the reading
    (PY4_BUSY_CORES): the stage's thread choice reads it instead of sampling /proc/stat."""
    import os

    import py4.threads
    from py4.threads import BUSY_ENV, MachineLoad, cpu_threads

    clock = {"t": 0.0, "busy": 0, "total": 0, "own": 0.0}

    def jiffies():  # each look at the machine: 2 s more, 1.5 of its 2 cores busy, 0.5 of them the runner's
        clock["t"] += 2.0
        clock["busy"] += 300
        clock["total"] += 400
        clock["own"] += 1.0
        return clock["busy"], clock["total"]

    load = MachineLoad(jiffies=jiffies, own_cpu=lambda: clock["own"], clock=lambda: clock["t"], cpus=2)

    def no_sampling(*args, **kwargs):
        raise AssertionError("a stage's start sampled the machine")

    monkeypatch.delenv(BUSY_ENV, raising=False)
    monkeypatch.delenv("PY4_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(py4.threads, "busy_cores", no_sampling)
    monkeypatch.setattr(py4.threads, "_cpu_jiffies", no_sampling)
    spec = _spec(tmp_path)
    nodes = build_dag(spec)
    seen = []

    class Stage(FakeStages):
        def __call__(self, node):
            seen.append((os.environ.get(BUSY_ENV), cpu_threads(cores=2)))
            super().__call__(node)

    fake = Stage()
    summary = run_campaign(nodes, spec.out_dir, fake.table(nodes), progress=False, log=lambda s: None, load=load)
    assert summary.ok and len(seen) == len(nodes)
    assert set(seen) == {("1.00", 1)}  # one core busy elsewhere: one thread
    assert BUSY_ENV not in os.environ  # the reading is the run's, not the caller's
