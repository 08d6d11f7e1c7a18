"""`py4 demo`: the smoke campaign end to end, then the ledgers, result tables and figures.

A command-line module: it runs the campaign and then the report, so it sits above both.

The smoke campaign names its stage configs relative to the repository root
(``configs/train/smoke/…``). From the root, `py4 demo` runs it there; from any other
folder it runs in the checkout the package is installed from (``pip install -e .``, what
``make`` does), with ``--out`` taken relative to the folder it was started in. A wheel
install carries no ``configs/``: the demo then says so and exits 2.
"""

from __future__ import annotations

import time
from contextlib import chdir
from pathlib import Path

from py4.errors import Py4Error

SMOKE_CAMPAIGN = "configs/campaign/smoke.yaml"


def checkout_root() -> Path:
    """The folder above ``src/py4`` (the repository root of an editable install)."""
    return Path(__file__).resolve().parents[2]  # this module sits in src/py4


def project_root(campaign: str = SMOKE_CAMPAIGN) -> Path:
    """Where ``campaign`` (a path relative to a repository root) is found: the current folder,
    else the package's checkout. Raises Py4Error naming both places when neither has it."""
    here, checkout = Path.cwd(), checkout_root()
    for root in (here, checkout):
        if (root / campaign).is_file():
            return root
    raise Py4Error(f"{campaign} not found in {here} nor in {checkout} (the package's checkout): the smoke "
                   "campaign's configs come with the repository, not with a wheel; run `py4 demo` from a "
                   "clone after `pip install -e .` (or `make demo`)")


def run_demo(out: str = "campaign-out/smoke", campaign: str = SMOKE_CAMPAIGN, progress: bool = True,
             threads: str | None = None) -> int:
    """Run `campaign` into `out` (finished runs are skipped); returns the exit status.

    0: every run done; 1: a run failed or was blocked; 2: a user error (printed as one line:
    a campaign that cannot be found or is invalid, another runner on `out`); 130 / 143: stopped
    by Ctrl-C / SIGTERM (the runner has said what stopped and how to resume). ``threads``: the
    runs' torch threads (`py4.threads`; None: the cores free when each run starts).
    """
    import sys

    from py4.campaign.cli import set_threads

    t0 = time.monotonic()
    try:
        set_threads(threads)
        root = project_root(campaign)
        out_dir = Path(out) if root == Path.cwd() else Path(out).resolve()  # relative to where we started
        with chdir(root):
            return _run(str(out_dir), campaign, progress, out, t0, threads)
    except Py4Error as exc:  # a ConfigError, a DagError, CampaignLocked
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        print(f"smoke campaign stopped after {duration(time.monotonic() - t0)}", file=sys.stderr)
        return 143 if exc.args and exc.args[0] == "SIGTERM" else 130


def resume_command(out: str, threads: str | None) -> str:
    """What carries on this demo: its folder and its ``--threads``, as the user gave them."""
    if out == "campaign-out/smoke" and threads is None:
        return "make demo"
    return " ".join(["py4 demo", *([f"--out {out}"] if out != "campaign-out/smoke" else []),
                     *([f"--threads {threads}"] if threads is not None else [])])


def duration(seconds: float) -> str:
    """``5 min 8 s`` (``42 s`` under a minute)."""
    s = int(round(seconds))
    return f"{s // 60} min {s % 60} s" if s >= 60 else f"{s} s"


def _run(out: str, campaign: str, progress: bool, given_out: str, t0: float, threads: str | None) -> int:
    from py4.campaign.dag import build_dag, check_dag
    from py4.campaign.ledgers import write_ledgers
    from py4.campaign.runner import default_executors, run_campaign
    from py4.campaign.spec import load_campaign
    from py4.report.results import write_results

    spec = load_campaign(campaign, [f"out_dir={out}"])
    nodes = build_dag(spec)
    check_dag(nodes)
    again = resume_command(given_out, threads)
    summary = run_campaign(nodes, spec.out_dir, default_executors("inprocess"), progress=progress,
                           resume_hint=again)
    ledgers = write_ledgers(nodes, spec.out_dir, spec.name)
    reports = write_results(spec, Path(spec.out_dir) / "report", figures=True)
    print(f"\nsmoke campaign: ran {len(summary.ran)}, skipped {len(summary.skipped)} (already done), "
          f"failed {len(summary.failed)}, blocked {len(summary.blocked)} in {duration(time.monotonic() - t0)}")
    for p in [*ledgers, *reports]:
        print(f"  {p}")
    if summary.failed:
        print("failed runs: " + ", ".join(summary.failed))
    return 0 if summary.ok else 1
