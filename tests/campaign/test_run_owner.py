"""A stage run by hand refuses to write into a run folder a campaign owns, unless told to (--force).

`py4 corpus generate … --out campaign-out/smoke/corpus` replaced the demo's corpus, exited 0, and
the next demo skipped every run on the strength of its records.
"""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from py4.campaign.dag import Node
from py4.campaign.runner import run_campaign
from py4.run_owner import FORCE_ENV, RUNNER_ENV, OwnedRunFolder, campaign_owner
from py4.runs import RunRecorder


@pytest.fixture(autouse=True)
def _cheap_manifests(monkeypatch):
    monkeypatch.setattr("py4.runs.library_versions", lambda *a, **k: {})
    monkeypatch.setattr("py4.runs.hardware_info", lambda: {})
    for name in (FORCE_ENV, RUNNER_ENV):  # unset here, and unset again after (py4 --force sets it in-process)
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)


def _campaign_with_a_done_run(out):
    node = Node(id="eval:x", stage="eval", run_dir=str(out / "eval" / "x"))

    def stage(n):
        with RunRecorder(n.run_dir, None, "eval"):
            (out / "eval" / "x" / "results.json").write_text("{}")

    assert run_campaign([node], out, {"eval": stage}, progress=False, log=lambda s: None).ok
    return node


def test_the_runner_writes_its_run_folders_and_a_hand_run_stage_is_refused(tmp_path):
    node = _campaign_with_a_done_run(tmp_path)
    assert campaign_owner(tmp_path / "eval" / "x") == (tmp_path.resolve(), "eval:x")
    assert campaign_owner(tmp_path / "eval" / "x" / "inner") == (tmp_path.resolve(), "eval:x")
    assert campaign_owner(tmp_path / "eval" / "y") is None and campaign_owner(tmp_path / "readme") is None
    with pytest.raises(OwnedRunFolder, match=r"run 'eval:x' of the campaign.*--rerun 'eval:x'.*py4 --force"):
        RunRecorder(node.run_dir, None, "eval")
    RunRecorder(tmp_path / "readme" / "eval", None, "eval")  # a folder of its own: fine


@pytest.mark.parametrize("run_id, run_dir", [("tiny/iso/sft", "tiny/iso/sft"),
                                              ("eval:tiny/iso/eft_8", "eval/tiny__iso__eft_8"),
                                              ("eval:gemma4_31b/prop/grpo@8", "eval/gemma4_31b__prop__grpo_at_8")])
def test_a_run_whose_id_has_slashes_is_owned_too(run_id, run_dir, tmp_path):
    """Most of a campaign's runs (midtraining, SFT, EFT, their evaluations) have ids with slashes,
    so their records sit in nested folders under ``_campaign/runs``."""
    node = Node(id=run_id, stage="sft", run_dir=str(tmp_path / run_dir))

    def stage(n):
        with RunRecorder(n.run_dir, None, "sft"):
            pass

    assert run_campaign([node], tmp_path, {"sft": stage}, progress=False, log=lambda s: None).ok
    assert campaign_owner(tmp_path / run_dir / "model") == (tmp_path.resolve(), run_id)
    with pytest.raises(OwnedRunFolder, match=f"run '{run_id}' of the campaign"):
        RunRecorder(tmp_path / run_dir, None, "sft")


def test_a_campaign_given_a_relative_out_dir_owns_its_folders_too(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "campaign-out" / "smoke"
    record = out / "_campaign" / "runs" / "corpus" / "run_manifest.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"status": "done", "node": {"id": "corpus", "run_dir": "campaign-out/smoke/corpus"}}))
    os.chdir("/")  # looked at from anywhere
    assert campaign_owner(out / "corpus") == (out.resolve(), "corpus")


def test_the_command_line_refuses_then_writes_with_force(tmp_path):
    from py4.cli import app

    _campaign_with_a_done_run(tmp_path)
    target = tmp_path / "eval" / "x"
    before = (target / "results.json").read_text()
    command = ["eval", "--split", "test_heldin", "--policy", "gold", "--limit", "1", "--out", str(target)]
    refused = CliRunner().invoke(app, command)
    assert refused.exit_code == 2 and "py4 --force" in refused.output, refused.output
    assert (target / "results.json").read_text() == before  # nothing written
    forced = CliRunner().invoke(app, ["--force", *command])
    assert forced.exit_code == 0, forced.output
    assert json.loads((target / "results.json").read_text())["splits"]["test_heldin"]["certified_rate"] == 1.0
