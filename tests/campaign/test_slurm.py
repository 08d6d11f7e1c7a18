"""The Slurm backend without a cluster: sbatch command lines, the dependency graph, resubmission,
the status table and cancel, against a fake sbatch/squeue/sacct/scancel on PATH (fake_slurm.py).

tests/campaign/test_slurm_cluster.py runs the same backend against a real Slurm (slow tier).
"""

import json
import sys
from pathlib import Path

import fake_slurm
import pytest
from typer.testing import CliRunner

from py4.campaign.dag import build_dag
from py4.campaign.records import fingerprints, record_dir
from py4.campaign.runner import run_campaign
from py4.campaign.slurm import (
    SlurmError,
    cancel_campaign,
    gpu_request,
    latest_jobs,
    query_jobs,
    read_jobs,
    sbatch_argv,
    submit_campaign,
)
from py4.campaign.spec import load_campaign
from py4.campaign.status import compact_ids, run_states, status_tables, summary_line
from py4.config import ConfigError
from py4.runs import RunRecorder

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "configs/campaign/smoke.yaml"
PYTHON4 = ROOT / "configs/campaign/python4.yaml"


@pytest.fixture(autouse=True)
def _cheap_manifests(monkeypatch):
    monkeypatch.setattr("py4.runs.library_versions", lambda *a, **k: {})
    monkeypatch.setattr("py4.runs.hardware_info", dict)
    monkeypatch.chdir(ROOT)  # the specs name their configs relative to the repository root


@pytest.fixture
def slurm(tmp_path, monkeypatch):
    return fake_slurm.install(tmp_path, monkeypatch)


def _smoke(tmp_path, *overrides):
    spec = load_campaign(SMOKE, [f"out_dir={tmp_path}/out", *overrides])
    return spec, build_dag(spec)


def _quiet(_):
    pass


def _done(nodes, out, ids):
    """Records that say done, as the runner writes them (fingerprint included)."""
    prints = fingerprints(nodes)
    for n in nodes:
        if n.id in ids:
            with RunRecorder(record_dir(out, n), None, "campaign.node") as rec:
                rec.set(fingerprint=prints[n.id])


def _failed(nodes, out, node_id):
    n = next(n for n in nodes if n.id == node_id)
    with pytest.raises(RuntimeError):
        with RunRecorder(record_dir(out, n), None, "campaign.node") as rec:
            rec.set(fingerprint=fingerprints(nodes)[n.id])
            raise RuntimeError("boom")


# --- command lines -----------------------------------------------------------------------------

def test_sbatch_lines_carry_each_runs_gpus_type_time_partition_and_account(tmp_path):
    spec = load_campaign(PYTHON4, [f"out_dir={tmp_path}", "cluster.partition=gpu", "cluster.account=py4",
                                   "cluster.time=1-00:00:00", "cluster.time_per_stage={midtrain: 3-00:00:00}",
                                   "cluster.cpus_per_task=16", "cluster.sbatch_args=[--qos=high]"])
    nodes = {n.id: n for n in build_dag(spec)}

    def line(node_id, deps=()):
        return sbatch_argv(nodes[node_id], spec, Path("/x/job.sh"), list(deps), Path("/repo"))

    mid = line("gemma4_31b/prop/midtrain", ["7"])
    assert mid[:2] == ["sbatch", "--parsable"] and mid[-1] == "/x/job.sh"
    for option in ("--job-name=py4:python4:gemma4_31b/prop/midtrain", "--partition=gpu", "--account=py4",
                   "--time=3-00:00:00", "--cpus-per-task=16", "--gres=gpu:h200:8", "--dependency=afterok:7",
                   "--kill-on-invalid-dep=yes", "--chdir=/repo", "--nodes=1", "--qos=high",
                   f"--output={record_dir(tmp_path, nodes['gemma4_31b/prop/midtrain']).resolve()}/slurm-%j.log"):
        assert option in mid, option
    assert "--time=1-00:00:00" in line("gemma4_12b/iso/sft")  # the default where no stage time is set
    assert "--gres=gpu:h200:4" in line("gemma4_12b/iso/midtrain")
    # GRPO holds its vLLM rollout server's GPUs too: the model's whole node
    assert "--gres=gpu:h200:8" in line("gemma4_31b/prop/grpo_to32")
    # a served evaluation: its server's tensor parallelism (GLM 4, Gemma 1)
    assert "--gres=gpu:h200:4" in line("eval:glm45_air/iso/eft_256")
    assert "--gres=gpu:h200:1" in line("eval:gemma4_12b/iso/eft_256")
    # an EFT dose samples replay answers from its parent: the GPUs serving that model takes
    assert "--gres=gpu:h200:4" in line("glm45_air/iso/eft_dose_1024")
    assert nodes["glm45_air/iso/eft_dose_1024"].launch_argv is None  # one process, not an accelerate launch
    # CPU-only runs ask for no GPU; a run without inputs to wait for has no dependency
    graft = line("gemma4_12b/iso/graft")
    assert not any(a.startswith(("--gres", "--gpus", "--dependency")) for a in graft)


