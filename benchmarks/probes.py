"""Probe scoring throughput: batched shared-prefix scorer vs each member in its own full pass.

    .venv/bin/python benchmarks/probes.py [--model DIR] [--pairs 120] [--batch-size 16] [--repeats 3]

All paths score the same pairs with the same model in the same run, interleaved over
``--repeats`` rounds (the best round of each counts, so a burst of load on a shared machine
hits one round, not one path). Prints pairs/s of:
  naive            each member in its own full forward pass, one at a time (the baseline)
  shared_prefix_1  the prefix once, both members from its cache, one pair at a time
  shared_prefix_B  the same, B pairs per model call (left-padded prefixes, right-padded spans)
and the ratios to naive (goal >= 1.8x, issue 19). Default model: the smoke tiny base.
"""

from __future__ import annotations

import argparse
import glob
import time


def main() -> None:
    from py4.probes.build import load_probes
    from py4.probes.evaluate import load_model
    from py4.probes.score import score_pairs, score_pairs_naive

    parser = argparse.ArgumentParser()
    found = sorted(glob.glob("/tmp/py4-smoke-assets-*/base/model.safetensors"))
    parser.add_argument("--model", default=found[-1].rsplit("/", 1)[0] if found else "campaign-out/smoke/assets/base")
    parser.add_argument("--pairs", type=int, default=120)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    probes = load_probes()
    pairs = probes[::max(1, len(probes) // args.pairs)][:args.pairs]
    model, tokenizer = load_model(args.model)
    score_pairs(model, tokenizer, pairs[:4])  # warm-up
    paths = {"naive": lambda: score_pairs_naive(model, tokenizer, pairs),
             "shared_prefix_1": lambda: score_pairs(model, tokenizer, pairs, batch_size=1),
             f"shared_prefix_{args.batch_size}": lambda: score_pairs(model, tokenizer, pairs,
                                                                     batch_size=args.batch_size)}
    best = {name: 0.0 for name in paths}
    for _ in range(args.repeats):
        for name, run in paths.items():
            start = time.perf_counter()
            run()
            best[name] = max(best[name], len(pairs) / (time.perf_counter() - start))
    print(f"model {args.model}, {len(pairs)} pairs, best of {args.repeats} rounds")
    for name, rate in best.items():
        print(f"{name}: {rate:.1f} pairs/s ({rate / best['naive']:.2f}x naive)")


if __name__ == "__main__":
    main()
