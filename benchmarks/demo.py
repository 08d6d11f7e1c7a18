"""Benchmark the smoke demo with torch's default threads against py4.threads, idle and under a CPU hog.

    .venv/bin/python benchmarks/demo.py                          # the whole demo (88 runs), 4 configurations
    .venv/bin/python benchmarks/demo.py --subset chain           # 12 runs: the chain, training included
    .venv/bin/python benchmarks/demo.py --runs assets,corpus     # any run ids
    .venv/bin/python benchmarks/demo.py --limit 1200             # stop a configuration after 20 min
    .venv/bin/python benchmarks/demo.py --loads idle             # only the idle pair (repeat it on a quiet machine)
    .venv/bin/python benchmarks/demo.py --assets /tmp/py4-smoke-assets-KEY   # reuse a built assets folder

Each configuration runs the same runs of configs/campaign/smoke.yaml (every stage kind: the smoke
assets with their -it SFT, corpus, mixes, midtraining, SFT, grafts, EFT, GRPO, evaluations, probes,
held-out loss, report) into a fresh folder of its own (never ``campaign-out/smoke``), in a fresh
process (torch's thread count is per process), with the in-process runner ``make demo`` uses:

- today: ``PY4_THREADS=torch``: torch's default intra-op threads (every core), what every stage
  but the graft used before py4.threads;
- new: py4.threads' choice (the cores free when each run starts, OMP_NUM_THREADS honoured).

Both run idle (whatever else runs on the machine: the load average is sampled every 15 s during
each configuration and printed with it) and under a CPU hog this benchmark starts itself:
``--hogs`` busy-looping processes (default: one per core), each ending on its own after
``--hog-limit`` seconds and killed when its configuration ends. The order alternates (idle today,
idle new, hog today, hog new) so both settings see the same conditions.

Subsets (``--subset``): ``all`` (default, the whole demo), ``chain`` (the 12 runs every result
depends on: assets, corpus, the iso-token arm's mix, midtraining, SFT and graft, with one
evaluation, one probe scoring and one held-out loss). ``--limit S`` stops a configuration after S
seconds (its process group is killed; what finished is kept): the ratios are then taken over the
runs that finished in both settings, and the table says how many those are; a run finished in one
setting and stopped inside in the other gives a bound (the stopped one ran at least that long).
``--assets DIR``
copies a complete smoke-assets build (same config) into each folder first, so the assets run
reuses it (seconds) and its -it SFT is not timed.

Prints, per configuration, seconds and runs finished; then today / new ratios of the whole and per
stage kind (the runner's ``timings.total_s`` of each run's record, summed over the runs finished in
both settings of the same load). ``--json FILE`` also writes every number.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CAMPAIGN = "configs/campaign/smoke.yaml"
SUBSETS = {
    "all": "all",
    "chain": ",".join(["assets", "corpus", "corpus_iso", "tiny/sft_data", "tiny/iso/mix", "tiny/iso/midtrain",
                       "tiny/iso/sft", "tiny/iso/graft", "eval:tiny/iso/graft", "probes:tiny/base",
                       "heldout_corpus", "heldout_loss:tiny/base"]),
}
CONFIGURATIONS = (("idle", "torch"), ("idle", None), ("hog", "torch"), ("hog", None))

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


def run_seconds(out: Path) -> dict[str, dict]:
    """Each finished run's stage and ``timings.total_s``, from its record under ``out``."""
    from py4.campaign.dag import build_dag
    from py4.campaign.records import read_record
    from py4.campaign.spec import load_campaign

    nodes = build_dag(load_campaign(str(ROOT / CAMPAIGN), [f"out_dir={out}"]))
    runs = {}
    for node in nodes:
        record = read_record(out, node) or {}
        seconds = (record.get("timings") or {}).get("total_s")
        if record.get("status") == "done" and seconds is not None:
            runs[node.id] = {"stage": node.stage, "seconds": float(seconds)}
        elif record.get("status") == "running" and record.get("started_at"):  # the one a limit stopped
            from datetime import datetime

            started = datetime.fromisoformat(record["started_at"]).timestamp()
            runs[node.id] = {"stage": node.stage, "seconds": None, "at_least": time.time() - started}
    return runs


