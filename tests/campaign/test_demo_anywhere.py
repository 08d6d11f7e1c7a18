"""`py4 demo` from any folder: the packaged campaign is found, errors are one line."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from py4.cli import app

ROOT = Path(__file__).resolve().parents[2]


def _fake_campaign(monkeypatch, seen: dict):
    """Stand-ins for the runner and the report: the test checks what the demo hands them."""
    from py4.campaign import runner
    from py4.report import results

    def run_campaign(nodes, out_dir, executors=None, selected=None, progress=True, log=print, **options):
        seen.update(nodes=nodes, out_dir=out_dir, cwd=Path.cwd(), **options)
        if seen.get("interrupt"):
            raise KeyboardInterrupt(seen["interrupt"])
        return runner.RunSummary(ran=[n.id for n in nodes])

    monkeypatch.setattr(runner, "run_campaign", run_campaign)
    monkeypatch.setattr(results, "write_results", lambda spec, out, figures=True: [])


def test_demo_from_another_folder_finds_the_smoke_campaign(tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    seen: dict = {}
    _fake_campaign(monkeypatch, seen)
    result = CliRunner().invoke(app, ["demo", "--out", "x"])
    assert result.exit_code == 0, result.output
    assert seen["cwd"] == ROOT  # the stage configs are named relative to the repository root
    assert Path(seen["out_dir"]) == elsewhere / "x"  # --out is relative to where the user is
    assert any(n.id == "tiny/iso/midtrain" for n in seen["nodes"])
    assert Path.cwd() == elsewhere  # and the demo goes back there
    assert (elsewhere / "x" / "CAMPAIGN_STATUS.md").is_file()


def test_demo_without_the_configs_is_one_line_exit_2(tmp_path, monkeypatch):
    from py4 import demo

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(demo, "checkout_root", lambda: tmp_path / "wheel-install")
    result = CliRunner().invoke(app, ["demo", "--out", "x"])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert "configs/campaign/smoke.yaml not found" in result.output and str(tmp_path) in result.output


def test_demo_with_an_invalid_campaign_is_one_line_exit_2(tmp_path, monkeypatch):
    from py4.demo import run_demo

    (tmp_path / "configs" / "campaign").mkdir(parents=True)
    (tmp_path / "configs" / "campaign" / "smoke.yaml").write_text("name: smoke\nnot_a_field: 1\n")
    monkeypatch.chdir(tmp_path)
    assert run_demo("x") == 2


def test_the_demo_says_how_long_it_took_and_how_to_resume_when_stopped(tmp_path, monkeypatch):
    from py4.demo import duration

    seen: dict = {}
    _fake_campaign(monkeypatch, seen)
    done = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / "x")])
    assert done.exit_code == 0 and re.search(r"failed 0, blocked 0 in \d+ s\n", done.output), done.output
    assert seen["resume_hint"] == f"py4 demo --out {tmp_path / 'x'}"
    assert (duration(308), duration(42), duration(3725)) == ("5 min 8 s", "42 s", "62 min 5 s")
    seen["interrupt"] = "SIGTERM"
    stopped = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / "x")])
    assert stopped.exit_code == 143 and "smoke campaign stopped after" in stopped.output, stopped.output


def test_the_demos_resume_command_keeps_its_folder_and_threads(monkeypatch):
    from py4.demo import resume_command

    assert resume_command("campaign-out/smoke", None) == "make demo"
    assert resume_command("campaign-out/smoke", "1") == "py4 demo --threads 1"
    assert resume_command("/tmp/d", "torch") == "py4 demo --out /tmp/d --threads torch"
    assert resume_command("/tmp/d", None) == "py4 demo --out /tmp/d"


def test_the_demo_hands_its_threads_to_the_resume_hint(tmp_path, monkeypatch):
    seen: dict = {}
    _fake_campaign(monkeypatch, seen)
    monkeypatch.setenv("PY4_THREADS", "2")  # restored after the test; the demo sets its own
    done = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / "x"), "--threads", "1"])
    assert done.exit_code == 0, done.output
    assert seen["resume_hint"] == f"py4 demo --out {tmp_path / 'x'} --threads 1"
