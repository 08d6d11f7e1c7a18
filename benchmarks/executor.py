"""Benchmark Boa's executor against spawning a fresh interpreter per run.

    .venv/bin/python benchmarks/executor.py [--runs 300] [--certs 400] [--rounds 5]
    .venv/bin/python benchmarks/executor.py --baseline /path/to/old/checkout [--pairs 3]

``--baseline`` compares this checkout's Boa with another checkout's (e.g. a ``git worktree``
of an earlier commit) in one run: the whole measurement runs ``--pairs`` times for each,
alternating baseline and current in separate processes (``PYTHONPATH`` picks the code),
so that the machine's load hits both alike; it prints each run and the ratios of the
medians (current / baseline).

Measured in one run, on this machine, in interleaved rounds (each round times a block of
every kind, so that a change in the machine's load hits all kinds alike):
1. median wall time of one sandboxed run of a trivial program (``pass``), as seen by the
   caller of ``Executor.run`` on a default executor (one worker per core): compile +
   dispatch + isolated child + answer; all of it is overhead, since the program does
   nothing. Measured back to back (a run may wait for a worker to finish its previous
   run's clean-up and the fork of its next child) and spaced by 20 ms (untimed), where
   that work happens between runs — the latency a caller sees. Back to back on a single
   worker (every run waits for that worker's whole cycle) is shown for reference;
2. the same for ``subprocess.run([python3, "-I", "-S", "-c", "pass"])`` (no sandbox at all);
3. what a fresh process per run costs at the least: a bare ``fork`` + ``_exit`` +
   ``waitpid`` of an interpreter with the worker's modules loaded (Boa pays it in CPU
   for every run, but forks before the run and tears down after its answer, so it is
   not a floor for the latency);
4. certifications per second on all cores for a typical problem (10 tests, gold solution),
   with ``certify_many`` over one executor with one worker per core.
Goals: overhead <= 5 ms median, >= 10x faster than spawning.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from py4.boa.certify import certify_many
from py4.boa.executor import Executor
from py4.problems.schema import Problem

FIXTURE = Path(__file__).parent / "fixtures" / "executor_problem.json"
SRC = Path(__file__).resolve().parents[1] / "src"
GOAL_OVERHEAD_MS, GOAL_SPEEDUP = 5.0, 10.0
SPACING_S = 0.02
FORK_FLOOR = """
import gc, os, statistics, sys, time
from py4.boa import worker  # the modules a worker has loaded when it forks a run's child
gc.collect(); gc.freeze()
samples = []
for _ in range(int(sys.argv[1])):
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    samples.append(time.perf_counter() - started)
# cost of one copy-on-write page fault: a child writes one byte in each of 2,000 pages
pages = bytearray(2000 * 4096)
for i in range(0, len(pages), 4096):
    pages[i] = 1
read_end, write_end = os.pipe()
if os.fork() == 0:
    started = time.perf_counter()
    for i in range(0, len(pages), 4096):
        pages[i] = 2
    os.write(write_end, str((time.perf_counter() - started) / 2000).encode())
    os._exit(0)