def test_gpu_option_and_type_names_come_from_the_cluster_section(tmp_path):
    spec = load_campaign(PYTHON4, [f"out_dir={tmp_path}", "cluster.gpu_option=gpus-per-node",
                                   "cluster.gpu_types={H200: nvidia_h200}"])
    node = next(n for n in build_dag(spec) if n.id == "gemma4_31b/iso/midtrain")
    assert "--gpus-per-node=nvidia_h200:8" in sbatch_argv(node, spec, Path("j.sh"), [], Path("."))
    spec = load_campaign(PYTHON4, [f"out_dir={tmp_path}", "cluster.gpu_types={H200: null}"])
    assert gpu_request(node, spec) == (8, None)
    assert "--gres=gpu:8" in sbatch_argv(node, spec, Path("j.sh"), [], Path("."))


@pytest.mark.parametrize("override, message", [
    ("cluster.time=4:00:00", "quoted string"),
    ("cluster.time=soon", "not a Slurm time limit"),
    ("cluster.partition=a b", "not a Slurm name"),
    ("cluster.time_per_stage={midtrian: '1:00:00'}", "unknown stage 'midtrian'"),
    ("cluster.sbatch_args=[--dependency=afterok:1]", "--dependency is set by the Slurm backend"),
    ("cluster.sbatch_args=[qos=high]", "is not an option"),
    ("cluster.gpu_types={A100: a100}", "no model has gpu_type 'A100'"),
    ("cluster.gpu_option=gpus", "gpu_option"),
    ("cluster.mem=lots", "not a Slurm memory size"),
    ("cluster.partiton=gpu", "cluster.partiton: unknown key"),
])
def test_cluster_section_is_strict(tmp_path, override, message):
    with pytest.raises(ConfigError) as err:
        load_campaign(PYTHON4, [f"out_dir={tmp_path}", override])
    assert message in str(err.value) and "python4.yaml" in str(err.value)


def test_job_script_runs_the_node_through_this_interpreter_with_the_specs_overrides(tmp_path, slurm):
    spec, nodes = _smoke(tmp_path, "cluster.setup=[module load cuda]")
    summary = submit_campaign(spec, nodes, SMOKE, [f"out_dir={tmp_path}/out"], {"assets"}, log=_quiet)
    script = (record_dir(spec.out_dir, nodes[0]) / "slurm-job.sh").read_text()
    assert summary.submitted == {"assets": "100"}
    assert f"#   {nodes[0].command}\n" in script  # the node's command, for a reader
    lines = script.splitlines()
    assert lines[0] == "#!/bin/bash" and "module load cuda" in lines
    assert lines[-1].startswith(f"exec {sys.executable} -m py4.campaign.slurm_job {SMOKE} --node assets --fingerprint ")
    assert lines[-1].endswith(f"--set out_dir={tmp_path}/out")
    assert slurm.sbatch_of("100")[-1] == str(record_dir(spec.out_dir, nodes[0]).resolve() / "slurm-job.sh")


