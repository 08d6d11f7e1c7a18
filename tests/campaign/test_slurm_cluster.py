"""The Slurm backend against a real single-node Slurm (munged, slurmctld, slurmd started here).

Fast tier, when Slurm is installed: cancel on a real cluster (no stage runs), and the login node's
check of the pinned models and datasets, which refuses before any job reaches the cluster. Slow tier:
scripts/install_slurm.sh, then (1) part of the smoke campaign through Slurm and through the local
runner, with one run made to fail: the same runs done / failed / blocked, the same outputs; a
resubmission skips what is done and, once the failure is fixed, finishes the rest; (2) the whole
smoke campaign through Slurm and through the local backend: the same results; (3) a training job
stopped by Slurm's stop signal and then requeued from outside resumes its run from the last
checkpoint each time and completes. Where Slurm
cannot be started the tests skip and say why (pytest -ra prints the reason in the summary), unless
``PY4_REQUIRE_SLURM`` is set (CI's .ci/run installs Slurm and sets it): then they fail.
Every daemon a test started is stopped at teardown (slurm_cluster.LocalSlurm.stop raises when
one outlives it).
"""

import json
import os
import shutil
import time
from pathlib import Path

import pytest
import slurm_cluster

from py4.campaign.compare import compare_folders, normalise, outputs_only, spellings, written_files
from py4.campaign.dag import build_dag
from py4.campaign.records import record_dir
from py4.campaign.runner import default_executors, run_campaign
from py4.campaign.slurm import cancel_campaign, latest_jobs, query_jobs, submit_campaign
from py4.campaign.spec import load_campaign
from py4.campaign.status import run_states, summary_line
from py4.runs import read_manifest

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "configs/campaign/smoke.yaml"


def _start(workdir: Path, monkeypatch, install: bool) -> slurm_cluster.LocalSlurm:
    try:
        if install:
            slurm_cluster.install()
        cluster = slurm_cluster.LocalSlurm(workdir).start()
    except slurm_cluster.SlurmUnavailable as exc:
        if os.environ.get("PY4_REQUIRE_SLURM"):  # CI (.ci/run) installs Slurm: a skip there would hide its loss
            pytest.fail(f"PY4_REQUIRE_SLURM is set but Slurm cannot be started here: {exc}")
        pytest.skip(f"Slurm cannot be started here, the real-Slurm test did not run: {exc}")
    monkeypatch.setenv("SLURM_CONF", str(cluster.conf))
    return cluster


@pytest.fixture
def slurm_installed(tmp_path_factory, monkeypatch):
    """A running single-node Slurm, if its packages are installed (the fast tier installs nothing)."""
    cluster = None
    try:
        cluster = _start(tmp_path_factory.mktemp("slurm"), monkeypatch, install=False)
        yield cluster
    finally:
        if cluster is not None:
            cluster.stop()


@pytest.fixture
def slurm(tmp_path_factory, monkeypatch):
    """scripts/install_slurm.sh, then a running single-node Slurm."""
    cluster = None
    try:
        cluster = _start(tmp_path_factory.mktemp("slurm"), monkeypatch, install=True)
        yield cluster
    finally:
        if cluster is not None:
            cluster.stop()


