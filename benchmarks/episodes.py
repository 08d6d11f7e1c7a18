"""Episode benchmark: environment overhead per episode beyond Boa's own time, and
episodes per second with the `gold` policy on all cores.

    .venv/bin/python benchmarks/episodes.py [--sample 300] [--repeats 3]

Baselines measured in the same run, on the same problems and executor:
- serial (one thread, one worker): `certify(problem, gold)` called directly, vs a whole
  episode through `Py4Environment` (reset, submit, get_reward) and through the driver
  (`run_episodes` with the scripted gold policy, one episode at a time). Overhead per
  episode = (episode time - direct certify time) / episodes. Goal: <= 10 ms.
- all cores: `certify_many` on all workers vs `run_episodes` of the whole sample in one
  batch; episodes per second and the ratio certify/episode throughput.
Each figure is the best of `--repeats` (the machine is shared; the best is the least
disturbed).
"""

from __future__ import annotations

import argparse
import os
import random
import time


def best_of(repeats: int, fn) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    from py4.boa.certify import certify, certify_many
    from py4.boa.executor import Executor
    from py4.episodes import EpisodeConfig, Py4Environment, run_episodes
    from py4.evaluate.scripted import ScriptedPolicy
    from py4.problems.bank import load_bank

    bank = load_bank()
    sample = random.Random(0).sample(bank, min(args.sample, len(bank)))
    n = len(sample)
    config = EpisodeConfig()
    policy = ScriptedPolicy("gold")
    by_id = {p.id: p for p in sample}

    with Executor(workers=1) as one:
        def direct():
            assert all(certify(p, p.gold, executor=one, per_test_timeout_s=config.run_timeout_s,
                               filename="solution.p4").certified for p in sample)

        def environment():
            env = Py4Environment(config, problems=by_id, executor=one)
            for p in sample:
                env.reset(problem_id=p.id)
                env.submit(p.gold)
                assert env.get_reward() == 1.0

        def driver():
            for p in sample:
                runs = run_episodes([p], policy, config, executor=one)
                assert runs[0].episode.outcome == "certified"

        run_episodes(sample[:5], policy, config, executor=one)  # warm up workers and the policy's cache
        t_direct, t_env, t_driver = (best_of(args.repeats, f) for f in (direct, environment, driver))
    print(f"serial, 1 worker, {n} episodes: direct certify {1000 * t_direct / n:.2f} ms each; "
          f"Py4Environment {1000 * t_env / n:.2f} ms; driver {1000 * t_driver / n:.2f} ms")
    print(f"overhead per episode beyond Boa: environment {1000 * (t_env - t_direct) / n:+.2f} ms, "
          f"driver {1000 * (t_driver - t_direct) / n:+.2f} ms (goal <= 10 ms)")

    cores = os.cpu_count() or 1
    with Executor(workers=cores) as pool:
        run_episodes(sample[:5], policy, config, executor=pool)
        t_many = best_of(args.repeats, lambda: certify_many([(p, p.gold) for p in sample], executor=pool))
        t_batch = best_of(args.repeats, lambda: run_episodes(sample, policy, config, executor=pool))
    print(f"all cores ({cores} workers): certify_many {n / t_many:.1f} certifications/s; "
          f"gold episodes {n / t_batch:.1f} episodes/s; ratio certify/episodes {t_batch / t_many:.3f}")


if __name__ == "__main__":
    main()
