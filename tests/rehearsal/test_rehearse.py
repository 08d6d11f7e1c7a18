"""`py4 campaign rehearse`: the campaign's own configs, end to end, on the CPU stand-ins.

Costs (2-core machine shared with other work, measured 2026-12-03): the default-tier test runs
9 nodes (corpus, subset, mix, pack, FSDP2 midtrain with its resume drill, FSDP2 SFT with its
resume drill, two EFT doses, a LoRA EFT with its resume drill) in 148 s (a GLM rehearsal ran
beside it); the slow test (`make rehearsal`, which installs the campaign extra) runs the whole
campaign DAG (209 nodes with the probe runs), several hours on that machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
CAMPAIGN = "configs/campaign/python4.yaml"


def _rehearse(out: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    env = {**os.environ, "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    proc = subprocess.run([sys.executable, "-m", "py4", "campaign", "rehearse", CAMPAIGN,
                           "--out", str(out), *args], cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    report_path = out / "rehearsal_report.json"
    assert report_path.exists(), proc.stderr[-4000:]
    return proc, json.loads(report_path.read_text())


def _tensors(folder: Path) -> dict:
    from safetensors.torch import load_file

    out = {}
    for shard in sorted(folder.glob("*.safetensors")):
        out.update(load_file(shard))
    return out


@pytest.mark.smoke
@pytest.mark.timeout(1200)
def test_gemma4_iso_chain_through_fsdp2_training_and_lora_eft(tmp_path):
    """Gemma-4 12B's iso arm from the corpus to a LoRA EFT, from the campaign's own stage configs:
    midtraining and SFT under accelerate + the campaign's FSDP2 config on 2 CPU processes, each
    killed at its first checkpoint and resumed; the EFT adapts the language model only."""
    out = tmp_path / "rehearsal"
    proc, report = _rehearse(out, "--model", "gemma4_12b", "--only",
                             "gemma4_12b/iso/eft_[4]")  # a glob: not its evaluation
    rows = {row["id"]: row for row in report["nodes"]}
    expected = {"corpus", "corpus_iso", "gemma4_12b/iso/mix", "gemma4_12b/sft_data", "gemma4_12b/iso/midtrain",
                "gemma4_12b/iso/sft", "gemma4_12b/iso/eft_dose_8",
                "gemma4_12b/iso/eft_dose_4", "gemma4_12b/iso/eft_4"}
    assert set(rows) == expected, sorted(rows)
    failed = {k: r.get("error") for k, r in rows.items() if r["status"] != "done"}
    assert not failed and proc.returncode == 0, (failed, proc.stderr[-3000:])

    # FSDP2 on two processes: both ranks ran the stage, and the resume drill really resumed.
    midtrain_cmd = rows["gemma4_12b/iso/midtrain"]["command"]
    assert "accelerate.commands.launch" in midtrain_cmd and str(out / "accelerate/fsdp2.yaml") in midtrain_cmd
    assert midtrain_cmd[midtrain_cmd.index("--num_processes") + 1] == "2"  # the rehearsal's optimisation.gpus=2
    for stage in ("midtrain", "sft"):
        row = rows[f"gemma4_12b/iso/{stage}"]
        assert row["resume_drill"].startswith("killed after checkpoint-"), row
        manifest = json.loads((out / f"campaign/gemma4_12b/iso/{stage}/run_manifest.json").read_text())
        assert manifest["status"] == "done"
        resumed_at = int(manifest["result"]["resumed_from"].rsplit("checkpoint-", 1)[1])
        # Resumed in the middle of the run, and finished at the planned step.
        assert resumed_at < manifest["result"]["global_step"] == manifest["max_steps"], manifest["result"]

    # Midtraining changed every weight of the language model it was given (the pinned base stand-in).
    base_snapshot = next((out / "hf/hub/models--google--gemma-4-12b/snapshots").iterdir())
    base = _tensors(base_snapshot)
    mid = _tensors(out / "campaign/gemma4_12b/iso/midtrain/model")
    trained = [n for n in base if ".language_model.layers." in n and n.endswith("proj.weight")]
    assert trained and all(n in mid for n in trained)
    assert all(not mid[n].float().equal(base[n].float()) for n in trained)

    # The Dolci stand-in went through the campaign's strict filter (read from the Hub id, offline).
    pack = json.loads((out / "campaign/gemma4_12b/sft_data/manifest.json").read_text())
    assert (pack["source"]["rows_total"], pack["source"]["rows_kept"]) == (56, 48)

    eft = json.loads((out / "campaign/gemma4_12b/iso/eft_4/run_manifest.json").read_text())
    # 6 text layers x 7 projections, less the v_proj of the one full-attention layer (k_eq_v).
    assert eft["lora"]["adapted_modules"] == 41
    assert rows["gemma4_12b/iso/eft_4"]["resume_drill"].startswith("killed after checkpoint-")


@pytest.mark.slow
@pytest.mark.timeout(6 * 3600)
def test_whole_campaign_rehearsal_is_green(tmp_path):
    """Every node of the campaign DAG (all three models) runs green on the stand-ins, GLM's
    stages with the campaign's own optimizer (torchao's AdamW8bit: `make rehearsal` installs it)."""
    import importlib.util

    assert importlib.util.find_spec("torchao"), \
        "GLM's adamw_torch_8bit needs the campaign extra: run `make rehearsal` (installs .[campaign])"
    out = tmp_path / "rehearsal"
    proc, report = _rehearse(out)
    not_done = {r["id"]: r.get("error") or r.get("needs") for r in report["nodes"] if r["status"] != "done"}
    assert not not_done, json.dumps(not_done, indent=1)[:6000]
    assert proc.returncode == 0
    # The 8-bit path really ran under FSDP2: some optimizer state is quantized (a shard's state
    # is from 4,096 elements; the stand-ins' embeddings and experts are that large).
    for stage in ("midtrain", "sft"):
        manifest = json.loads((out / f"campaign/glm45_air/iso/{stage}/run_manifest.json").read_text())
        assert manifest["config"]["optimisation"]["optim"] == "adamw_torch_8bit"
        assert manifest["optimizer"]["class"] == "AdamW8bit", manifest["optimizer"]
        assert manifest["optimizer"]["quantized_state_tensors"] > 0, manifest["optimizer"]