def test_cancel_on_a_real_slurm_cancels_the_campaigns_jobs_and_nothing_else(slurm_installed, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    cluster = slurm_installed
    # someone else's job holds both CPUs, so the campaign's jobs stay queued
    other = cluster.run(["sbatch", "--parsable", "--cpus-per-task=2", f"--output={tmp_path}/other.log",
                         "--wrap", "sleep 600"])
    assert other.returncode == 0, other.stderr
    other_id = other.stdout.strip()
    deadline = time.monotonic() + 120
    while cluster.queue()[other_id][0] != "RUNNING":
        assert time.monotonic() < deadline, cluster.queue()
        time.sleep(0.5)
    spec = load_campaign(SMOKE, [f"out_dir={tmp_path}/out"])
    nodes = build_dag(spec)
    summary = submit_campaign(spec, nodes, SMOKE, [f"out_dir={tmp_path}/out"], {"assets", "corpus", "corpus_iso"},
                              log=lambda s: None)
    ours = [summary.submitted[i] for i in ("assets", "corpus", "corpus_iso")]
    queue = cluster.queue()
    assert queue[ours[1]] == ("PENDING", "Dependency") and queue[ours[0]][0] == "PENDING"
    rows = {r.node.id: r for r in run_states(nodes, spec.out_dir, latest_jobs(spec.out_dir),
                                             query_jobs(ours))}
    assert rows["corpus"].state == "pending" and rows["corpus"].slurm_reason == "Dependency"

    assert cancel_campaign(spec.out_dir) == ours
    queue = cluster.queue()
    assert [queue[i][0] for i in ours] == ["CANCELLED"] * 3
    assert queue[other_id][0] == "RUNNING"  # not the campaign's: untouched
    assert cancel_campaign(spec.out_dir) == []
    states = {r.node.id: r.state for r in run_states(nodes, spec.out_dir, latest_jobs(spec.out_dir), query_jobs(ours))}
    assert states["assets"] == states["corpus"] == "pending"  # cancelled before they ran: to be submitted again


# The part of the smoke campaign both backends run: the iso arm to its graft, the SFT pack, and the
# control arm, whose mix is made to fail (a config with an unknown key): its midtraining and the
# graft on that are blocked; everything else goes on. (Not the SFTs: minutes each on a loaded
# 2-core machine, and no other path through the backend.)
SUBSET = ["assets", "corpus", "corpus_iso", "tiny/sft_data", "tiny/iso/mix", "tiny/control/mix",
          "tiny/iso/midtrain", "tiny/iso/graft", "tiny/control/midtrain", "tiny/control/graft"]
FAILS = "tiny/control/mix"
BLOCKED = {"tiny/control/midtrain", "tiny/control/graft"}
def _campaign(tmp_path: Path, name: str, smoke_assets: Path, broken_mix: Path | None):
    out = tmp_path / name
    # The smoke assets built for this code (tests/smoke_models.py); `py4 smoke assets` reuses them.
    shutil.copytree(smoke_assets, out / "assets")
    overrides = [f"out_dir={out}"] + ([f"models.tiny.files.mix.control={broken_mix}"] if broken_mix else [])
    spec = load_campaign(SMOKE, overrides)
    return spec, build_dag(spec), overrides


@pytest.mark.slow
@pytest.mark.timeout(3600)  # minutes on a quiet 2-core machine, several times that when shared
def test_smoke_campaign_through_slurm_matches_the_local_backend(slurm, smoke_assets, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    good_mix = ROOT / "configs/data/smoke/mix_control.yaml"
    broken_mix = tmp_path / "mix_control.yaml"
    broken_mix.write_text(good_mix.read_text() + "\nno_such_setting: 1\n")

    local_spec, local_nodes, _ = _campaign(tmp_path, "local", smoke_assets, broken_mix)
    local = run_campaign(local_nodes, local_spec.out_dir, default_executors("subprocess"), set(SUBSET),
                         progress=False, log=lambda s: None)
    assert local.failed == [FAILS] and set(local.blocked) == BLOCKED

    spec, nodes, overrides = _campaign(tmp_path, "slurm", smoke_assets, broken_mix)
    first = submit_campaign(spec, nodes, SMOKE, overrides, set(SUBSET), log=lambda s: None)
    assert set(first.submitted) == set(SUBSET)
    slurm.wait_idle(3000)
    states = {r.node.id: r for r in run_states(nodes, spec.out_dir, latest_jobs(spec.out_dir),
                                               query_jobs(list(first.submitted.values())))}
    assert {i: states[i].state for i in SUBSET} == {i: ("done" if i in local.ran else "failed" if i == FAILS
                                                        else "blocked") for i in SUBSET}
    queue = slurm.queue()
    assert queue[first.submitted[FAILS]][0] == "FAILED"
    for node_id in BLOCKED:  # Slurm cancelled them: they never started, so they have no record
        assert queue[first.submitted[node_id]] == ("CANCELLED", "DependencyNeverSatisfied")
        assert read_manifest(record_dir(spec.out_dir, next(n for n in nodes if n.id == node_id))) is None
    for node_id in local.ran:  # each job's log beside the node's record, with the node's command
        log = Path(states[node_id].log)
        assert log.parent == record_dir(spec.out_dir, next(n for n in nodes if n.id == node_id)).resolve()
        assert "[" + next(n for n in nodes if n.id == node_id).stage + "]" in log.read_text()

    # the same results as the local backend: the same data, bit-identical weights (py4.campaign.compare's
    # rules; the runs' metadata, trainer logs and checkpoints left out: outputs_only)
    local_by_id = {n.id: n for n in local_nodes}
    for node in nodes:
        if node.id in local.ran:
            assert written_files(node.run_dir), node.id
            found = compare_folders(local_by_id[node.id].run_dir, node.run_dir, local_spec.out_dir, spec.out_dir,
                                    skip=outputs_only)
            assert found.ok, (node.id, found.differences)

    # resubmitted as it is: only the failed run and its dependants are submitted again
    again = submit_campaign(spec, nodes, SMOKE, overrides, set(SUBSET), log=lambda s: None)
    assert set(again.skipped) == set(local.ran) and set(again.submitted) == {FAILS, *BLOCKED}
    slurm.wait_idle(3000)
    # the failure fixed (the same file, so the same runs): resubmitting finishes the campaign
    broken_mix.write_text(good_mix.read_text())
    third = submit_campaign(spec, nodes, SMOKE, overrides, set(SUBSET), log=lambda s: None)
    assert set(third.submitted) == {FAILS, *BLOCKED}
    slurm.wait_idle(3000)
    done = {r.node.id for r in run_states(nodes, spec.out_dir) if r.state == "done"}
    assert done >= set(SUBSET)
    assert not submit_campaign(spec, nodes, SMOKE, overrides, set(SUBSET), log=lambda s: None).submitted

    rows = run_states(nodes, spec.out_dir, latest_jobs(spec.out_dir),
                      query_jobs([j.job_id for j in latest_jobs(spec.out_dir).values()]))
    assert summary_line(rows).startswith(f"{len(nodes)} runs: {len(SUBSET)} done, 0 running, ")
    assert summary_line(rows).endswith(f"Slurm: 0 of {len(SUBSET)} jobs queued or running")
    jobs = [json.loads(line) for line in (Path(spec.out_dir) / "_campaign/slurm/jobs.jsonl").read_text().splitlines()]
    assert len(jobs) == len(SUBSET) + 2 * len({FAILS, *BLOCKED})


# The whole smoke campaign (configs/campaign/smoke.yaml, 88 runs), once through Slurm and once
# through the local backend (`py4 campaign run` / `py4 demo`: every run in this process), each in
# its own folder. Everything the runs wrote is compared file for file (data, tokenised packs,
# weights, evaluation results and transcripts, probe and held-out-loss results) by
# py4.campaign.compare's rules: the campaign's folder, which the texts name, spelled ``<out>`` in
# both; times left out of JSON (EXCLUDED_KEYS: an episode's ``wall_s``, ``boa_s``, ``duration_s``
# in transcripts.jsonl); the lists PEFT and TRL write from a Python set (an adapter's
# ``target_modules``, the tags of the README.md model cards) in sorted order: it follows string
# hashing, salted per process (PYTHONHASHSEED), and every Slurm job is a process of its own.
# Left out entirely (compare.outputs_only): the campaign's own records and job logs
# (``_campaign/``: timestamps, job ids, the local runner's stage logs against Slurm's
# slurm-<id>.log); run and data manifests, resolved configs, graft journals (METADATA); the
# trainers' pickled TrainingArguments (training_args.bin); trainer logs (``runs/``: TensorBoard
# events); checkpoints (``checkpoint-*``: resumable trainer state; the weights a run hands on are
# compared).


def _results(spec) -> dict:
    """report/results.json of a campaign folder (no calibration runs, no figures), normalised as
    py4.campaign.compare compares JSON: the folder spelled ``<out>``, the training logs' TensorBoard
    folders (named by start time and host) ``runs/<time>``, times left out."""
    from py4.report.results import write_results

    report = Path(spec.out_dir) / "report"
    write_results(spec, report, figures=False, calibration=False, log=lambda s: None)
    return normalise(json.loads((report / "results.json").read_text()), spellings(spec.out_dir))


@pytest.mark.slow
@pytest.mark.timeout(4 * 3600)  # two whole smoke campaigns at once: 1 h 24 min on a 2-core machine at load ~10
def test_whole_smoke_campaign_through_slurm_gives_the_local_backends_results(slurm, smoke_assets, tmp_path,
                                                                             monkeypatch):
    monkeypatch.chdir(ROOT)
    spec, nodes, overrides = _campaign(tmp_path, "slurm", smoke_assets, None)
    assert len(nodes) == 88
    first = submit_campaign(spec, nodes, SMOKE, overrides, log=lambda s: None)
    assert list(first.submitted) == [n.id for n in nodes] and not first.blocked  # nothing done yet

    # meanwhile the local backend, in its own folder, in this process (the jobs are slurmd's children)
    local_spec, local_nodes, _ = _campaign(tmp_path, "local", smoke_assets, None)
    local = run_campaign(local_nodes, local_spec.out_dir, default_executors("inprocess"), progress=False,
                         log=lambda s: None)
    assert local.ran == [n.id for n in local_nodes], (local.failed, local.blocked)

    slurm.wait_idle(4 * 3600)
    jobs = list(first.submitted.values())
    queue = slurm.queue()
    assert {i: queue[j][0] for i, j in first.submitted.items()} == dict.fromkeys(first.submitted, "COMPLETED")
    rows = run_states(nodes, spec.out_dir, latest_jobs(spec.out_dir), query_jobs(jobs))
    assert {r.node.id: r.state for r in rows} == dict.fromkeys(first.submitted, "done")
    assert summary_line(rows) == ("88 runs: 88 done, 0 running, 0 pending, 0 failed, 0 interrupted, 0 blocked, "
                                  "0 damaged; Slurm: 0 of 88 jobs queued or running")

    # the same results: every run wrote something, and the same files with the same bytes
    for node in nodes:
        assert written_files(node.run_dir), f"{node.id} wrote nothing in {node.run_dir}"
    found = compare_folders(local_spec.out_dir, spec.out_dir, skip=outputs_only)
    assert found.ok, found.differences[:20]
    written = written_files(spec.out_dir)
    assert found.files == len(written)
    assert any(f.endswith(".safetensors") for f in written) and any(f.endswith("transcripts.jsonl") for f in written)
    # and the report read from them (certified rates, probes, held-out loss, GRPO rewards) is the same
    results = _results(spec)
    assert results["entries"] and not results["missing_evaluations"]
    assert results == _results(local_spec)

    # resubmitted: everything is done, nothing is submitted
    again = submit_campaign(spec, nodes, SMOKE, overrides, log=lambda s: None)
    assert not again.submitted and again.skipped == [n.id for n in nodes]


# --- the helper itself (no Slurm needed) -----------------------------------------------------------

FAKE_DAEMON = """#!{python}
import os, sys, time
name = os.path.basename(sys.argv[0])
for arg in sys.argv[1:]:
    if arg.startswith("--socket="):
        open(arg.split("=", 1)[1], "w").close()
if name == os.environ.get("FAKE_DAEMON_EXITS"):
    sys.exit("fake " + name + ": cannot start")
while True:
    time.sleep(1)
"""


@pytest.mark.parametrize("failure", ["node never idle", "slurmd exits"])
def test_a_cluster_that_fails_to_start_stops_the_daemons_it_spawned(failure, tmp_path, monkeypatch):
    import sys

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "fake_daemon"
    script.write_text(FAKE_DAEMON.format(python=sys.executable))
    script.chmod(0o755)
    for name in slurm_cluster.DAEMONS:
        (bin_dir / name).symlink_to(script)
    monkeypatch.setattr(slurm_cluster, "_which", lambda name: str(bin_dir / name) if name in slurm_cluster.DAEMONS
                        else str(script))
    monkeypatch.setattr(slurm_cluster.os, "geteuid", lambda: 0)
    monkeypatch.setattr(slurm_cluster.LocalSlurm, "_node_idle", lambda self: False)
    if failure == "slurmd exits":
        monkeypatch.setenv("FAKE_DAEMON_EXITS", "slurmd")
    cluster = slurm_cluster.LocalSlurm(tmp_path / "slurm")
    try:
        with pytest.raises(slurm_cluster.SlurmUnavailable, match="did not come up idle" if failure == "node never idle"
                           else "slurmd exited"):
            cluster.start(timeout_s=1)
        assert set(cluster.procs) == set(slurm_cluster.DAEMONS)
        assert {name: p.poll() is not None for name, p in cluster.procs.items()} == dict.fromkeys(cluster.procs, True)
        assert all(log.closed for log in cluster.logs)
    finally:  # whatever the outcome, no fake daemon outlives the test
        for p in cluster.procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()


# --- requeue: a run stopped mid-way by Slurm resumes from its last checkpoint ---------------------

def _checkpoint_after(run_dir: str, step: int, job: str, cluster, timeout_s: float) -> int:
    """Wait until the run has a complete checkpoint past ``step`` (the Trainer writes
    trainer_state.json last) while its job still runs; its step."""
    from py4.train.common import checkpoint_problem

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done = [int(p.name.split("-")[1]) for p in Path(run_dir).glob("checkpoint-*")
                if checkpoint_problem(p) is None and int(p.name.split("-")[1]) > step]
        if done:
            return min(done)
        state = cluster.queue()[job][0]
        assert state in ("PENDING", "RUNNING", "REQUEUED", "CONFIGURING", "COMPLETING"), (state, cluster.logs_tail())
        time.sleep(0.2)
    raise TimeoutError(f"no checkpoint past step {step} of {run_dir} within {timeout_s:.0f} s")


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_a_stopped_or_requeued_job_resumes_its_run_from_the_last_checkpoint(slurm, smoke_assets, tmp_path,
                                                                           monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "out"
    shutil.copytree(smoke_assets, out / "assets")
    overrides = [f"out_dir={out}", "stage_overrides.midtrain=[run.save_steps=4]"]
    spec = load_campaign(SMOKE, overrides)
    nodes = build_dag(spec)
    node = next(n for n in nodes if n.id == "tiny/iso/midtrain")
    inputs = {"assets", "corpus", "corpus_iso", "tiny/iso/mix"}
    assert run_campaign(nodes, spec.out_dir, default_executors("inprocess"), inputs, progress=False,
                        log=lambda s: None).ran == sorted(inputs, key=[n.id for n in nodes].index)

    job = submit_campaign(spec, nodes, SMOKE, overrides, {node.id}, log=lambda s: None).submitted[node.id]
    argv = latest_jobs(spec.out_dir)[node.id].sbatch
    assert "--requeue" in argv and any(a.startswith("--signal=B:USR1@") for a in argv)
    # 1. the time limit nears: Slurm signals the job's batch process (as --signal=B:USR1@<s> does)
    first = _checkpoint_after(node.run_dir, 0, job, slurm, 1800)
    stop = slurm.run(["scancel", "--signal=USR1", "--batch", job])
    assert stop.returncode == 0, stop.stderr
    # 2. started again, the run resumes; then the job is requeued from outside, as a preemption
    # does (SIGTERM to every process of the job, then Slurm queues it again)
    second = _checkpoint_after(node.run_dir, first, job, slurm, 1800)
    requeue = slurm.run(["scontrol", "requeue", job])
    assert requeue.returncode == 0, requeue.stderr
    slurm.wait_idle(1800)

    assert slurm.queue()[job][0] == "COMPLETED"
    rows = {r.node.id: r for r in run_states(nodes, spec.out_dir)}
    assert rows[node.id].state == "done"
    log = Path(latest_jobs(spec.out_dir)[node.id].log).read_text()  # every start appended to one log
    assert log.count(f"[midtrain] {node.id}") == 3
    assert f"requeued job {job}" in log and log.count("(resuming after interrupted)") == 2
    assert f"job {job} started again (requeued 1×)" in log and f"job {job} started again (requeued 2×)" in log
    # the stage resumed from a checkpoint at least as late as the one seen before the second stop,
    # and trained only the steps after it
    result = read_manifest(node.run_dir)["result"]
    resumed = int(Path(result["resumed_from"]).name.split("-")[1])
    assert resumed >= second > first
    assert result["steps_this_run"] == result["global_step"] - resumed > 0
    assert read_manifest(record_dir(spec.out_dir, node))["resumed_from"] == "interrupted"


def _model_folder(folder: Path, weights: bool, tokenizer: bool = True) -> Path:
    """A model folder as the Hub holds one: config.json, the tokenizer files unless ``tokenizer`` is
    False, and the weights unless ``weights`` is False."""
    import torch
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": 4}))
    for name in ("tokenizer_config.json", "tokenizer.json") if tokenizer else ():
        (folder / name).write_text("{}")
    if weights:
        save_file({"lm_head.weight": torch.zeros(2, 4)}, str(folder / "model.safetensors"))
    return folder


def test_the_login_node_refuses_missing_pins_before_any_job_is_submitted(slurm_installed, tmp_path, monkeypatch):
    """`py4 campaign run --backend slurm` with Hub models and a probe set pinned: while the cache lacks
    the base model's weights, the -it model's tokenizer files (read by the SFT stage config) and the
    probe set, one line names those fields and nothing reaches the real Slurm; with them in the cache,
    the same command submits."""
    from typer.testing import CliRunner

    from py4.cli import app
    from py4.campaign.slurm import jobs_path
    from py4.probes.export import export_probes
    from py4.rehearsal.hub_cache import install_snapshot

    monkeypatch.chdir(ROOT)
    cache = tmp_path / "hf" / "hub"
    for name, value in (("HF_HOME", tmp_path / "hf"), ("HF_HUB_CACHE", cache), ("HF_HUB_OFFLINE", "1")):
        monkeypatch.setenv(name, str(value))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(cache))
    base, it, probes = ("py4-test/tiny-base", "1111aaaa"), ("py4-test/tiny-it", "2222bbbb"), \
        ("arcadia-impact/python4-probes", "582a1a2f")
    install_snapshot(cache, *base, _model_folder(tmp_path / "base", weights=False))  # `preflight` fetched its config
    install_snapshot(cache, *it, _model_folder(tmp_path / "it", weights=True, tokenizer=False))
    pins = [f"models.tiny.base={{hub_id: {base[0]}, revision: {base[1]}}}",
            f"models.tiny.it={{hub_id: {it[0]}, revision: {it[1]}}}",
            f"models.tiny.it_base={{hub_id: {base[0]}, revision: {base[1]}}}",
            f"datasets.probes={{hub_id: {probes[0]}, revision: {probes[1]}}}"]
    out = tmp_path / "out"

    def submit():
        return CliRunner().invoke(app, ["campaign", "run", str(SMOKE), "--out", str(out), "--backend", "slurm",
                                        "--only", "dataset:probes", *pins])

    refused = submit()
    assert refused.exit_code == 2, refused.output
    [line] = [x for x in refused.output.splitlines() if x.strip()]
    assert f"models.tiny.base ({base[0]}@{base[1]}): its config is in the Hugging Face cache but not its weights" \
        in line
    assert f"datasets.probes ({probes[0]}@{probes[1]}): " in line and "not in the Hugging Face cache" in line
    assert "models.tiny.it " not in line and "it_base" not in line  # present; the base pinned twice is named once
    # the SFT stage config reads the -it model's tokenizer (model.tokenizer_path, at the pin's revision)
    assert (f"tiny/control/sft: model.tokenizer_path of configs/train/smoke/sft.yaml ({it[0]}@{it[1]}): its "
            "tokenizer_config.json is not in the Hugging Face cache") in line
    assert slurm_installed.queue() == {} and not jobs_path(str(out)).exists()

    install_snapshot(cache, *base, _model_folder(tmp_path / "base", weights=True))
    install_snapshot(cache, *it, _model_folder(tmp_path / "it", weights=True))
    export_probes(tmp_path / "probes_export")
    install_snapshot(cache, *probes, tmp_path / "probes_export", repo_type="dataset")
    submitted = submit()
    assert submitted.exit_code == 0, submitted.output
    [job] = [json.loads(x) for x in jobs_path(str(out)).read_text().splitlines()]
    assert job["node"] == "dataset:probes" and job["job_id"] in slurm_installed.queue()