# --- the dependency graph, resubmission ------------------------------------------------------------

def test_every_run_waits_for_exactly_its_inputs_jobs(tmp_path, slurm):
    spec, nodes = _smoke(tmp_path)
    summary = submit_campaign(spec, nodes, SMOKE, [], log=_quiet)
    assert list(summary.submitted) == [n.id for n in nodes] and not summary.blocked
    job_of = summary.submitted
    node_of = {j: n for n, j in job_of.items()}
    for node in nodes:
        argv = slurm.sbatch_of(job_of[node.id])
        deps = [a.split("=", 1)[1] for a in argv if a.startswith("--dependency=")]
        if node.inputs:
            assert deps == ["afterok:" + ":".join(job_of[i] for i in node.inputs)]
            assert "--kill-on-invalid-dep=yes" in argv  # a failed input cancels it: blocked, not stuck
            assert all(int(job_of[i]) < int(job_of[node.id]) for i in node.inputs)
        else:
            assert deps == []
    # recorded for status and cancel: node, job id, fingerprint, log beside the node's record
    records = latest_jobs(spec.out_dir)
    prints = fingerprints(nodes)
    assert {r.node: r.job_id for r in records.values()} == job_of
    for r in records.values():
        assert r.fingerprint == prints[r.node] and r.log.endswith(f"slurm-{r.job_id}.log")
        assert Path(r.log).parent == record_dir(spec.out_dir, next(n for n in nodes if n.id == r.node)).resolve()
    assert node_of[min(job_of.values(), key=int)] == "assets"


def _submitted_with_corpus_iso_failed(tmp_path, slurm):
    """The smoke campaign submitted once; then assets and corpus finished, corpus_iso failed and
    every other job still waits on its dependencies. Returns (spec, nodes, first submission)."""
    spec, nodes = _smoke(tmp_path)
    first = submit_campaign(spec, nodes, SMOKE, [], log=_quiet)
    _done(nodes, spec.out_dir, {"assets", "corpus"})
    _failed(nodes, spec.out_dir, "corpus_iso")
    for node_id, job in first.submitted.items():
        slurm.set_job(job, "COMPLETED" if node_id in ("assets", "corpus") else "PENDING", "Dependency")
    slurm.set_job(first.submitted["corpus_iso"], "FAILED", "NonZeroExitCode")
    return spec, nodes, first


def test_resubmitting_submits_only_what_is_not_done_and_keeps_queued_jobs(tmp_path, slurm):
    # assets and corpus finished; corpus_iso failed; tiny/sft_data is still running; the
    # jobs that depended on corpus_iso were cancelled by Slurm; everything else is still queued
    spec, nodes, first = _submitted_with_corpus_iso_failed(tmp_path, slurm)
    slurm.set_job(first.submitted["tiny/sft_data"], "RUNNING")
    dependants = _downstream(nodes, "corpus_iso")
    for node_id in dependants:
        slurm.set_job(first.submitted[node_id], "CANCELLED", "DependencyNeverSatisfied")

    again = submit_campaign(spec, nodes, SMOKE, [], log=_quiet)
    assert again.skipped == ["assets", "corpus"]
    assert set(again.submitted) == {"corpus_iso", *dependants}
    assert set(again.queued) == {n.id for n in nodes} - {"assets", "corpus", "corpus_iso", *dependants}
    assert again.queued["tiny/sft_data"] == first.submitted["tiny/sft_data"]
    # assets is done: tiny/iso/mix waits for the new corpus_iso job alone
    assert _dependencies(slurm.sbatch_of(again.submitted["tiny/iso/mix"])) == [again.submitted["corpus_iso"]]
    assert not any(a.startswith("--dependency") for a in slurm.sbatch_of(again.submitted["corpus_iso"]))
    # the new midtraining job and the sft_data job still running from the first submission
    assert _dependencies(slurm.sbatch_of(again.submitted["tiny/iso/sft"])) == [
        again.submitted["tiny/iso/midtrain"], first.submitted["tiny/sft_data"]]
    # a third submission while all of that is queued submits nothing
    for job in again.submitted.values():
        slurm.set_job(job, "PENDING", "Dependency")
    third = submit_campaign(spec, nodes, SMOKE, [], log=_quiet)
    assert not third.submitted and len(third.queued) == len(nodes) - 2


