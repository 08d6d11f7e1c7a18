"""The real smoke campaign end to end (minutes on 2 cores): `make demo` is the same check."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.timeout(3600)  # ~7 min on a quiet 2-core machine, several times that when shared
def test_smoke_campaign_end_to_end_then_everything_skipped(tmp_path, monkeypatch):
    from py4.demo import run_demo

    monkeypatch.chdir(ROOT)  # the campaign names configs relative to the repository root
    out = tmp_path / "smoke"
    assert run_demo(str(out)) == 0
    data = json.loads((out / "report/results.json").read_text())
    sanity = {(e["arm"], e["dose"]): e["certified_rate"] for e in data["entries"]
              if e["kind"] == "eft" and e["split"] == "train_sanity"}
    for arm in ("control", "iso", "prop"):
        # train_sanity is the 8-row dose's gold problems: clearly above zero after that dose,
        # above the parent (the 32-row dose gets the same 120 steps, so it memorises less of them)
        assert sanity[(arm, 8)] > 0.2 and sanity[(arm, 8)] > sanity[(arm, 0)], sanity
    assert not data["missing_evaluations"]
    for name in ("CAMPAIGN_STATUS.md", "WEIGHTS_INDEX.md", "report/dose_response.png", "report/grpo_ladder.png"):
        assert (out / name).is_file()
    # A second run skips every finished run.
    from py4.campaign.dag import build_dag
    from py4.campaign.runner import default_executors, run_campaign
    from py4.campaign.spec import load_campaign

    spec = load_campaign(ROOT / "configs/campaign/smoke.yaml", [f"out_dir={out}"])
    nodes = build_dag(spec)
    summary = run_campaign(nodes, spec.out_dir, default_executors(), progress=False, log=lambda s: None)
    assert len(summary.skipped) == len(nodes) and not summary.ran