class LoadSampler:
    """The 1-minute load average every ``every`` seconds while it runs."""

    def __init__(self, every: float = 15.0) -> None:
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, args=(every,), daemon=True)

    def _loop(self, every: float) -> None:
        while True:
            self.samples.append(os.getloadavg()[0])
            if self._stop.wait(every):
                return

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> dict:
        s = self.samples or [os.getloadavg()[0]]
        return {"min": round(min(s), 2), "mean": round(sum(s) / len(s), 2), "max": round(max(s), 2)}


def configuration(threads: str | None, runs: str, hogs: int, hog_limit: float, work: Path,
                  assets: str | None, limit: float | None, label: str) -> dict:
    """One timed configuration in a child process (its own session, so a limit kills all of it),
    with ``hogs`` hog processes alongside."""
    import shutil

    env = {k: v for k, v in os.environ.items() if k not in ("PY4_THREADS", "OMP_NUM_THREADS")}
    if threads is not None:
        env["PY4_THREADS"] = threads
    out = Path(tempfile.mkdtemp(prefix=f"{label}-{threads or 'new'}-", dir=work))
    if assets:
        shutil.copytree(assets, out / "assets")
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    hog_procs = [subprocess.Popen([sys.executable, "-c", _HOG, str(hog_limit)]) for _ in range(hogs)]
    timed_out = False
    t0 = time.monotonic()
    try:
        if hogs:
            time.sleep(2)  # the hogs are running before the first run picks its threads
        with LoadSampler() as load:
            t0 = time.monotonic()
            proc = subprocess.Popen([sys.executable, __file__, "--child", str(out), "--runs", runs], env=env,
                                    cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    start_new_session=True)
            try:
                stdout, stderr = proc.communicate(timeout=limit)
            except subprocess.TimeoutExpired:
                timed_out = True
                os.killpg(proc.pid, signal.SIGKILL)
                stdout, stderr = proc.communicate()
            wall = time.monotonic() - t0
    finally:
        for hog in hog_procs:
            hog.kill()
            hog.wait()
    result: dict = {"out": str(out), "uptime_before": uptime, "load": load.summary(), "wall": wall,
                    "timed_out": timed_out, "runs": run_seconds(out)}
    if not timed_out:
        if proc.returncode != 0:
            raise SystemExit(f"configuration failed (exit {proc.returncode}):\n{stderr[-3000:]}")
        result |= json.loads(stdout.strip().splitlines()[-1])
    return result