os.wait()
print(statistics.median(samples) * 1000, float(os.read(read_end, 100)) * 1000)
"""


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class BoaTimer:
    """Times trivial runs on one executor; wall times per run and CPU seconds in total."""

    def __init__(self, executor: Executor):
        self.executor, self.walls, self.cpu_s, self.faults, self.count = executor, [], 0.0, 0, 0
        for _ in range(20):  # warm-up: compile cache, every worker's first cycles
            executor.run("pass\n")

    def block(self, runs: int, gap_s: float) -> None:
        cpu_before = time.process_time() + self.executor.worker_cpu_seconds()
        faults_before = self.executor.worker_page_faults()
        for _ in range(runs):
            if gap_s:
                time.sleep(gap_s)
            started = time.perf_counter()
            result = self.executor.run("pass\n")
            self.walls.append(time.perf_counter() - started)
            assert result.status == "ok", result
        self.cpu_s += time.process_time() + self.executor.worker_cpu_seconds() - cpu_before
        self.faults += self.executor.worker_page_faults() - faults_before
        self.count += runs


class SpawnTimer:
    command = [sys.executable, "-I", "-S", "-c", "pass"]

    def __init__(self):
        self.walls, self.cpu_s, self.count = [], 0.0, 0
        for _ in range(5):
            subprocess.run(self.command, check=True)

    def block(self, runs: int) -> None:
        cpu_before = time.process_time() + _children_cpu()
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run(self.command, check=True)
            self.walls.append(time.perf_counter() - started)
        self.cpu_s += time.process_time() + _children_cpu() - cpu_before
        self.count += runs


def fork_floor_ms(count: int) -> tuple[float, float]:
    """Median fork + _exit + waitpid of a warm worker interpreter, and the cost of one
    copy-on-write page fault, in ms."""
    env = dict(os.environ, PYTHONPATH=str(SRC))
    out = subprocess.run([sys.executable, "-c", FORK_FLOOR, str(count)], check=True,
                         capture_output=True, text=True, env=env)
    fork_ms, fault_ms = out.stdout.split()
    return float(fork_ms), float(fault_ms)


def certification_rate(count: int) -> tuple[float, int, int]:
    rate, workers, tests, _ = certification_costs(count)
    return rate, workers, tests


def certification_costs(count: int) -> tuple[float, int, int, dict]:
    """Certifications per second, and per certification the load-insensitive costs: the
    workers' page faults and the CPU of workers and parent."""
    problem = Problem.model_validate(json.loads(FIXTURE.read_text()))
    workers = os.cpu_count() or 1
    with Executor(workers=workers) as executor:
        certify_many([(problem, problem.gold)] * (2 * workers), executor=executor)  # warm-up
        faults, cpu = executor.worker_page_faults(), executor.worker_cpu_seconds() + time.process_time()
        started = time.perf_counter()
        certs = certify_many([(problem, problem.gold)] * count, executor=executor)
        elapsed = time.perf_counter() - started
        costs = {"faults_per_cert": (executor.worker_page_faults() - faults) / count,
                 "cpu_per_cert_ms": (executor.worker_cpu_seconds() + time.process_time() - cpu) / count * 1000}
    assert all(c.certified for c in certs), certs[0]
    return count / elapsed, workers, len(problem.tests), costs


