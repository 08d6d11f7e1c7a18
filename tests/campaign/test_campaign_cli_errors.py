"""`py4 campaign`'s user errors go through py4.errors.cli_errors like every other command's:
one line ``error: …`` on stderr and exit 2; a run that fails or is blocked exits 1 after its summary,
with no error line of its own. (Bad specs and overrides: test_plan_checks.py, test_campaign_cli_overrides.py;
Slurm: test_slurm.py.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from py4.cli import app

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "configs/campaign/smoke.yaml"


def _campaign(*args: object):
    return CliRunner().invoke(app, ["campaign", *[str(a) for a in args]])


def test_dry_run_without_the_slurm_backend_is_refused(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    result = _campaign("run", SMOKE, "--out", tmp_path, "--dry-run")
    assert result.exit_code == 2, result.output
    assert "error: --dry-run prints what the slurm backend would submit: add --backend slurm" in result.output
    assert not (tmp_path / "_campaign").exists()  # refused before anything ran


def test_an_unreadable_spec_is_one_error_line(tmp_path):
    result = _campaign("plan", tmp_path)  # a folder, not a YAML file
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ") and str(tmp_path) in result.output
    assert "Traceback" not in result.output


def test_a_blocked_local_run_exits_1_after_its_summary(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    result = _campaign("run", SMOKE, "--out", tmp_path, "--only", "corpus", "--no-progress")
    assert result.exit_code == 1, result.output
    assert re.search(r"ran 0, skipped 0 \(done\), failed 0, blocked [1-9]", result.output)  # corpus needs assets
    assert "error:" not in result.output


def test_sanity_bank_of_a_dose_without_gold_problems_is_one_error_line(tmp_path):
    dose = tmp_path / "dose"
    dose.mkdir()
    (dose / "manifest.json").write_text(json.dumps({"problem_ids": []}))
    result = _campaign("sanity-bank", "--dose", dose, "--out", tmp_path / "bank")
    assert result.exit_code == 2, result.output
    assert f"error: {dose}/manifest.json: no problem_ids (a dose with gold rows is needed)" in result.output


def test_sanity_bank_names_the_line_of_a_malformed_dose_manifest(tmp_path):
    dose = tmp_path / "dose"
    dose.mkdir()
    (dose / "manifest.json").write_text('{\n  "problem_ids": [1,\n}\n')
    result = _campaign("sanity-bank", "--dose", dose, "--out", tmp_path / "bank")
    assert result.exit_code == 2, result.output
    assert f"error: {dose}/manifest.json:3: invalid JSON" in result.output
    assert "Traceback" not in result.output


def test_sanity_bank_of_a_missing_dose_names_the_file(tmp_path):
    result = _campaign("sanity-bank", "--dose", tmp_path / "nowhere", "--out", tmp_path / "bank")
    assert result.exit_code == 2, result.output
    assert f"error: {tmp_path}/nowhere/manifest.json: no such file" in result.output


def test_status_of_a_campaign_with_a_malformed_run_record_names_the_file_and_line(monkeypatch, tmp_path):
    # A malformed record is a run not done, said with its file and line; it does not stop the
    # status (nor the runner, which sets it aside: test_runner_records.py).
    monkeypatch.chdir(ROOT)
    record = tmp_path / "_campaign" / "runs" / "assets" / "run_manifest.json"
    record.parent.mkdir(parents=True)
    record.write_text('{"status": "done",\n')
    result = _campaign("status", SMOKE, "--out", tmp_path)
    assert result.exit_code == 0, result.output
    assert f"warning: {record}:2: invalid JSON" in result.output and "assets counts as not done" in result.output
    assert "Traceback" not in result.output and " 0 done, 0 running, 88 pending" in result.output
    assert "| `assets` | assets | pending |" in (tmp_path / "CAMPAIGN_STATUS.md").read_text()


def test_status_reads_the_records_even_when_the_stage_configs_do_not_load(monkeypatch, tmp_path):
    # From another folder the smoke spec's stage configs (relative paths) do not load. `plan` and
    # `run` must refuse that; `status` (and `cancel`) must still show what runs, without reading
    # every training config while the DAG is built ("29 problem(s) in the campaign's runs").
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    status = _campaign("status", SMOKE, "--out", tmp_path / "out")
    assert status.exit_code == 0, status.output
    assert "assets" in status.output and "pending" in status.output
    # ... but not rewrite the ledgers with GPU counts and commands it could not read.
    assert "CAMPAIGN_STATUS.md and WEIGHTS_INDEX.md left as they are" in status.output
    assert not (tmp_path / "out" / "CAMPAIGN_STATUS.md").exists()
    plan = _campaign("plan", SMOKE, "--out", tmp_path / "out")
    assert plan.exit_code == 2 and "problem(s) in the campaign's runs" in plan.output, plan.output


def test_cancel_needs_no_stage_config(monkeypatch, tmp_path):
    # Cancelling reads the spec's out_dir and the job ids it recorded: a stage config that does not
    # load (here: none does, from another folder; the campaign scale reads its EFT schedules while
    # the DAG is built) must not stand between a user and stopping a campaign.
    monkeypatch.chdir(tmp_path)
    result = _campaign("cancel", ROOT / "configs/campaign/python4.yaml", "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "nothing to cancel" in result.output
