"""Problem-bank benchmark: build time, and gate throughput with all workers vs one.

    .venv/bin/python benchmarks/problems.py [--sample 300]

Baseline measured in the same run: certifying the sample's gold solutions on ONE Boa
worker; the ratio is (one worker) / (all workers) for the same work. Also times a full
`build_bank` (generation, reference runs, compile for splits) and the whole gate suite on
the sample, so the whole-bank validation time can be extrapolated.
"""

from __future__ import annotations

import argparse
import os
import random
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=300)
    args = parser.parse_args()

    from py4.boa.certify import certify_many
    from py4.boa.executor import Executor
    from py4.problems.bank import load_bank, load_manifest
    from py4.problems.build import BuildConfig, build_bank
    from py4.problems.validate import validate_problems

    t = time.perf_counter()
    built = build_bank(BuildConfig())
    build_s = time.perf_counter() - t
    print(f"build_bank: {len(built.problems)} problems in {build_s:.1f} s")

    bank = load_bank()
    sample = random.Random(0).sample(bank, min(args.sample, len(bank)))
    cores = os.cpu_count() or 1
    timings = {}
    for workers in (1, cores):
        with Executor(workers=workers) as ex:
            t = time.perf_counter()
            certs = certify_many([(p, p.gold) for p in sample], executor=ex)
            timings[workers] = time.perf_counter() - t
        assert all(c.certified for c in certs), "a gold did not certify"
        print(f"certify {len(sample)} golds on {workers} worker(s): {timings[workers]:.2f} s "
              f"({1000 * timings[workers] / len(sample):.1f} ms each)")
    print(f"ratio one worker / {cores} workers: {timings[1] / timings[cores]:.2f}")

    held_out = load_manifest()["config"]["held_out"]
    t = time.perf_counter()
    report = validate_problems(sample, held_out=held_out, check_coverage=False)
    gates_s = time.perf_counter() - t
    per = gates_s / len(sample)
    print(f"all gates on {len(sample)} problems: {gates_s:.1f} s "
          f"({1000 * per:.0f} ms/problem, {len(report.failures)} failures); "
          f"extrapolated whole bank ({len(bank)}): {per * len(bank) / 60:.1f} min")


if __name__ == "__main__":
    main()
