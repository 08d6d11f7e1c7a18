"""The torch threads of a CPU stage: the cores it may use, not every core of a busy machine."""

from __future__ import annotations

import pytest

from py4.threads import cpu_threads


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
