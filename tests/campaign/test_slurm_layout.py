"""The Slurm backend's job layout on paper: requeue options, and multi-node training jobs (the
sbatch line, the job script, the srun + accelerate launch line each machine runs).

Requeue on a real Slurm: tests/campaign/test_slurm_cluster.py.
"""

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from py4.campaign.dag import build_dag
from py4.campaign.slurm import (
    SlurmError,
    job_command,
    job_script,
    machines,
    multinode_launch,
    sbatch_argv,
    submit_campaign,
)
from py4.campaign.spec import load_campaign
from py4.config import ConfigError

ROOT = Path(__file__).resolve().parents[2]
PYTHON4 = ROOT / "configs/campaign/python4.yaml"
MIDTRAIN = "gemma4_31b/prop/midtrain"  # 8 GPUs (configs/train/gemma4_31b/midtrain_prop.yaml)


@pytest.fixture(autouse=True)
def _at_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # the specs name their configs relative to the repository root


def _python4(tmp_path, *overrides):
    spec = load_campaign(PYTHON4, [f"out_dir={tmp_path}", *overrides])
    return spec, {n.id: n for n in build_dag(spec)}


def _line(spec, node):
    return sbatch_argv(node, spec, Path("/x/job.sh"), [], Path("/repo"))


# --- requeue -----------------------------------------------------------------------------------------

def test_jobs_are_requeued_and_signalled_before_their_time_limit(tmp_path):
    spec, nodes = _python4(tmp_path, "cluster.time='1-00:00:00'")
    line = _line(spec, nodes[MIDTRAIN])
    assert "--requeue" in line and "--signal=B:USR1@300" in line
    # a requeued job appends its new start's output to the same log instead of truncating it
    assert "--open-mode=append" in line
    spec, nodes = _python4(tmp_path, "cluster.stop_before_end_s=900")
    assert "--signal=B:USR1@900" in _line(spec, nodes[MIDTRAIN])


def test_requeue_can_be_turned_off(tmp_path):
    spec, nodes = _python4(tmp_path, "cluster.requeue=false")
    line = _line(spec, nodes[MIDTRAIN])
    assert "--no-requeue" in line and not any(a.startswith(("--requeue", "--signal")) for a in line)


@pytest.mark.parametrize("arg", ["--requeue", "--no-requeue", "--signal=B:USR2@60", "--open-mode=truncate",
                                 "--ntasks-per-node=8"])
def test_sbatch_args_may_not_repeat_the_requeue_and_layout_options(tmp_path, arg):
    with pytest.raises(ConfigError, match="set by the Slurm backend"):
        load_campaign(PYTHON4, [f"out_dir={tmp_path}", f"cluster.sbatch_args=[{arg}]"])


# --- multi-node ----------------------------------------------------------------------------------------

def test_a_training_run_over_more_gpus_than_a_machine_spans_machines(tmp_path):
    spec, nodes = _python4(tmp_path, "cluster.gpus_per_node=4")
    node = nodes[MIDTRAIN]
    assert node.gpus == 8 and machines(node, spec) == 2
    line = _line(spec, node)
    assert {"--nodes=2", "--ntasks-per-node=1", "--gres=gpu:h200:4"} <= set(line)  # GPUs per machine
    assert "--ntasks=1" not in line
    spec_g, nodes_g = _python4(tmp_path, "cluster.gpus_per_node=4", "cluster.gpu_option=gpus-per-node")
    assert "--gpus-per-node=h200:4" in _line(spec_g, nodes_g[MIDTRAIN])
    # a run that fits one machine is laid out as before
    small = nodes["gemma4_12b/iso/midtrain"]
    assert machines(small, spec) == 1 and multinode_launch(small, spec) is None
    assert {"--nodes=1", "--ntasks=1", "--gres=gpu:h200:4"} <= set(_line(spec, small))
    # without gpus_per_node every job is one machine
    spec1, nodes1 = _python4(tmp_path)
    assert machines(nodes1[MIDTRAIN], spec1) == 1 and "--nodes=1" in _line(spec1, nodes1[MIDTRAIN])


