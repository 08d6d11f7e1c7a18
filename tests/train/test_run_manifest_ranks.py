"""Under a multi-process launch only rank 0 writes a training run's manifest.

Were every rank to rewrite the same ``run_manifest.json``, a rerun's ``attempt`` would be read by
rank 1 after rank 0 had written its own increment, and counted twice (a FSDP2 run on 2
processes, resumed once, would record attempt 3). Here the two ranks' recorders are created in
turn, as the launch does, with the RANK the launcher sets.
"""

from __future__ import annotations

import json

from py4.train.packed import common_recorder


def test_a_rerun_under_two_ranks_is_attempt_two_and_only_rank_0_writes(tmp_path, monkeypatch):
    (tmp_path / "run_manifest.json").write_text(json.dumps({"status": "interrupted", "attempt": 1}))

    monkeypatch.setenv("RANK", "0")
    rank0 = common_recorder(str(tmp_path), None, "midtrain").__enter__()
    monkeypatch.setenv("RANK", "1")
    rank1 = common_recorder(str(tmp_path), None, "midtrain").__enter__()
    rank0.set(written_by="rank 0")
    rank1.set(written_by="rank 1")
    rank0.__exit__(None, None, None)
    rank1.__exit__(None, None, None)  # the last to finish, as rank 1 may be

    manifest = json.loads((tmp_path / "run_manifest.json").read_text())
    assert manifest["attempt"] == 2
    assert manifest["written_by"] == "rank 0" and manifest["status"] == "done"
    assert rank1.manifest["written_by"] == "rank 1"  # rank 1 keeps its record in memory


def test_rank_1_alone_writes_no_manifest(tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    with common_recorder(str(tmp_path), None, "sft") as recorder:
        recorder.set(global_step=3)
    assert not (tmp_path / "run_manifest.json").exists()
