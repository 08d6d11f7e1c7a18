"""py4.campaign.compare (scripts/compare_campaigns.py, the Slurm tests): two campaign folders are
equal when their runs wrote the same content, whatever their folders' names, times and set orders."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

from py4.campaign.compare import compare_campaigns, compare_folders, outputs_only, written_files

ROOT = Path(__file__).resolve().parents[2]


def _campaign(out: Path, seconds: float, modules: list[str], weights: bytes = b"\x00\x01weights") -> Path:
    """A campaign folder with one done run, x, in the layout the runner leaves."""
    run, record = out / "x", out / "_campaign" / "runs" / "x"
    (run / "model").mkdir(parents=True)
    record.mkdir(parents=True)
    (record / "run_manifest.json").write_text(json.dumps(
        {"status": "done", "node": {"id": "x", "run_dir": str(run)}, "started_at": f"2026-12-03T{seconds}"}))
    (record / "stage.log").write_text(f"took {seconds} s\n")  # a log with times: never compared
    (run / "model" / "model.safetensors").write_bytes(weights)
    (run / "model" / "adapter_config.json").write_text(json.dumps({"target_modules": modules, "r": 8}))
    (run / "model" / "README.md").write_text("\n".join(["# card", *(f"- {m}" for m in modules)]) + "\n")
    data = f"rows of {run}/data\n"  # a file naming its own folder, hashed in the run's record
    (run / "data.txt").write_text(data)
    (run / "run_manifest.json").write_text(json.dumps({
        "status": "done", "seconds": seconds,
        "outputs": {"data": {"path": str(run / "data.txt"), "sha256": hashlib.sha256(data.encode()).hexdigest()}},
        "logging_dir": f"{run}/runs/Dec03_19-{int(seconds):02d}-00_host"}))
    (run / "transcripts.jsonl").write_text(json.dumps({"reward": 1.0, "wall_s": seconds}) + "\n")
    return out


def test_two_runs_of_one_campaign_in_other_folders_compare_equal(tmp_path):
    before = _campaign(tmp_path / "before", 12.5, ["q_proj", "k_proj"])
    after = _campaign(tmp_path / "elsewhere" / "after", 31.0, ["k_proj", "q_proj"])
    lines: list[str] = []
    assert compare_campaigns(str(before), str(after), log=lines.append) == 0, lines
    assert lines[-1] == "1 runs compared, 0 folder(s) with differences"
    found = compare_folders(before / "x", after / "x", before, after)
    assert found.ok and found.files == 6 and found.kinds == {"json": 3, "text": 2, "bytes": 1}
    assert found.path_only == ["run_manifest.json.outputs.data.sha256"]  # same content, each its own folder


def test_a_difference_in_what_a_run_wrote_is_named(tmp_path):
    before = _campaign(tmp_path / "before", 12.5, ["q_proj"])
    after = _campaign(tmp_path / "after", 12.5, ["q_proj"], weights=b"\x00\x02weights")
    (after / "x" / "transcripts.jsonl").write_text(json.dumps({"reward": 0.0, "wall_s": 1}) + "\n")
    (after / "x" / "extra.txt").write_text("new\n")
    found = compare_folders(before / "x", after / "x", before, after)
    assert found.differences == ["extra.txt: only in after", "model/model.safetensors: bytes differ",
                                 "transcripts.jsonl: [0].reward: '1.0' != '0.0'"]
    assert compare_campaigns(str(before), str(after), log=lambda s: None) == 1


def test_outputs_only_leaves_out_metadata_logs_and_checkpoints(tmp_path):
    run = _campaign(tmp_path / "c", 1.0, ["q_proj"]) / "x"
    (run / "checkpoint-4").mkdir()
    (run / "checkpoint-4" / "optimizer.pt").write_bytes(b"state")
    (run / "runs" / "Dec03_19-00-00_host").mkdir(parents=True)
    (run / "runs" / "Dec03_19-00-00_host" / "events.out").write_bytes(b"e")
    (run / "training_args.bin").write_bytes(b"pickle")
    assert written_files(run) == ["data.txt", "model/README.md", "model/adapter_config.json",
                                  "model/model.safetensors", "transcripts.jsonl"]
    assert outputs_only(Path("_campaign/runs/x/run_manifest.json")) and outputs_only(Path("CAMPAIGN_STATUS.md"))
    assert not outputs_only(Path("x/data.txt")) and not outputs_only(Path("x/CAMPAIGN_STATUS.md"))


def test_the_script_is_the_module(tmp_path):
    before = _campaign(tmp_path / "before", 1.0, ["q_proj"])
    after = _campaign(tmp_path / "after", 2.0, ["q_proj"], weights=b"other")
    script = [sys.executable, str(ROOT / "scripts/compare_campaigns.py")]
    same = subprocess.run([*script, "--folders", str(before / "x"), str(before / "x")], capture_output=True, text=True)
    assert same.returncode == 0 and same.stdout.splitlines()[-1] == "0 difference(s)", same.stdout + same.stderr
    differ = subprocess.run([*script, str(before), str(after)], capture_output=True, text=True)
    assert differ.returncode == 1 and "DIFF model/model.safetensors: bytes differ" in differ.stdout, differ.stdout
    assert subprocess.run([*script], capture_output=True, text=True).returncode == 2
