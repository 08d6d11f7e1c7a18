"""`py4 campaign plan|run|status|cancel FILE key=value`: overrides work on every
campaign command, as docs/campaign.md says, and are validated strictly."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from py4.cli import app

ROOT = Path(__file__).resolve().parents[2]
SMOKE = str(ROOT / "configs/campaign/smoke.yaml")


def _campaign(*args: str):
    return CliRunner().invoke(app, ["campaign", *args])


def test_plan_takes_overrides(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    result = _campaign("plan", SMOKE, "--json", f"out_dir={tmp_path}/o", "eft.doses=[0,8]")
    assert result.exit_code == 0, result.output
    ids = {n["id"] for n in json.loads(result.output)}
    assert "tiny/iso/eft_8" in ids and "tiny/iso/eft_32" not in ids
    assert all(n["run_dir"].startswith(f"{tmp_path}/o") for n in json.loads(result.output))


def test_run_and_status_take_overrides(monkeypatch, tmp_path):
    from py4.campaign import runner

    monkeypatch.chdir(ROOT)
    seen: dict = {}

    def run_campaign(nodes, out_dir, executors=None, selected=None, progress=True, log=print, **options):
        seen.update(out_dir=out_dir, ids={n.id for n in nodes})
        return runner.RunSummary()

    monkeypatch.setattr(runner, "run_campaign", run_campaign)
    run = _campaign("run", SMOKE, "--only", "assets", "--no-progress", f"out_dir={tmp_path}/o", "eft.doses=[0,8]")
    assert run.exit_code == 0, run.output
    assert seen["out_dir"] == f"{tmp_path}/o" and "tiny/iso/eft_32" not in seen["ids"]
    status = _campaign("status", SMOKE, f"out_dir={tmp_path}/s")
    assert status.exit_code == 0, status.output
    assert (tmp_path / "s" / "CAMPAIGN_STATUS.md").is_file()
    cancel = _campaign("cancel", SMOKE, f"out_dir={tmp_path}/c")
    assert cancel.exit_code == 0, cancel.output


def test_overrides_are_validated_strictly(monkeypatch):
    monkeypatch.chdir(ROOT)
    for command in ("plan", "run", "status", "cancel"):
        unknown = _campaign(command, SMOKE, "eft.dosess=[0,8]")
        assert unknown.exit_code == 2, (command, unknown.output)
        assert "eft.dosess: unknown key" in unknown.output and "did you mean 'doses'" in unknown.output
        malformed = _campaign(command, SMOKE, "eft.doses")
        assert malformed.exit_code == 2 and "expected key=value" in malformed.output, (command, malformed.output)


def test_threads_reach_the_runs_and_the_resume_command_keeps_them(monkeypatch, tmp_path):
    """``--threads N`` sets the runs' torch threads (PY4_THREADS, which wins over the machine's
    load in py4.threads), and the command a stopped runner prints to resume carries it."""
    import os

    from py4.campaign import runner

    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("PY4_THREADS", "2")  # restored after the test; the command sets its own
    seen: dict = {}

    def run_campaign(nodes, out_dir, executors=None, selected=None, progress=True, log=print, **options):
        seen.update(threads=os.environ.get("PY4_THREADS"), resume_hint=options["resume_hint"])
        return runner.RunSummary()

    monkeypatch.setattr(runner, "run_campaign", run_campaign)
    run = _campaign("run", SMOKE, "--only", "assets", "--no-progress", "--threads", "1", f"out_dir={tmp_path}/o")
    assert run.exit_code == 0, run.output
    assert seen == {"threads": "1", "resume_hint": f"py4 campaign run {SMOKE} --only assets --threads 1 "
                                                   f"out_dir={tmp_path}/o"}
    bad = _campaign("run", SMOKE, "--only", "assets", "--threads", "two", f"out_dir={tmp_path}/o")
    assert bad.exit_code == 2 and "--threads" in bad.output and "PY4_THREADS='two'" in bad.output, bad.output