def measure(runs: int, rounds: int) -> dict:
    """All per-run timings, interleaved in ``rounds`` rounds."""
    per_round = max(runs // rounds, 1)
    spawn = SpawnTimer()
    with Executor() as pool, Executor(workers=1) as single:
        back, spaced, one = BoaTimer(pool), BoaTimer(pool), BoaTimer(single)
        for _ in range(rounds):
            spawn.block(max(per_round // 3, 10))
            back.block(per_round, 0.0)
            spaced.block(per_round, SPACING_S)
            one.block(per_round, 0.0)
        workers = pool.workers
    return {"spawn": spawn, "back": back, "spaced": spaced, "one": one, "workers": workers}


def report(timings: dict, floor: tuple[float, float], rate: float, cert_workers: int, tests: int) -> None:
    floor_ms, fault_ms = floor
    spawn, workers = timings["spawn"], timings["workers"]
    spawn_ms = median_ms(spawn.walls)
    print(f"spawning python3 -I -S -c pass, median wall:              {spawn_ms:7.2f} ms")
    rows = (("back to back, default pool   ", timings["back"]),
            (f"spaced {SPACING_S * 1000:g} ms (latency)       ", timings["spaced"]),
            ("back to back, one worker     ", timings["one"]))
    for label, timer in rows:
        ms = median_ms(timer.walls)
        p90 = sorted(timer.walls)[int(0.9 * len(timer.walls))] * 1000
        print(f"Boa trivial run, {label}: {ms:7.2f} ms (p90 {p90:5.2f} ms) "
              f"{spawn_ms / ms:5.1f}x faster than spawning")
    print(f"  (default pool: {workers} workers; a bare fork + _exit + waitpid of a warm worker "
          f"interpreter: {floor_ms:.2f} ms, {spawn_ms / floor_ms:.1f}x; Boa forks before a run and "
          f"tears down after its answer)")
    for label, timer in (("latency (spaced)", timings["spaced"]), ("back to back", timings["back"])):
        ms = median_ms(timer.walls)
        print(f"goals, {label:16s}: median overhead <= {GOAL_OVERHEAD_MS:g} ms: "
              f"{'met' if ms <= GOAL_OVERHEAD_MS else 'NOT met'} ({ms:.2f} ms); >= {GOAL_SPEEDUP:g}x "
              f"faster than spawning: {'met' if spawn_ms / ms >= GOAL_SPEEDUP else 'NOT met'} "
              f"({spawn_ms / ms:.2f}x)")
    boa = timings["back"]
    boa_cpu, spawn_cpu = boa.cpu_s / boa.count, spawn.cpu_s / spawn.count
    faults = boa.faults / boa.count
    cores = os.cpu_count() or 1
    print(f"CPU per run (all processes, back to back): Boa {boa_cpu * 1000:.2f} ms, "
          f"spawning {spawn_cpu * 1000:.2f} ms ({spawn_cpu / boa_cpu:.1f}x)")
    print(f"  Boa's per-run cycle: {faults:.0f} page faults (worker and run child; "
          f"{fault_ms * 1000:.1f} us per copy-on-write fault here, ~{faults * fault_ms:.1f} ms) "
          f"+ fork/exit ({floor_ms:.2f} ms); back to back on {cores} cores no run can take "
          f"less than CPU/cores = {boa_cpu * 1000 / cores:.2f} ms "
          f"({spawn_ms / (boa_cpu * 1000 / cores):.1f}x)")
    print(f"certifications/s on {cert_workers} worker(s), {tests} tests each: {rate:7.1f}")


def summary(timings: dict, rate: float, load: tuple[float, float], costs: dict) -> dict:
    """The figures an A/B compares, as one JSON-able dict."""
    def p90(timer) -> float:
        return sorted(timer.walls)[int(0.9 * len(timer.walls))] * 1000

    back, spawn = timings["back"], timings["spawn"]
    return {"latency_ms": median_ms(timings["spaced"].walls), "latency_p90_ms": p90(timings["spaced"]),
            "back_to_back_ms": median_ms(back.walls), "one_worker_ms": median_ms(timings["one"].walls),
            "spawn_ms": median_ms(spawn.walls), "cpu_per_run_ms": back.cpu_s / back.count * 1000,
            "faults_per_run": back.faults / back.count,
            "spawn_cpu_ms": spawn.cpu_s / spawn.count * 1000, "certifications_per_s": rate,
            **costs, "load_before": load[0], "load_after": load[1]}


AB_KEYS = (("latency_ms", "latency"), ("latency_p90_ms", "latency p90"),
           ("back_to_back_ms", "back to back"), ("cpu_per_run_ms", "CPU per run"),
           ("faults_per_run", "faults per run"), ("certifications_per_s", "certifications/s"),
           ("faults_per_cert", "faults per cert"), ("cpu_per_cert_ms", "CPU per cert"),
           ("spawn_ms", "spawn (reference)"))


def compare(baseline: Path, pairs: int, passed: list[str]) -> None:
    """Run this benchmark ``pairs`` times on each code, alternating, and compare."""
    results: dict[str, list[dict]] = {"baseline": [], "current": []}
    for pair in range(pairs):
        for name, src in (("baseline", baseline / "src"), ("current", SRC)):
            env = dict(os.environ, PYTHONPATH=str(src))
            out = subprocess.run([sys.executable, __file__, "--json", *passed], env=env, check=True,
                                 capture_output=True, text=True).stdout
            figures = json.loads(out.strip().splitlines()[-1])
            results[name].append(figures)
            print(f"pair {pair + 1} {name:8s} " + "  ".join(
                f"{label} {figures[key]:.2f}" for key, label in AB_KEYS)
                + f"  load {figures['load_before']:.2f}-{figures['load_after']:.2f}", flush=True)
    print(f"medians over {pairs} pairs, current / baseline ({baseline}):")
    for key, label in AB_KEYS:
        old = statistics.median(r[key] for r in results["baseline"])
        new = statistics.median(r[key] for r in results["current"])
        print(f"  {label:18s} {old:8.2f} -> {new:8.2f}  ({(new / old - 1) * 100:+.1f} %)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300, help="timed runs of each Boa kind")
    parser.add_argument("--certs", type=int, default=400, help="certifications to time")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved measurement rounds")
    parser.add_argument("--baseline", type=Path, help="another checkout to compare with (A/B)")
    parser.add_argument("--pairs", type=int, default=3, help="A/B: runs of each code, alternating")
    parser.add_argument("--json", action="store_true", help="print one JSON line of the figures")
    args = parser.parse_args()
    passed = ["--runs", str(args.runs), "--certs", str(args.certs), "--rounds", str(args.rounds)]
    if args.baseline:
        compare(args.baseline.resolve(), args.pairs, passed)
        return

    load_before = os.getloadavg()[0]
    timings = measure(args.runs, args.rounds)
    if args.json:
        rate, _, _, costs = certification_costs(args.certs)
        print(json.dumps(summary(timings, rate, (load_before, os.getloadavg()[0]), costs)))
        return
    floor = fork_floor_ms(200)
    rate, cert_workers, tests = certification_rate(args.certs)
    report(timings, floor, rate, cert_workers, tests)
    print(f"load average (1 min) before / after: {load_before:.2f} / {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} cores (other work on the machine inflates wall times)")


if __name__ == "__main__":
    main()