def _dependencies(argv):
    deps = [a.removeprefix("--dependency=afterok:") for a in argv if a.startswith("--dependency=")]
    return deps[0].split(":") if deps else []


def _downstream(nodes, node_id):
    out: set[str] = set()
    for n in nodes:  # dependency order
        if node_id in n.inputs or out & set(n.inputs):
            out.add(n.id)
    return out


def test_a_queued_job_of_an_older_version_of_a_run_is_not_silently_kept(tmp_path, slurm):
    spec, nodes = _smoke(tmp_path)
    first = submit_campaign(spec, nodes, SMOKE, [], {"assets"}, log=_quiet)
    assert submit_campaign(spec, nodes, SMOKE, [], {"assets"}, log=_quiet).queued == first.submitted
    # the queued job was submitted for another command (its fingerprint differs from today's)
    records = Path(spec.out_dir, "_campaign/slurm/jobs.jsonl")
    line = json.loads(records.read_text())
    records.write_text(json.dumps({**line, "fingerprint": "0" * 16}) + "\n")
    with pytest.raises(SlurmError, match="assets: job 100 is still PENDING .*py4 campaign cancel"):
        submit_campaign(spec, nodes, SMOKE, [], {"assets"}, log=_quiet)


def test_only_submits_the_selection_and_blocks_what_needs_runs_outside_it(tmp_path, slurm):
    spec, nodes = _smoke(tmp_path)
    _done(nodes, spec.out_dir, {"assets", "corpus", "corpus_iso"})
    selected = {n.id for n in nodes if n.id.startswith("tiny/iso/")}
    summary = submit_campaign(spec, nodes, SMOKE, [], selected, log=_quiet)
    assert "tiny/iso/mix" in summary.submitted
    assert not any(a.startswith("--dependency") for a in slurm.sbatch_of(summary.submitted["tiny/iso/mix"]))
    assert "tiny/iso/sft" in summary.blocked  # needs tiny/sft_data: not done, not selected


def test_sbatch_errors_name_the_run_and_the_command(tmp_path, slurm):
    spec, nodes = _smoke(tmp_path)
    slurm.update(sbatch_fails=True)
    with pytest.raises(SlurmError, match=r"sbatch failed for assets .*Invalid account[\s\S]*command: sbatch"):
        submit_campaign(spec, nodes, SMOKE, [], log=_quiet)
    assert read_jobs(spec.out_dir) == []


