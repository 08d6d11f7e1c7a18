"""Scripted calibration rows (py4.report.calibration): run on the campaign's own splits and n."""

import json
from pathlib import Path

import pytest
import report_fixtures as rf

from py4.report.calibration import (
    POLICIES,
    calibration_argv,
    calibration_rows,
    is_current,
    run_calibration,
)


def test_calibration_command_uses_the_campaigns_evaluation_settings(tmp_path):
    spec = rf.smoke_spec(tmp_path / "out")
    argv = calibration_argv(spec, "gold")
    assert argv[:2] == ["eval", "--out"] and argv[argv.index("--policy") + 1] == "gold"
    assert argv[argv.index("--split") + 1] == "test_heldin,test_heldout"
    assert all(o in argv for o in spec.evaluation.overrides)  # same problems x samples as the models


def test_a_stale_calibration_run_is_not_shown(tmp_path):
    spec = rf.smoke_spec(tmp_path / "out")
    rf.write_calibration(spec)
    assert {r["policy"] for r in calibration_rows(spec)} == set(POLICIES)
    evaluation = spec.evaluation.model_copy(update={"overrides": [*spec.evaluation.overrides, "sampling.samples=4"]})
    changed = spec.model_copy(update={"evaluation": evaluation})
    assert not is_current(changed, "gold") and calibration_rows(changed) == []


@pytest.mark.slow
def test_calibration_runs_the_scripted_policies_once(tmp_path):
    spec = rf.smoke_spec(tmp_path / "out")
    assert run_calibration(spec, log=lambda s: None) == list(POLICIES)
    rows = {(r["policy"], r["split"]): r for r in calibration_rows(spec)}
    for split in spec.evaluation.splits:
        assert rows[("gold", split)]["certified_rate"] == 1.0 and rows[("gold", split)]["episodes"] == 6
        assert rows[("python3", split)]["certified_rate"] == 0.0 and rows[("core-only", split)]["certified_rate"] == 0.0
    assert run_calibration(spec, log=lambda s: None) == []  # current: reused, not run again
    res = json.loads(Path(spec.out_dir, "calibration/gold/results.json").read_text())
    assert res["policy"]["name"] == "gold"
