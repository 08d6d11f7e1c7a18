"""Benchmark GRPO rollout generation: vLLM colocated in the trainer (CPU build) vs transformers generate.

    .venv/bin/python benchmarks/grpo_rollouts.py [--steps 3] [--problems 1] [--samples 4] [--rounds 1] [--assets DIR]

Runs the smoke GRPO stage (configs/train/smoke/grpo.yaml, the smoke -it model and a warm-start LoRA)
in .venv-vllm (``make vllm-env``) through tests/real_vllm/grpo_run.py, alternately with
``grpo.use_vllm=true grpo.vllm_mode=colocate`` and ``grpo.use_vllm=false``, the same settings and
seed otherwise, ``--rounds`` times each. Timed per step: the seconds in TRL's
``_generate_single_turn`` (vLLM's or transformers' generation, every tool-loop turn, the weight sync
before vLLM's first turn included), plus each run's wall time (process start, model and vLLM engine
load, training, save). Printed: per engine the median generation seconds of steps after the first
(the first pays vLLM's warm-up), the first step's, completions per second of generation, and the
ratio transformers / vLLM.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = ROOT / ".venv-vllm" / "bin" / "python"
ENGINES = {"vllm_colocate": ["grpo.use_vllm=true", "grpo.vllm_mode=colocate"],
           "transformers": ["grpo.use_vllm=false"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--problems", type=int, default=1, help="problems per step")
    parser.add_argument("--samples", type=int, default=4, help="completions per problem")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--assets", type=Path, default=Path(tempfile.gettempdir()) / "py4-bench-smoke-assets",
                        help="smoke assets folder (built there when missing; an existing one is reused)")
    args = parser.parse_args()
    from py4.train.assets import build_smoke_assets
    from py4.train.eft import LoraSpec, stand_in_warm_start

    work = Path(tempfile.mkdtemp(prefix="grpo-rollouts-"))
    assets = build_smoke_assets(args.assets)
    adapter = stand_in_warm_start(assets / "it", work / "warm_start", LoraSpec(r=8, alpha=16))
    per_step = args.problems * args.samples
    overrides = [f"optimisation.max_steps={args.steps}", f"run.save_steps={args.steps}",
                 f"problems.limit={args.problems * args.steps}", f"grpo.problems_per_step={args.problems}",
                 f"grpo.num_generations={args.samples}", f"optimisation.grad_accum={per_step}",
                 "problems.epochs=1"]
    results: dict[str, list[dict]] = {engine: [] for engine in ENGINES}
    for round_ in range(args.rounds):
        for engine, flags in ENGINES.items():
            out = work / f"{engine}-{round_}.json"
            t0 = time.monotonic()
            done = subprocess.run([str(PYTHON), str(ROOT / "tests/real_vllm/grpo_run.py"), str(out),
                                   str(assets / "it"), str(adapter), str(work / f"{engine}-{round_}"),
                                   *overrides, *flags], capture_output=True, text=True, cwd=ROOT,
                                  env={**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1"})
            if done.returncode:
                raise SystemExit(f"{engine}: exit {done.returncode}\n{done.stderr[-3000:]}")
            result = json.loads(out.read_text())
            result["wall_s"] = time.monotonic() - t0
            results[engine].append(result)
    print(f"{args.steps} steps x {per_step} completions, {args.rounds} round(s); load {os.getloadavg()[0]:.1f}")
    print("| engine | first step generation s | later steps, median generation s | completions/s (later) "
          "| run wall s |")
    print("|---|---|---|---|---|")
    medians = {}
    for engine, runs in results.items():
        steps = [r["generation_s_per_step"] for r in runs]
        later = [s for run in steps for s in run[1:]]
        medians[engine] = statistics.median(later)
        print(f"| {engine} | {statistics.median(run[0] for run in steps):.2f} | {medians[engine]:.2f} | "
              f"{per_step / medians[engine]:.2f} | {statistics.median(r['wall_s'] for r in runs):.1f} |")
    print(f"transformers / vLLM colocate (later steps' generation): "
          f"{medians['transformers'] / medians['vllm_colocate']:.2f}x")


if __name__ == "__main__":
    main()
