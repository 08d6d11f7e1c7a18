"""`py4 demo`: the smoke campaign end to end, then the ledgers, result tables and figures."""

from __future__ import annotations

import time
from pathlib import Path

SMOKE_CAMPAIGN = "configs/campaign/smoke.yaml"


def run_demo(out: str = "campaign-out/smoke", campaign: str = SMOKE_CAMPAIGN) -> int:
    """Run `campaign` into `out` (finished runs are skipped); returns the exit status (0 = all done)."""
    from py4.campaign.dag import build_dag
    from py4.campaign.ledgers import write_ledgers
    from py4.campaign.runner import default_executors, run_campaign
    from py4.campaign.spec import load_campaign
    from py4.report.results import write_results

    t0 = time.monotonic()
    spec = load_campaign(campaign, [f"out_dir={out}"])
    nodes = build_dag(spec)
    summary = run_campaign(nodes, spec.out_dir, default_executors("inprocess"))
    ledgers = write_ledgers(nodes, spec.out_dir, spec.name)
    reports = write_results(spec, Path(spec.out_dir) / "report", figures=True)
    wall = time.monotonic() - t0
    print(f"\nsmoke campaign: ran {len(summary.ran)}, skipped {len(summary.skipped)} (already done), "
          f"failed {len(summary.failed)}, blocked {len(summary.blocked)} in {wall:.0f} s")
    for p in [*ledgers, *reports]:
        print(f"  {p}")
    if summary.failed:
        print("failed runs: " + ", ".join(summary.failed))
    return 0 if summary.ok else 1
