"""Probe scoring throughput: shared-prefix fast path vs each member in its own full pass.

    .venv/bin/python benchmarks/probes.py [--model DIR] [--pairs 120]

Both paths score the same pairs with the same model in the same run; prints pairs/s and
the ratio (goal >= 1.8x, issue 19). Default model: the smoke tiny base (`py4 smoke assets`).
"""

from __future__ import annotations

import argparse
import glob
import time


def main() -> None:
    from py4.probes.build import load_probes
    from py4.probes.cli import load_model
    from py4.probes.score import score_pairs, score_pairs_naive

    parser = argparse.ArgumentParser()
    found = sorted(glob.glob("/tmp/py4-smoke-assets-*/base/model.safetensors"))
    parser.add_argument("--model", default=found[-1].rsplit("/", 1)[0] if found else "campaign-out/smoke/assets/base")
    parser.add_argument("--pairs", type=int, default=120)
    args = parser.parse_args()
    probes = load_probes()
    pairs = probes[::max(1, len(probes) // args.pairs)][:args.pairs]
    model, tokenizer = load_model(args.model)
    score_pairs(model, tokenizer, pairs[:4])  # warm-up
    rates = {}
    for name, fn in (("naive", score_pairs_naive), ("shared_prefix", score_pairs)):
        start = time.perf_counter()
        fn(model, tokenizer, pairs)
        rates[name] = len(pairs) / (time.perf_counter() - start)
    print(f"model {args.model}, {len(pairs)} pairs")
    for name, rate in rates.items():
        print(f"{name}: {rate:.1f} pairs/s")
    print(f"ratio shared_prefix / naive: {rates['shared_prefix'] / rates['naive']:.2f}x")


if __name__ == "__main__":
    main()
