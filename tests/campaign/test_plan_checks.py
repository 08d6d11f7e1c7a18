"""`py4 campaign plan` checks every run's stage call against its stage's types: a bad
override key or value, from the campaign spec or from the command line, is refused at plan time
(and by `run`, before anything runs), naming the run, the field and what was expected."""

from __future__ import annotations

from pathlib import Path

import yaml
from typer.testing import CliRunner

from py4.cli import app

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "configs/campaign/smoke.yaml"


def _campaign(*args: str):
    return CliRunner().invoke(app, ["campaign", *[str(a) for a in args]])


def _one_line(output: str) -> str:
    return " ".join(output.split())


def test_a_bad_override_key_on_the_command_line_is_refused_at_plan_time(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    result = _campaign("plan", SMOKE, f"out_dir={tmp_path}", "stage_overrides.sft=[optimisation.learning_rat=0.1]")
    text = _one_line(result.output)
    assert result.exit_code == 2, result.output
    assert "run tiny/iso/sft (sft)" in text and "configs/train/smoke/sft.yaml" in text  # the run and its config
    assert "optimisation.learning_rat: unknown key; did you mean 'learning_rate'?" in text  # field, what is expected
    assert "run tiny/control/sft (sft)" in text and "run tiny/prop/sft (sft)" in text  # every run, at once


def test_a_bad_override_value_in_the_campaign_spec_is_refused_at_plan_time(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    spec = yaml.safe_load(SMOKE.read_text())
    spec["eft"]["overrides"] = [*spec["eft"]["overrides"], "optimisation.max_steps=many"]
    path = tmp_path / "campaign.yaml"
    path.write_text(yaml.safe_dump(spec))
    result = _campaign("plan", path, f"out_dir={tmp_path}/out")
    text = _one_line(result.output)
    assert result.exit_code == 2, result.output
    assert "run tiny/iso/eft_8 (eft)" in text and "configs/train/smoke/eft.yaml" in text
    assert "optimisation.max_steps: Input should be a valid integer" in text and "(given 'many')" in text
    assert "tiny/prop/warmstart" not in text  # its own overrides (warmstart_overrides) are fine


def test_a_flag_only_stage_refuses_config_overrides_and_an_unknown_stage_is_named(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    result = _campaign("plan", SMOKE, f"out_dir={tmp_path}", "stage_overrides.probes=[limit=3]")
    text = _one_line(result.output)
    assert result.exit_code == 2, result.output
    assert "run probes:tiny/base (probes)" in text and "takes no config file and no key=value overrides" in text
    result = _campaign("plan", SMOKE, f"out_dir={tmp_path}", "stage_overrides.sfft=[seed=1]")
    assert result.exit_code == 2, result.output
    assert "stage_overrides.sfft: unknown stage 'sfft'" in _one_line(result.output)


def test_run_refuses_a_bad_override_before_anything_runs(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    result = _campaign("run", SMOKE, "--no-progress", f"out_dir={tmp_path}", "stage_overrides.eft=[plain_los=true]")
    assert result.exit_code == 2, result.output
    text = _one_line(result.output)
    assert "run tiny/iso/eft_8 (eft)" in text and "plain_los: unknown key" in text
    assert not (tmp_path / "_campaign").exists()  # no run was started


def test_the_campaigns_plan_cleanly(monkeypatch):
    """The shipped campaigns' every run loads against its types (the python4 control mixes took
    both a token target from their file and the iso manifest from the DAG before the check)."""
    from py4.campaign.dag import build_dag, check_dag
    from py4.campaign.spec import load_campaign

    monkeypatch.chdir(ROOT)
    for name in ("smoke", "python4"):
        check_dag(build_dag(load_campaign(ROOT / f"configs/campaign/{name}.yaml")))


def test_a_bad_stage_override_at_full_scale_is_one_error_naming_the_file_and_key(monkeypatch):
    # The GPU count of each training run is read from its config with the spec's stage_overrides
    # while the DAG is built, so a bad one is found then: each run named once, with its file and key
    # (as at smoke scale).
    monkeypatch.chdir(ROOT)
    result = _campaign("plan", ROOT / "configs/campaign/python4.yaml",
                       "stage_overrides.sft=[optimisation.learning_rat=0.1]")
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: 9 problem(s) in the campaign's runs:")
    assert ("run gemma4_12b/iso/sft (sft): configs/train/gemma4_12b/sft.yaml: optimisation.learning_rat: unknown "
            "key; did you mean 'learning_rate'?") in result.output