def test_missing_slurm_commands_are_named(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    spec, nodes = _smoke(tmp_path)
    with pytest.raises(SlurmError, match="sbatch not found on PATH"):
        submit_campaign(spec, nodes, SMOKE, [], log=_quiet)


# --- status -------------------------------------------------------------------------------------

def test_states_come_from_the_records_and_the_queue(tmp_path, slurm):
    spec, nodes = _smoke(tmp_path)
    first = submit_campaign(spec, nodes, SMOKE, [], log=_quiet)
    _done(nodes, spec.out_dir, {"assets", "corpus", "corpus_iso"})
    _failed(nodes, spec.out_dir, "tiny/sft_data")
    for job in first.submitted.values():
        slurm.set_job(job, "PENDING", "Dependency")
    for node_id in ("assets", "corpus", "corpus_iso"):
        slurm.set_job(first.submitted[node_id], "COMPLETED")
    slurm.set_job(first.submitted["tiny/sft_data"], "FAILED", "NonZeroExitCode")
    for node_id in _downstream(nodes, "tiny/sft_data"):
        slurm.set_job(first.submitted[node_id], "CANCELLED", "DependencyNeverSatisfied")
    slurm.set_job(first.submitted["tiny/iso/mix"], "RUNNING")
    slurm.set_job(first.submitted["corpus_prop_tiny"], "TIMEOUT", purged=True)  # ended, no record
    for node_id in _downstream(nodes, "corpus_prop_tiny"):
        slurm.set_job(first.submitted[node_id], "CANCELLED", "DependencyNeverSatisfied")
    # without --kill-on-invalid-dep honoured, Slurm keeps such a job pending for ever: blocked too
    slurm.set_job(first.submitted["tiny/prop/mix"], "PENDING", "DependencyNeverSatisfied")
    slurm.update(accounting=True)  # sacct knows it

    jobs = latest_jobs(spec.out_dir)
    rows = {r.node.id: r for r in run_states(nodes, spec.out_dir, jobs, query_jobs([j.job_id for j in jobs.values()]))}
    assert {i for i, r in rows.items() if r.state == "done"} == {"assets", "corpus", "corpus_iso"}
    assert rows["tiny/sft_data"].state == "failed" and rows["tiny/sft_data"].slurm_state == "FAILED"
    assert rows["corpus_prop_tiny"].state == "failed" and rows["corpus_prop_tiny"].slurm_state == "TIMEOUT"
    assert rows["tiny/iso/mix"].state == "running"
    assert rows["tiny/control/mix"].state == "pending" and rows["tiny/control/mix"].slurm_reason == "Dependency"
    blocked = {i for i, r in rows.items() if r.state == "blocked"}
    assert blocked == _downstream(nodes, "tiny/sft_data") | _downstream(nodes, "corpus_prop_tiny")
    line = summary_line(list(rows.values()))
    assert line.startswith(f"{len(nodes)} runs: 3 done, 1 running, ") and ", 2 failed, " in line
    queued = sum(r.state in ("running", "pending") for r in rows.values()) + 1  # + tiny/prop/mix, still queued
    assert line.endswith(f"Slurm: {queued} of {len(nodes)} jobs queued or running")

    per_stage, runs = status_tables(list(rows.values()), out_dir=spec.out_dir)
    text = _render(per_stage) + _render(runs)
    assert "Runs per stage" in text and "jobs queued / running" in text
    mix_jobs = compact_ids([first.submitted[i] for i in ("tiny/iso/mix", "tiny/control/mix", "tiny/prop/mix")
                            if rows[i].state in ("running", "pending")])
    assert mix_jobs in text
    assert "tiny/sft_data" in text and "NonZeroExitCode" in text and "_campaign/runs/tiny/sft_data/slurm-" in text


def test_status_of_a_local_campaign_has_no_job_columns(tmp_path):
    spec, nodes = _smoke(tmp_path)

    def stage(node):
        with RunRecorder(node.run_dir, None, "fake"):
            if node.id == "tiny/iso/mix":
                raise RuntimeError("boom")

    selected = {"assets", "corpus", "corpus_iso", "tiny/iso/mix", "tiny/iso/midtrain"}
    run_campaign(nodes, spec.out_dir, {n.stage: stage for n in nodes}, selected, progress=False, log=_quiet)
    rows = run_states(nodes, spec.out_dir)
    states = {r.node.id: r.state for r in rows}
    assert [states[i] for i in sorted(selected)] == ["done", "done", "done", "blocked", "failed"]
    blocked = len(_downstream(nodes, "tiny/iso/mix"))
    assert summary_line(rows) == (f"{len(nodes)} runs: 3 done, 0 running, {len(nodes) - 3 - 1 - blocked} pending, "
                                  f"1 failed, 0 interrupted, {blocked} blocked, 0 damaged")
    per_stage, runs = status_tables(rows)
    text = _render(per_stage) + _render(runs)
    assert "Slurm" not in text and "tiny/iso/mix" in text and "tiny/iso/midtrain" not in text  # blocked: --all
    assert "tiny/iso/midtrain" in _render(status_tables(rows, show_all=True)[1])


def test_compact_ids():
    assert compact_ids(["12", "13", "14", "20", "3"]) == "3,12-14,20"
    assert compact_ids([]) == ""


def _render(table) -> str:
    from rich.console import Console

    console = Console(width=400, record=True)
    console.print(table)
    return console.export_text()


# --- cancel -------------------------------------------------------------------------------------

def test_cancel_cancels_this_campaigns_live_jobs_and_nothing_else(tmp_path, slurm):
    spec, nodes = _smoke(tmp_path)
    first = submit_campaign(spec, nodes, SMOKE, [], {"assets", "corpus", "corpus_iso", "tiny/sft_data"}, log=_quiet)
    slurm.set_job("7", "RUNNING")  # someone else's job
    slurm.set_job(first.submitted["assets"], "COMPLETED")
    slurm.set_job(first.submitted["corpus"], "RUNNING")
    assert cancel_campaign(spec.out_dir) == [first.submitted[i] for i in ("corpus", "corpus_iso", "tiny/sft_data")]
    assert slurm.calls("scancel") == [[first.submitted[i] for i in ("corpus", "corpus_iso", "tiny/sft_data")]]
    assert slurm.state["jobs"]["7"]["state"] == "RUNNING"
    assert cancel_campaign(spec.out_dir) == [] and len(slurm.calls("scancel")) == 1  # nothing left to cancel


# --- the CLI ----------------------------------------------------------------------------------------

def test_cli_run_status_cancel(tmp_path, slurm):
    from py4.cli import app

    out = str(tmp_path / "out")
    n = len(_smoke(tmp_path)[1])
    runner = CliRunner()
    dry = runner.invoke(app, ["campaign", "run", str(SMOKE), "--out", out, "--backend", "slurm", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert f"would submit {n}," in dry.output and "sbatch --parsable" in dry.output and not slurm.calls("sbatch")
    sub = runner.invoke(app, ["campaign", "run", str(SMOKE), "--out", out, "--backend", "slurm", "--only", "corpus"])
    assert sub.exit_code == 1 and "blocked" in sub.output  # corpus needs assets, not selected
    sub = runner.invoke(app, ["campaign", "run", str(SMOKE), "--out", out, "--backend", "slurm", "--only", "assets"])
    assert sub.exit_code == 0 and "submitted 1," in sub.output
    slurm.set_job("100", "RUNNING")
    status = runner.invoke(app, ["campaign", "status", str(SMOKE), "--out", out])
    assert status.exit_code == 0, status.output
    assert "Runs per stage" in status.output and "assets" in status.output
    assert (f"{n} runs: 0 done, 1 running, {n - 1} pending, 0 failed, 0 interrupted, 0 blocked, 0 damaged; "
            "Slurm: 1 of 1 jobs") in status.output
    assert "CAMPAIGN_STATUS.md" in status.output
    cancel = runner.invoke(app, ["campaign", "cancel", str(SMOKE), "--out", out])
    assert cancel.exit_code == 0 and "cancelled 1 job(s): 100" in cancel.output
    bad = runner.invoke(app, ["campaign", "run", str(SMOKE), "--out", out, "--backend", "pbs"])
    assert bad.exit_code == 2 and "expected local or slurm" in bad.output


# --- the job itself -----------------------------------------------------------------------------

def test_the_job_runs_its_node_under_its_record_and_refuses_a_changed_spec(tmp_path, monkeypatch):
    from py4.campaign import slurm_job

    out = tmp_path / "out"
    _, nodes = _smoke(tmp_path)
    prints = fingerprints(nodes)
    ran = []

    def fake_subprocess(node):  # the command itself is run_subprocess's (tests/campaign/test_runner.py)
        ran.append(node.id)
        if node.id == "corpus":
            raise RuntimeError("corpus exited with 1")

    monkeypatch.setattr("py4.campaign.runner.run_subprocess", fake_subprocess)
    args = [str(SMOKE), "--set", f"out_dir={out}"]
    assert slurm_job.main([*args, "--node", "assets", "--fingerprint", "f" * 16]) == 2 and ran == []
    assert slurm_job.main([*args, "--node", "nope", "--fingerprint", "f" * 16]) == 2
    assert slurm_job.main([*args, "--node", "corpus", "--fingerprint", prints["corpus"]]) == 2  # assets not done
    assert slurm_job.main([*args, "--node", "assets", "--fingerprint", prints["assets"]]) == 0
    assert run_states(nodes, out)[0].state == "done" and ran == ["assets"]
    assert slurm_job.main([*args, "--node", "assets", "--fingerprint", prints["assets"]]) == 0 and ran == ["assets"]
    assert slurm_job.main([*args, "--node", "corpus", "--fingerprint", prints["corpus"]]) == 1
    states = {r.node.id: r.state for r in run_states(nodes, out)}
    assert states["corpus"] == "failed" and states["corpus_iso"] == "blocked"


def test_docs_show_the_gpu_layout_of_the_campaign_spec():
    from py4.campaign.slurm import gpu_layout_markdown

    spec = load_campaign(PYTHON4)
    table = gpu_layout_markdown(spec, build_dag(spec))
    # regenerate: python -c "from py4.campaign.spec import load_campaign as l; from py4.campaign.dag import
    # build_dag as b; from py4.campaign.slurm import gpu_layout_markdown as g; s = l('configs/campaign/python4.yaml');
    # print(g(s, b(s)))"
    assert table in (ROOT / "docs/campaign.md").read_text(), "docs/campaign.md: the GPU layout table is out of date"
    assert "| midtrain | 4 GPU × 3 | 8 GPU × 3 | 8 GPU × 3 |  |" in table
    assert "| grpo |  | 8 GPU × 2 |  |  |" in table


def test_status_without_slurm_commands_still_reads_the_records(tmp_path, slurm, monkeypatch):
    from py4.cli import app

    out = str(tmp_path / "out")
    n = len(_smoke(tmp_path)[1])
    runner = CliRunner()
    assert runner.invoke(app, ["campaign", "run", str(SMOKE), "--out", out, "--backend", "slurm",
                               "--only", "assets"]).exit_code == 0
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    status = runner.invoke(app, ["campaign", "status", str(SMOKE), "--out", out])
    assert status.exit_code == 0, status.output
    assert "warning: no Slurm job states (squeue not found on PATH" in status.output
    assert f"{n} runs: 0 done, 0 running, {n} pending" in status.output


# --- damaged records and lost jobs -------------------------------------------------------------

def test_a_partial_last_job_record_is_skipped_with_a_warning_and_a_bad_middle_line_is_named(tmp_path, slurm):
    from py4.cli import app
    from py4.errors import Py4Error

    out = str(tmp_path / "out")
    runner = CliRunner()
    assert runner.invoke(app, ["campaign", "run", str(SMOKE), "--out", out, "--backend", "slurm",
                               "--only", "assets"]).exit_code == 0
    records = Path(out, "_campaign/slurm/jobs.jsonl")
    with open(records, "a", encoding="utf-8") as fh:  # a crash in the middle of the next append
        fh.write('{"node": "corpus", "job_id": "1')
    warnings: list[str] = []
    assert [r.job_id for r in read_jobs(out, warn=warnings.append)] == ["100"]
    assert len(warnings) == 1 and f"{records}:2" in warnings[0]
    status = runner.invoke(app, ["campaign", "status", str(SMOKE), "--out", out])
    assert status.exit_code == 0, status.output
    assert "warning:" in status.output and "jobs.jsonl:2" in status.output
    cancel = runner.invoke(app, ["campaign", "cancel", str(SMOKE), "--out", out])
    assert cancel.exit_code == 0 and "cancelled 1 job(s): 100" in cancel.output, cancel.output
    again = runner.invoke(app, ["campaign", "run", str(SMOKE), "--out", out, "--backend", "slurm", "--only", "assets"])
    assert again.exit_code == 0 and "submitted 1," in again.output, again.output
    # the append dropped the partial line rather than gluing the new record onto it
    assert [r.job_id for r in read_jobs(out, warn=warnings.append)] == ["100", "101"] and len(warnings) == 1
    # a malformed line that is not the last is an error naming file and line: one line, exit 2
    lines = records.read_text().splitlines()
    records.write_text("\n".join([lines[0], "garbage", lines[1]]) + "\n")
    with pytest.raises(Py4Error, match=r"jobs.jsonl:2: not a job record"):
        read_jobs(out)
    for command in (["status"], ["cancel"], ["run", "--backend", "slurm"]):
        bad = runner.invoke(app, ["campaign", command[0], str(SMOKE), "--out", out, *command[1:]])
        assert bad.exit_code == 2 and "jobs.jsonl:2: not a job record" in bad.output, (command, bad.output)
        assert isinstance(bad.exception, SystemExit), bad.exception  # no traceback


def test_a_queued_job_that_can_never_start_is_cancelled_and_submitted_again(tmp_path, slurm):
    spec, nodes, first = _submitted_with_corpus_iso_failed(tmp_path, slurm)
    # a cluster that keeps jobs whose dependency failed (no kill-on-invalid-dep): mix waits forever,
    # and the jobs after it still wait (afterok) for that old mix job
    slurm.set_job(first.submitted["tiny/iso/mix"], "PENDING", "DependencyNeverSatisfied")
    dependants = _downstream(nodes, "corpus_iso")

    again = submit_campaign(spec, nodes, SMOKE, [], log=_quiet)
    assert set(again.submitted) == {"corpus_iso", *dependants}
    assert again.cancelled == {n: first.submitted[n] for n in dependants}
    assert sorted(sum(slurm.calls("scancel"), []), key=int) == sorted((first.submitted[n] for n in dependants), key=int)
    assert set(again.queued) == {n.id for n in nodes} - {"assets", "corpus", "corpus_iso", *dependants}
    assert _dependencies(slurm.sbatch_of(again.submitted["tiny/iso/mix"])) == [again.submitted["corpus_iso"]]
    assert _dependencies(slurm.sbatch_of(again.submitted["tiny/iso/midtrain"])) == [again.submitted["tiny/iso/mix"]]

    # stuck on a failed input that has since been run some other way (done now): only that job
    spec, nodes = _smoke(tmp_path / "b")
    first = submit_campaign(spec, nodes, SMOKE, [], log=_quiet)
    _done(nodes, spec.out_dir, {"assets", "corpus", "corpus_iso"})
    slurm.set_job(first.submitted["tiny/iso/mix"], "PENDING", "DependencyNeverSatisfied")
    calls = len(slurm.calls("scancel"))
    again = submit_campaign(spec, nodes, SMOKE, [], {"tiny/iso/mix"}, log=_quiet)
    assert again.cancelled == {"tiny/iso/mix": first.submitted["tiny/iso/mix"]}
    assert list(again.submitted) == ["tiny/iso/mix"]
    assert slurm.calls("scancel")[calls:] == [[first.submitted["tiny/iso/mix"]]]
    assert _dependencies(slurm.sbatch_of(again.submitted["tiny/iso/mix"])) == []
