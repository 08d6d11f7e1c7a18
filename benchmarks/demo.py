"""Benchmark the smoke demo's CPU runs with torch's default threads against py4.threads, idle and under a CPU hog.

    .venv/bin/python benchmarks/demo.py                      # the subset below, 4 configurations
    .venv/bin/python benchmarks/demo.py --runs all           # the whole smoke campaign (88 runs; long)
    .venv/bin/python benchmarks/demo.py --hogs 2 --hog-limit 1800
    .venv/bin/python benchmarks/demo.py --assets /tmp/py4-smoke-assets-KEY   # reuse a built assets folder

Each configuration runs the same runs of configs/campaign/smoke.yaml into a fresh folder, in a
fresh process (torch's thread count is per process), with the in-process runner `make demo` uses:

- today: ``PY4_THREADS=torch``: torch's default intra-op threads (every core), what every stage
  but the graft used before py4.threads;
- new: py4.threads' choice (the cores free when each run starts, OMP_NUM_THREADS honoured).

Both run idle (whatever else runs on the machine: ``uptime`` is printed before each) and under a
CPU hog this benchmark starts itself: ``--hogs`` busy-looping processes (default: one per core),
each ending on its own after ``--hog-limit`` seconds and killed when its configuration ends. The
order alternates (idle today, idle new, hog today, hog new) so both settings see the same
conditions. Prints seconds per configuration and today / new ratios; the default subset is the
chain every result of the demo depends on (assets, corpus, the iso-token arm's mix, midtraining,
SFT and graft) with one evaluation, one probe scoring and one held-out loss, 12 of the 88 runs.
``--assets DIR`` copies a complete smoke-assets build (same config) into each folder first, so
the assets run reuses it (seconds) and the timed work is the other runs; without it every
configuration builds the assets (the -it model's SFT: about 1 minute idle, 20 under load).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CAMPAIGN = "configs/campaign/smoke.yaml"
SUBSET = ["assets", "corpus", "corpus_iso", "tiny/sft_data", "tiny/iso/mix", "tiny/iso/midtrain", "tiny/iso/sft",
          "tiny/iso/graft", "eval:tiny/iso/graft", "probes:tiny/base", "heldout_corpus", "heldout_loss:tiny/base"]

_HOG = "import sys, time\nend = time.monotonic() + float(sys.argv[1])\nwhile time.monotonic() < end:\n    pass\n"


def child(out: str, runs: str) -> None:
    """Run the runs into ``out`` in this process; print one JSON line of the outcome."""
    os.chdir(ROOT)
    from py4.campaign.dag import build_dag
    from py4.campaign.runner import default_executors, run_campaign
    from py4.campaign.spec import load_campaign

    spec = load_campaign(CAMPAIGN, [f"out_dir={out}"])
    nodes = build_dag(spec)
    selected = None if runs == "all" else set(runs.split(","))
    t0 = time.monotonic()
    summary = run_campaign(nodes, spec.out_dir, default_executors("inprocess"), selected, progress=False,
                           log=lambda s: None)
    print(json.dumps({"seconds": time.monotonic() - t0, "ran": len(summary.ran), "failed": summary.failed,
                      "blocked": summary.blocked}))


def configuration(threads: str | None, runs: str, hogs: int, hog_limit: float, work: Path,
                  assets: str | None) -> dict:
    """One timed configuration in a child process, with ``hogs`` hog processes alongside."""
    import shutil

    env = {k: v for k, v in os.environ.items() if k not in ("PY4_THREADS", "OMP_NUM_THREADS")}
    if threads is not None:
        env["PY4_THREADS"] = threads
    out = tempfile.mkdtemp(prefix="demo-bench-", dir=work)
    if assets:
        shutil.copytree(assets, Path(out) / "assets")
    load = os.getloadavg()
    hog_procs = [subprocess.Popen([sys.executable, "-c", _HOG, str(hog_limit)]) for _ in range(hogs)]
    try:
        if hogs:
            time.sleep(2)  # the hogs are running before the first run picks its threads
        proc = subprocess.run([sys.executable, __file__, "--child", out, "--runs", runs], env=env, cwd=ROOT,
                              capture_output=True, text=True)
    finally:
        for hog in hog_procs:
            hog.kill()
            hog.wait()
    if proc.returncode != 0:
        raise SystemExit(f"configuration failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return result | {"load_before": [round(x, 2) for x in load]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default=",".join(SUBSET), help="comma-separated run ids, or 'all'")
    parser.add_argument("--hogs", type=int, default=len(os.sched_getaffinity(0)), help="hog processes (0: no hog)")
    parser.add_argument("--hog-limit", type=float, default=1800.0, help="seconds after which a hog ends by itself")
    parser.add_argument("--dir", default=None, help="where the runs are written (default: a temporary folder)")
    parser.add_argument("--assets", default=None, help="a complete smoke-assets folder to reuse (see above)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.runs)
        return
    work = Path(args.dir or tempfile.mkdtemp(prefix="demo-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    runs = args.runs
    print(f"runs: {'all of ' + CAMPAIGN if runs == 'all' else runs}"
          + (f" (assets reused from {args.assets})" if args.assets else ""))
    rows = {}
    for label, threads, hogs in (("idle", "torch", 0), ("idle", None, 0), ("hog", "torch", args.hogs),
                                 ("hog", None, args.hogs)):
        setting = "today (torch default)" if threads else "new (py4.threads)"
        uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
        print(f"{label:4s} {setting:22s} uptime: {uptime}", flush=True)
        result = configuration(threads, runs, hogs, args.hog_limit, work, args.assets)
        rows[(label, threads is None)] = result
        print(f"     -> {result['seconds']:.1f} s, ran {result['ran']}, failed {result['failed']}, "
              f"blocked {result['blocked']}", flush=True)
    print("\n| load | hogs | today s | new s | today / new |\n|---|---|---|---|---|")
    for label, hogs in (("idle", 0), ("hog", args.hogs)):
        today, new = rows[(label, False)]["seconds"], rows[(label, True)]["seconds"]
        print(f"| {label} | {hogs} | {today:.1f} | {new:.1f} | {today / new:.2f}x |")
    print(f"(runs written under {work})")


if __name__ == "__main__":
    main()