def test_the_multinode_launch_line_gives_each_machine_its_rank_and_the_main_process(tmp_path):
    spec, nodes = _python4(tmp_path, "cluster.gpus_per_node=4", "cluster.main_process_port=29600")
    node = nodes[MIDTRAIN]
    srun = multinode_launch(node, spec)
    assert srun[:6] == ["srun", "--nodes=2", "--ntasks-per-node=1", "--kill-on-bad-exit=1", "bash", "-c"]
    # what one task's bash runs, with the variables Slurm and the job script set on machine 1
    shown = subprocess.run(["bash", "-c", srun[6].replace("exec ", "exec printf '%s\\n' ", 1)],
                           env={**os.environ, "SLURM_NODEID": "1", "PY4_MAIN_PROCESS_IP": "gpu-a17"},
                           capture_output=True, text=True, check=True).stdout.splitlines()
    single = node.launch_argv
    at = single.index("--num_processes") + 2
    assert shown == [*single[:at], "--num_machines", "2", "--machine_rank", "1", "--main_process_ip", "gpu-a17",
                     "--main_process_port", "29600", *single[at:]]
    assert single[at - 1] == "8"  # accelerate's --num_processes: the run's processes over all machines


def test_the_multinode_job_script_finds_the_main_process_on_the_first_machine(tmp_path):
    spec, nodes = _python4(tmp_path, "cluster.gpus_per_node=4")
    node = nodes[MIDTRAIN]
    script = job_script(node, spec, job_command(PYTHON4, [], node, "f" * 16), Path("/repo"))
    lines = script.splitlines()
    export = 'export PY4_MAIN_PROCESS_IP="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"'
    assert export in lines and lines.index(export) < len(lines) - 1
    assert f"#   {shlex.join(multinode_launch(node, spec))}" in lines  # the launch line, for a reader
    assert lines[-1].startswith(f"exec {sys.executable} -m py4.campaign.slurm_job ")
    # a job on one machine has neither
    small = nodes["gemma4_12b/iso/midtrain"]
    assert "scontrol" not in job_script(small, spec, job_command(PYTHON4, [], small, "f" * 16), Path("/repo"))


def test_runs_that_cannot_span_machines_are_refused_before_anything_is_submitted(tmp_path, monkeypatch):
    spec, nodes = _python4(tmp_path, "cluster.gpus_per_node=4")
    # GRPO holds its vLLM rollout server beside the trainer: one machine
    with pytest.raises(SlurmError, match="only a training run launched by accelerate can span machines"):
        machines(nodes["gemma4_31b/prop/grpo_to32"], spec)
    spec6, nodes6 = _python4(tmp_path, "cluster.gpus_per_node=6")
    with pytest.raises(SlurmError, match="not a whole number of machines of 6 GPUs"):
        machines(nodes6[MIDTRAIN], spec6)

    def no_sbatch(*args, **kwargs):
        raise AssertionError("sbatch called")

    monkeypatch.setattr("py4.campaign.slurm._sbatch", no_sbatch)
    with pytest.raises(SlurmError, match="grpo_to32"):
        submit_campaign(spec, list(nodes.values()), PYTHON4, [], log=lambda s: None)


@pytest.mark.skipif(shutil.which("scontrol") is None, reason="Slurm's scontrol is not installed "
                    "(scripts/install_slurm.sh installs it)")
def test_the_main_process_is_the_first_host_of_the_allocation_by_slurms_own_scontrol(tmp_path):
    spec, nodes = _python4(tmp_path, "cluster.gpus_per_node=4")
    node = nodes[MIDTRAIN]
    script = job_script(node, spec, job_command(PYTHON4, [], node, "f" * 16), Path("/repo"))
    export = next(line for line in script.splitlines() if line.startswith("export PY4_MAIN_PROCESS_IP="))
    # scontrol expands a node list without a controller; it only needs a slurm.conf to read
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=x\nSlurmctldHost=localhost\nNodeName=localhost CPUs=1\n"
                    "PartitionName=p Nodes=localhost\n")
    got = subprocess.run(["bash", "-c", export + '; echo "$PY4_MAIN_PROCESS_IP"'], capture_output=True, text=True,
                         env={**os.environ, "SLURM_CONF": str(conf), "SLURM_JOB_NODELIST": "gpu-a[17-18],gpu-b3"},
                         check=True).stdout
    assert got == "gpu-a17\n"


def test_the_stop_signal_terminates_the_jobs_own_children_only():
    # In a process of its own: the test process's children (other tests' Boa workers) are not its to stop.
    script = """
import os, subprocess
from py4.campaign.slurm_job import _terminate_children
child = subprocess.Popen(["sleep", "60"])
# not a child of this process: a grandchild, reparented when its parent exits
outer = subprocess.run(["bash", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"], capture_output=True, text=True,
                       check=True)
other = int(outer.stdout)
try:
    _terminate_children()
    print(child.wait(10))
    os.kill(other, 0)  # still alive
finally:
    os.kill(other, 9)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "-15"