def ratio_rows(today: dict, new: dict) -> tuple[list[tuple[str, int, float, float]], int]:
    """(stage, runs, today s, new s) over the runs finished in both, by stage; and how many those are."""
    common = sorted(r for r in set(today["runs"]) & set(new["runs"])
                    if today["runs"][r]["seconds"] is not None and new["runs"][r]["seconds"] is not None)
    by_stage: dict[str, list[float]] = {}
    for run in common:
        row = by_stage.setdefault(today["runs"][run]["stage"], [0, 0.0, 0.0])
        row[0] += 1
        row[1] += today["runs"][run]["seconds"]
        row[2] += new["runs"][run]["seconds"]
    rows = sorted(((stage, int(n), t, w) for stage, (n, t, w) in by_stage.items()), key=lambda r: -r[2])
    return rows, len(common)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subset", choices=sorted(SUBSETS), default="all", help="which runs (default: all)")
    parser.add_argument("--runs", default=None, help="comma-separated run ids (instead of --subset)")
    parser.add_argument("--hogs", type=int, default=len(os.sched_getaffinity(0)), help="hog processes (0: no hog)")
    parser.add_argument("--hog-limit", type=float, default=7200.0, help="seconds after which a hog ends by itself")
    parser.add_argument("--limit", type=float, default=None, help="seconds after which a configuration is stopped")
    parser.add_argument("--dir", default=None, help="where the runs are written (default: a temporary folder)")
    parser.add_argument("--assets", default=None, help="a complete smoke-assets folder to reuse (see above)")
    parser.add_argument("--json", default=None, help="also write every number to this file")
    parser.add_argument("--loads", choices=["idle", "hog", "both"], default="both",
                        help="which pair of configurations (default: both; idle alone to repeat it on a quiet machine)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    runs = args.runs or SUBSETS[args.subset]
    if args.child:
        child(args.child, runs)
        return
    work = Path(args.dir or tempfile.mkdtemp(prefix="demo-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    if (ROOT / "campaign-out" / "smoke").resolve() in [work.resolve(), *work.resolve().parents]:
        raise SystemExit(f"--dir {work}: not inside campaign-out/smoke (the demo's own folder)")
    print(f"runs: {'all of ' + CAMPAIGN if runs == 'all' else runs}"
          + (f" (assets reused from {args.assets})" if args.assets else "")
          + (f"; each configuration stopped after {args.limit:.0f} s" if args.limit else ""), flush=True)
    rows = {}
    labels = ("idle", "hog") if args.loads == "both" else (args.loads,)
    for label, threads in [c for c in CONFIGURATIONS if c[0] in labels]:
        hogs = args.hogs if label == "hog" else 0
        setting = "today (torch default)" if threads else "new (py4.threads)"
        print(f"{label:4s} {setting:22s} {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}",
              flush=True)
        result = configuration(threads, runs, hogs, args.hog_limit, work, args.assets, args.limit, label)
        rows[(label, threads is None)] = result
        stopped = [f"{r} after {v['at_least']:.0f} s" for r, v in result["runs"].items() if v["seconds"] is None]
        done = f"ran {result['ran']}, failed {result['failed']}, blocked {result['blocked']}" \
            if not result["timed_out"] else (f"stopped at the limit, {len(result['runs']) - len(stopped)} runs done, "
                                             f"stopped inside {', '.join(stopped) or 'no run'}")
        print(f"     -> {result['wall']:.1f} s, {done}; load avg during min/mean/max "
              f"{result['load']['min']}/{result['load']['mean']}/{result['load']['max']}", flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps({f"{k[0]}-{'new' if k[1] else 'today'}": v
                                                   for k, v in rows.items()}, indent=1))
    print("\n| load | hogs | today s | new s | today / new | runs compared | load avg today / new (mean) |")
    print("|---|---|---|---|---|---|---|")
    for label in labels:
        today, new = rows[(label, False)], rows[(label, True)]
        stages, common = ratio_rows(today, new)
        t = sum(r[2] for r in stages)
        w = sum(r[3] for r in stages)
        whole = "" if today["timed_out"] or new["timed_out"] else f" (wall {today['wall']:.0f} / {new['wall']:.0f})"
        print(f"| {label} | {args.hogs if label == 'hog' else 0} | {t:.1f} | {w:.1f} | {t / w:.2f}x{whole} | "
              f"{common} | {today['load']['mean']} / {new['load']['mean']} |")
    for label in labels:
        print(f"\nper stage kind, {label} (runs finished in both; sum of the runs' timings.total_s):")
        print("| stage | runs | today s | new s | today / new |\n|---|---|---|---|---|")
        for stage, n, t, w in ratio_rows(rows[(label, False)], rows[(label, True)])[0]:
            ratio = f"{t / w:.2f}x" if w > 0 else "-"
            print(f"| {stage} | {n} | {t:.1f} | {w:.1f} | {ratio} |")
    for label in labels:
        today, new = rows[(label, False)]["runs"], rows[(label, True)]["runs"]
        for run in sorted(set(today) | set(new)):
            t, w = today.get(run, {}), new.get(run, {})
            if t.get("seconds") is None and w.get("seconds") is not None and t.get("at_least"):
                print(f"{label}: {run} took {w['seconds']:.1f} s with new; today stopped inside it after "
                      f"{t['at_least']:.0f} s: today / new >= {t['at_least'] / w['seconds']:.1f}x")
            elif w.get("seconds") is None and t.get("seconds") is not None and w.get("at_least"):
                print(f"{label}: {run} took {t['seconds']:.1f} s today; new stopped inside it after "
                      f"{w['at_least']:.0f} s: today / new <= {t['seconds'] / w['at_least']:.2f}x")
    print(f"(runs written under {work})")


if __name__ == "__main__":
    main()
