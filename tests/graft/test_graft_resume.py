"""Interrupted grafts continue from the last complete shard and end byte-identical."""

from __future__ import annotations

import json

import pytest
import torch

from graft_fixtures import graft_config, related_triple, write_triple
from py4.graft import GraftError, run
from py4.runs import read_manifest


class Interrupt(RuntimeError):
    pass


def _interrupt_at(k: int):
    seen = []

    def hook(name: str) -> None:
        seen.append(name)
        if len(seen) == k:
            raise Interrupt(f"stopped before {name}")

    return hook


def _files(folder):
    names = sorted(p.name for p in folder.iterdir() if p.name.startswith("model"))
    return {n: (folder / n).read_bytes() for n in names}


@pytest.fixture
def dirs(tmp_path):
    return write_triple(tmp_path / "in", related_triple(), shards={"it": 2, "base": 3})


@pytest.mark.parametrize("stop_at", [1, 4, 9])
def test_rerun_after_an_interruption_completes_identically(tmp_path, dirs, stop_at):
    reference = run(graft_config(dirs, tmp_path / "ref", max_shard_size=1200, lambda_=0.6), show_progress=False)
    assert len(reference.shards) >= 4
    out = tmp_path / "out"
    config = graft_config(dirs, out, max_shard_size=1200, lambda_=0.6)
    with pytest.raises(Interrupt):
        run(config, on_tensor=_interrupt_at(stop_at), show_progress=False)
    manifest = read_manifest(out)
    assert manifest["status"] == "failed" and "stopped before" in manifest["error"]
    journal = json.loads((out / ".graft_journal.json").read_text())
    done_before = len(journal["shards"])
    assert not (out / "model.safetensors.index.json").exists()
    assert len(list(out.glob("model-*.safetensors"))) == done_before  # no half-written shard under a final name
    result = run(config, show_progress=False)
    assert result.resumed_shards == done_before and result.written_shards == len(result.shards) - done_before
    assert _files(out) == _files(tmp_path / "ref")
    assert read_manifest(out)["status"] == "done" and read_manifest(out)["attempt"] == 2


def test_a_finished_graft_reruns_without_rewriting(tmp_path, dirs):
    config = graft_config(dirs, tmp_path / "out", max_shard_size=1200)
    first = run(config, show_progress=False)
    again = run(config, show_progress=False)
    assert again.resumed_shards == len(first.shards) and again.written_shards == 0


def test_a_truncated_shard_is_rewritten(tmp_path, dirs):
    config = graft_config(dirs, tmp_path / "out", max_shard_size=1200)
    first = run(config, show_progress=False)
    reference = _files(tmp_path / "out")
    victim = tmp_path / "out" / first.shards[1]
    victim.write_bytes(victim.read_bytes()[:-7])
    again = run(config, show_progress=False)
    assert again.written_shards == 1 and _files(tmp_path / "out") == reference


def test_other_settings_do_not_resume_a_different_graft(tmp_path, dirs):
    out = tmp_path / "out"
    with pytest.raises(Interrupt):
        run(graft_config(dirs, out, max_shard_size=1200), on_tensor=_interrupt_at(6), show_progress=False)
    with pytest.raises(GraftError, match="made from other inputs or settings"):
        run(graft_config(dirs, out, max_shard_size=1200, lambda_=0.5), show_progress=False)
    result = run(graft_config(dirs, out, max_shard_size=1200, lambda_=0.5, overwrite=True), show_progress=False)
    assert result.resumed_shards == 0
    reference = run(graft_config(dirs, tmp_path / "ref", max_shard_size=1200, lambda_=0.5), show_progress=False)
    assert _files(out) == _files(tmp_path / "ref") and reference.shards == result.shards


def test_changed_input_weights_invalidate_the_journal(tmp_path, dirs):
    out = tmp_path / "out"
    with pytest.raises(Interrupt):
        run(graft_config(dirs, out, max_shard_size=1200), on_tensor=_interrupt_at(6), show_progress=False)
    from safetensors.torch import load_file, save_file

    path = dirs["mid"] / "model.safetensors"
    tensors = load_file(path)
    tensors["model.norm.weight"] = torch.zeros_like(tensors["model.norm.weight"])
    save_file(tensors, path, metadata={"format": "pt"})
    with pytest.raises(GraftError, match="other inputs or settings"):
        run(graft_config(dirs, out, max_shard_size=1200), show_progress=False)


def test_a_folder_with_foreign_weights_is_refused(tmp_path, dirs):
    out = tmp_path / "out"
    out.mkdir()
    (out / "model.safetensors").write_bytes(b"not ours")
    with pytest.raises(GraftError, match="not written by py4 graft"):
        run(graft_config(dirs, out), show_progress=False)
    assert (out / "model.safetensors").read_bytes() == b"not ours"


def test_a_killed_process_leaves_a_resumable_folder(tmp_path, dirs):
    """SIGKILL mid-shard: no exception handler runs, a .partial file is left behind."""
    import subprocess
    import sys

    config = graft_config(dirs, tmp_path / "out", max_shard_size=1200, lambda_=0.6)
    code = (
        "import os, signal, sys\n"
        "from py4.graft import GraftConfig, run\n"
        "seen = []\n"
        "def hook(name):\n"
        "    seen.append(name)\n"
        "    if len(seen) == 7:\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "run(GraftConfig.model_validate_json(sys.argv[1]), on_tensor=hook, show_progress=False)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, config.model_dump_json()], capture_output=True, text=True)
    assert proc.returncode == -9, proc.stderr
    out = tmp_path / "out"
    assert read_manifest(out)["status"] == "running"  # killed: nobody could record the end
    assert list(out.glob(".model-*.partial"))
    result = run(config, show_progress=False)
    assert result.resumed_shards >= 1
    reference = run(graft_config(dirs, tmp_path / "ref", max_shard_size=1200, lambda_=0.6), show_progress=False)
    assert _files(out) == _files(tmp_path / "ref") and reference.shards == result.shards


def test_the_output_folder_cannot_be_an_input(tmp_path, dirs):
    before = (dirs["mid"] / "model.safetensors").read_bytes()
    with pytest.raises(GraftError, match="is the mid checkpoint's folder"):
        run(graft_config(dirs, dirs["mid"], overwrite=True), show_progress=False)
    assert (dirs["mid"] / "model.safetensors").read_bytes() == before
