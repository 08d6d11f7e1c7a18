"""The torch threads of a CPU stage: the cores it may use, not every core of a busy machine."""

from __future__ import annotations

import pytest

import py4.threads
from py4.threads import MachineLoad, cpu_threads


def test_the_cores_free_divided_by_the_processes_of_the_run():
    assert cpu_threads(environ={}, cores=8, busy=0.0) == 8
    assert cpu_threads(2, environ={}, cores=8, busy=0.0) == 4  # two accelerate ranks share them
    assert cpu_threads(environ={}, cores=8, busy=5.2) == 3  # other work keeps 5 cores busy
    assert cpu_threads(environ={}, cores=2, busy=6.0) == 1  # never fewer than one
    assert cpu_threads(4, environ={}, cores=2, busy=0.0) == 1


def test_an_explicit_count_then_omp_num_threads_win_over_the_machine():
    assert cpu_threads(environ={"OMP_NUM_THREADS": "3"}, cores=8, busy=7.0) == 3
    assert cpu_threads(environ={"PY4_THREADS": "2", "OMP_NUM_THREADS": "3"}, cores=8, busy=0.0) == 2
    assert cpu_threads(environ={"PY4_THREADS": "torch"}, cores=8, busy=7.0) is None  # torch's own default


def _no_sampling(*args, **kwargs):
    raise AssertionError("sampled the machine at the stage's start")


def test_a_runners_reading_of_the_load_is_used_without_sampling_the_machine(monkeypatch):
    monkeypatch.setattr(py4.threads, "busy_cores", _no_sampling)
    monkeypatch.setattr(py4.threads, "_cpu_jiffies", _no_sampling)
    assert cpu_threads(environ={"PY4_BUSY_CORES": "1.20"}, cores=2) == 1
    assert cpu_threads(environ={"PY4_BUSY_CORES": "0.30"}, cores=2) == 2
    assert cpu_threads(2, environ={"PY4_BUSY_CORES": "0.00"}, cores=8) == 4
    # an explicit count and OMP_NUM_THREADS still win over the reading
    assert cpu_threads(environ={"PY4_BUSY_CORES": "1.9", "OMP_NUM_THREADS": "2"}, cores=2) == 2
    assert cpu_threads(environ={"PY4_BUSY_CORES": "1.9", "PY4_THREADS": "torch"}, cores=2) is None


def test_without_a_runners_reading_the_stage_samples_the_machine(monkeypatch):
    monkeypatch.setattr(py4.threads, "busy_cores", lambda: 1.0)
    assert cpu_threads(environ={}, cores=2) == 1


class Counters:
    """A machine's counters a test sets: the clock, /proc/stat's (busy, total) jiffies, the runner's CPU s."""

    def __init__(self):
        self.t, self.busy, self.total, self.own = 0.0, 0, 0, 0.0

    def advance(self, seconds: float, machine_busy: float, own_busy: float, cpus: int = 2) -> None:
        """``seconds`` pass with ``machine_busy`` cores busy on the machine, ``own_busy`` of them the runner's."""
        self.t += seconds
        self.total += round(100 * cpus * seconds)
        self.busy += round(100 * machine_busy * seconds)
        self.own += own_busy * seconds

    def load(self, min_window_s: float = 1.0) -> MachineLoad:
        return MachineLoad(min_window_s, jiffies=lambda: (self.busy, self.total), own_cpu=lambda: self.own,
                           clock=lambda: self.t, cpus=2)


