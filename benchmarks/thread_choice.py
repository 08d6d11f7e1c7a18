"""Benchmark what a CPU stage's start costs to choose its torch threads: sampled there, or handed by the runner.

    .venv/bin/python benchmarks/thread_choice.py               # 40 starts of each, alternating
    .venv/bin/python benchmarks/thread_choice.py --starts 100 --json /tmp/thread_choice.json

- sampled: the stage samples the machine itself (`py4.threads.busy_cores`: a quarter second of
  /proc/stat), what a stage run on its own, and a campaign's first run, do;
- handed: the campaign runner's reading between runs (`py4.threads.MachineLoad.busy`) set as
  ``PY4_BUSY_CORES``, then the stage's `py4.threads.cpu_threads` reading it — what every other
  run of a campaign pays at its start.

Both are timed in this one process, alternating, with ``--gap`` seconds between starts (the
runner's reading needs an earlier mark at least ``MachineLoad.min_window_s`` old: in a campaign
that is the previous run). Prints the median and mean of each, their ratio, the thread counts
each chose and the 1-minute load average before and after.

``--campaign``: then the smoke demo's 88 runs through the campaign runner (`run_campaign`, its
records and progress bookkeeping), each run's stage only choosing its threads
(`use_cpu_threads`, then writing its manifest), once with the runner's readings withheld (every
start samples: the runner without `MachineLoad`) and once as the runner is; each into a fresh
temporary folder. Prints both totals and the seconds per start they differ by.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=40, help="starts timed of each kind (default 40)")
    parser.add_argument("--gap", type=float, default=1.0, help="seconds between starts, a run's stand-in (default 1)")
    parser.add_argument("--json", default=None, help="also write every number to this file")
    parser.add_argument("--campaign", action="store_true", help="also the demo's 88 starts through the runner")
    args = parser.parse_args()

    from py4.threads import BUSY_ENV, MachineLoad, cpu_threads

    environ = {k: v for k, v in os.environ.items() if k not in ("PY4_THREADS", "OMP_NUM_THREADS", BUSY_ENV)}
    load_before = os.getloadavg()
    load = MachineLoad()
    sampled: list[float] = []
    handed: list[float] = []
    chose: dict[str, list[int]] = {"sampled": [], "handed": []}
    for _ in range(args.starts):
        time.sleep(args.gap)
        t0 = time.perf_counter()
        chose["sampled"].append(cpu_threads(environ=environ))
        sampled.append(time.perf_counter() - t0)
        time.sleep(args.gap)
        t0 = time.perf_counter()
        busy = load.busy()  # the runner, as a run starts
        env = environ | ({BUSY_ENV: f"{busy:.2f}"} if busy is not None else {})
        chose["handed"].append(cpu_threads(environ=env))  # the stage
        handed.append(time.perf_counter() - t0)
    load_after = os.getloadavg()
    result = {
        "starts": args.starts,
        "load_avg_1min_before_after": [round(load_before[0], 2), round(load_after[0], 2)],
        "sampled_s": {"median": statistics.median(sampled), "mean": statistics.fmean(sampled)},
        "handed_s": {"median": statistics.median(handed), "mean": statistics.fmean(handed)},
        "threads_chosen": {k: {str(n): v.count(n) for n in sorted(set(v))} for k, v in chose.items()},
    }
    result["sampled_over_handed_median"] = result["sampled_s"]["median"] / result["handed_s"]["median"]
    print(f"{args.starts} starts each, load avg 1-min {result['load_avg_1min_before_after'][0]} before, "
          f"{result['load_avg_1min_before_after'][1]} after")
    print("| start | median ms | mean ms | threads chosen (count: starts) |\n|---|---|---|---|")
    for kind in ("sampled", "handed"):
        s = result[f"{kind}_s"]
        print(f"| {kind} | {s['median'] * 1e3:.3f} | {s['mean'] * 1e3:.3f} | {result['threads_chosen'][kind]} |")
    print(f"sampled / handed (median): {result['sampled_over_handed_median']:.0f}x")
    if args.campaign:
        result["campaign"] = campaign_starts()
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))


class _Withheld:
    """A runner's load with no reading ever: each run's stage samples the machine itself."""

    def busy(self) -> None:
        return None


def campaign_starts() -> dict:
    """The smoke demo's runs through `run_campaign`, each stage only choosing its threads:
    sampled at every start, then handed by the runner."""
    import tempfile

    from py4.campaign.dag import build_dag
    from py4.campaign.runner import run_campaign
    from py4.campaign.spec import load_campaign
    from py4.runs import RunRecorder
    from py4.threads import MachineLoad, use_cpu_threads

    root = Path(__file__).resolve().parents[1]
    chosen: list[int] = []

    def stage(node) -> None:
        chosen.append(use_cpu_threads())
        with RunRecorder(node.run_dir, None, f"bench.{node.stage}") as rec:
            rec.add_output("model", Path(node.run_dir))

    out: dict = {}
    for kind, load in (("sampled", _Withheld()), ("handed", MachineLoad())):
        with tempfile.TemporaryDirectory(prefix=f"thread-choice-{kind}-") as tmp:
            spec = load_campaign(root / "configs/campaign/smoke.yaml", [f"out_dir={tmp}"])
            nodes = build_dag(spec)
            chosen.clear()
            load_before = os.getloadavg()[0]
            t0 = time.perf_counter()
            summary = run_campaign(nodes, spec.out_dir, {n.stage: stage for n in nodes}, progress=False,
                                   log=lambda s: None, load=load)
            seconds = time.perf_counter() - t0
            out[kind] = {"runs": len(summary.ran), "seconds": seconds, "load_avg_1min": [round(load_before, 2),
                         round(os.getloadavg()[0], 2)], "threads_chosen": {str(n): chosen.count(n)
                                                                           for n in sorted(set(chosen))}}
            print(f"campaign, {kind}: {len(summary.ran)} runs in {seconds:.1f} s "
                  f"(load avg 1-min {out[kind]['load_avg_1min'][0]} -> {out[kind]['load_avg_1min'][1]}), "
                  f"threads chosen {out[kind]['threads_chosen']}")
    saved = (out["sampled"]["seconds"] - out["handed"]["seconds"]) / max(1, out["handed"]["runs"])
    out["saved_s_per_start"] = saved
    print(f"campaign: sampled / handed {out['sampled']['seconds'] / out['handed']['seconds']:.2f}x, "
          f"{saved * 1e3:.0f} ms less per start")
    return out


if __name__ == "__main__":
    main()
