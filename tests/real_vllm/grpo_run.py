"""Run py4's GRPO stage in this interpreter (.venv-vllm) and report what a test needs to see.

    .venv-vllm/bin/python tests/real_vllm/grpo_run.py [--config CONFIG] OUT.json MODEL ADAPTER RUN_DIR [key=value ...]

Runs ``py4.train.grpo.run`` on CONFIG (default configs/train/smoke/grpo.yaml) with the given overrides and
``reward_functions`` = :func:`length_reward` (so that a group's rewards differ and the LoRA
moves), and writes OUT.json: whether every non-LoRA parameter of the policy is bit-identical
after training to before it (vLLM weight syncs included), whether the LoRA weights changed, the
seconds each step spent generating rollouts (TRL's ``_generate_single_turn``, the one entry of
both vLLM and transformers generation, tool-loop turns included) and the run manifest.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def length_reward(completions, **_) -> list[float]:
    """A reward that differs between a problem's samples: the completion's length in characters / 100."""
    return [len(json.dumps(c)) / 100 for c in completions]


def main(argv: list[str]) -> None:
    import torch
    from transformers import TrainerCallback
    from trl import GRPOTrainer

    from py4.config import load_config
    from py4.train import grpo

    config_file = ROOT / "configs/train/smoke/grpo.yaml"
    if argv[:1] == ["--config"]:
        config_file, argv = Path(argv[1]), argv[2:]
    out, model, adapter, run_dir, *overrides = argv
    generation_s: list[float] = []
    original = GRPOTrainer._generate_single_turn

    def timed(self, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            generation_s.append(time.perf_counter() - t0)
            per_step[self.state.global_step] = per_step.get(self.state.global_step, 0.0) + generation_s[-1]

    per_step: dict[int, float] = {}
    GRPOTrainer._generate_single_turn = timed

    class Watch(TrainerCallback):
        def on_train_begin(self, args, state, control, model=None, **kwargs):
            self.base = {n: p.detach().clone() for n, p in model.named_parameters() if "lora_" not in n}
            self.lora = {n: p.detach().clone() for n, p in model.named_parameters() if "lora_" in n}

        def on_train_end(self, args, state, control, model=None, **kwargs):
            now = dict(model.named_parameters())
            self.base_identical = all(torch.equal(now[n].detach(), t) for n, t in self.base.items())
            self.lora_changed = sorted(n for n, t in self.lora.items() if not torch.equal(now[n].detach(), t))

    config = load_config(grpo.GRPOStageConfig, config_file,
                         [*overrides, f"model.path={model}", f"adapter={adapter}", f"run.output_dir={run_dir}"])
    config = config.model_copy(update={"reward_functions": [grpo.RewardFunction(function="grpo_run:length_reward")]})
    watch = Watch()
    grpo.run(config, callbacks=[watch])
    manifest = json.loads((Path(run_dir) / "run_manifest.json").read_text())
    Path(out).write_text(json.dumps({
        "base_identical": watch.base_identical, "base_tensors": len(watch.base), "lora_changed": watch.lora_changed,
        "lora_tensors": len(watch.lora), "generation_s_per_step": [per_step[k] for k in sorted(per_step)],
        "manifest": manifest}, indent=1, default=str))


if __name__ == "__main__":
    main(sys.argv[1:])