def test_the_machine_load_is_the_busy_cores_since_an_earlier_mark_less_the_runners_own():
    c = Counters()
    load = c.load()  # marks the runner's start
    c.advance(0.2, machine_busy=2.0, own_busy=1.0)
    assert load.busy() is None  # nothing a second old yet: the first run samples for itself
    c.advance(2.8, machine_busy=2.0, own_busy=1.0)  # a run: the runner holds one core, others the other
    assert load.busy() == pytest.approx(1.0)  # over the 2.8 s since the last mark
    c.advance(0.4, machine_busy=0.5, own_busy=0.5)  # a short run with the machine quiet
    # under a second since the last mark: the window reaches back to the one before (3.2 s long)
    assert load.busy() == pytest.approx((2.0 * 2.8 + 0.5 * 0.4 - (1.0 * 2.8 + 0.5 * 0.4)) / 3.2)
    c.advance(10.0, machine_busy=1.0, own_busy=1.0)  # a long run, nobody else busy
    assert load.busy() == pytest.approx(0.0)
    c.advance(5.0, machine_busy=2.0, own_busy=0.0)  # a hog on both cores between the runner's marks
    assert load.busy() == pytest.approx(2.0)


def test_the_machine_load_without_proc_stat_is_no_reading():
    load = MachineLoad(jiffies=lambda: None, own_cpu=lambda: 0.0, clock=lambda: 100.0)
    assert load.busy() is None


@pytest.mark.parametrize("value", ["-1", "many", "nan"])
def test_a_busy_reading_that_is_not_a_number_of_cores_is_refused_naming_the_variable(value):
    with pytest.raises(ValueError, match="PY4_BUSY_CORES"):
        cpu_threads(environ={"PY4_BUSY_CORES": value}, cores=2)


@pytest.mark.parametrize("env", [{"PY4_THREADS": "0"}, {"PY4_THREADS": "two"}, {"OMP_NUM_THREADS": "-1"}])
def test_a_count_that_is_not_a_positive_number_is_refused_naming_the_variable(env):
    (name,) = env
    with pytest.raises(ValueError, match=name):
        cpu_threads(environ=env, cores=2, busy=0.0)


def test_use_cpu_threads_sets_torchs_intra_op_threads(monkeypatch):
    import torch

    from py4.threads import use_cpu_threads

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        monkeypatch.setenv("PY4_THREADS", "1")
        assert use_cpu_threads() == 1 and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


@pytest.mark.smoke
def test_every_cpu_stage_sets_its_threads_before_its_model_runs(smoke_assets, monkeypatch, tmp_path):
    """The evaluation of a local model, the probes, the held-out loss and a training stage each set
    torch's threads (PY4_THREADS=1 here), whatever the process had before (the smoke assets' build
    and the EFT dose's replay generation call the same helper)."""
    import torch

    from types import SimpleNamespace

    import py4.threads
    from py4.config import ConfigError
    from py4.evaluate.local_model import LocalModelPolicy
    from py4.probes.evaluate import evaluate_probes
    from py4.stages import StageCall, _run_train
    from py4.train.heldout_loss import heldout_loss

    monkeypatch.setenv("PY4_THREADS", "1")
    seen: list[int] = []
    original = py4.threads.use_cpu_threads

    def recording(processes: int = 1) -> int:
        seen.append(original(processes))
        return seen[-1]

    monkeypatch.setattr(py4.threads, "use_cpu_threads", recording)
    docs = tmp_path / "docs" / "shards"
    docs.mkdir(parents=True)
    (docs / "shard-00000.jsonl").write_text('{"id": "d1", "text": "let x = 1\\nprint(x)", "rules": []}\n')
    training = SimpleNamespace(data=SimpleNamespace(path=str(tmp_path / "no-data")))  # stops after the threads
    stages = [lambda: LocalModelPolicy(str(smoke_assets / "it")).close(),
              lambda: evaluate_probes(str(smoke_assets / "base"), tmp_path / "probes", limit=4),
              lambda: heldout_loss(str(smoke_assets / "base"), str(tmp_path / "docs"), [], 64, tmp_path / "heldout"),
              lambda: pytest.raises(ConfigError, _run_train, training, StageCall(stage="midtrain", config="x.yaml"))]
    before = torch.get_num_threads()
    try:
        for stage in stages:
            torch.set_num_threads(2)
            stage()
            assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
    assert seen == [1, 1, 1, 1]
