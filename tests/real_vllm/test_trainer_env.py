"""The GRPO trainer in the vLLM-side environment (.venv-vllm: transformers 5.17, TRL 1.16, vLLM 0.31).

The campaign's GRPO runs in that environment (docs/training.md, "GRPO with vLLM"), not in .venv:
these tests run py4's trainer code under its interpreter.

- Every GRPO config the repository ships builds its ``GRPOConfig`` under 5.17, on this CPU and with
  a GPU node's device settings (bf16, activation checkpointing): every ``TrainingArguments`` /
  ``GRPOConfig`` field py4 passes exists in that release.
- The smoke GRPO run (configs/train/smoke/grpo.yaml on the smoke assets) trains and saves there.

Rollouts come from transformers generation here (``grpo.use_vllm=false``, the smoke config's
setting); GRPO with vLLM generating them, colocated (the rehearsal's Gemma-4 segment too) and up
to server mode's NCCL weight sync, is test_grpo_vllm.py.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from smoke_models import smoke_warm_start
from vllm_tier import ROOT, VLLM_PYTHON, VLLM_VENV

pytestmark = pytest.mark.vllm

GRPO_CONFIGS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "configs" / "train").glob("*/grpo.yaml"))

# Build each GRPOConfig as `py4 train grpo` does (grpo.grpo_args) with the given device settings.
BUILD_ARGS = r"""
import json, sys
import transformers, trl
from py4.config import load_config
from py4.train import grpo, loading
out = {"transformers": transformers.__version__, "trl": trl.__version__, "built": []}
for path in sys.argv[1:]:
    config = load_config(grpo.GRPOStageConfig, path, [])
    for device in (loading.DeviceSettings(use_cpu=True, bf16=False, gradient_checkpointing=False, device="cpu"),
                   loading.DeviceSettings(use_cpu=False, bf16=True, gradient_checkpointing=True, device="cuda")):
        weights = [1.0] * (len(config.reward_functions) + 2)
        try:
            args = grpo.grpo_args(config, device, weights)
        except ValueError as exc:
            # TrainingArguments.__post_init__ refusing bf16 on this CPU: it runs after the dataclass's
            # __init__ accepted every keyword (an unknown one is a TypeError there), so the fields exist.
            if "bf16" not in str(exc) and "gpu" not in str(exc).lower():
                raise
            args = None
        out["built"].append([path, device.device, type(args).__name__ if args else "refused: device"])
print("RESULT " + json.dumps(out))
"""


def vllm_env_python(code_or_args: list[str], timeout: float = 900, env: dict | None = None):
    if not VLLM_PYTHON.is_file():
        pytest.fail(f"{VLLM_PYTHON} is missing: build the vLLM environment first (make vllm-env)")
    return subprocess.run([str(VLLM_PYTHON), *code_or_args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT, env={**os.environ, **(env or {})})


def test_every_shipped_grpo_config_builds_its_grpo_config_under_the_trainer_envs_transformers():
    done = vllm_env_python(["-c", BUILD_ARGS, *GRPO_CONFIGS])
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.split("RESULT ", 1)[1])
    assert (result["transformers"], result["trl"]) == ("5.17.0", "1.16.0")
    assert GRPO_CONFIGS and [(p, d) for p, d, _ in result["built"]] == [
        (p, d) for p in GRPO_CONFIGS for d in ("cpu", "cuda")]
    assert all(kind == "GRPOConfig" for _, device, kind in result["built"] if device == "cpu"), result["built"]


def test_smoke_grpo_trains_and_saves_in_the_trainer_env(smoke_assets, tmp_path):
    assets = smoke_assets
    smoke_warm_start(assets / "it", tmp_path / "warm_start")

    out = tmp_path / "grpo"
    done = subprocess.run(
        [str(VLLM_VENV / "bin" / "py4"), "train", "grpo", "--config", "configs/train/smoke/grpo.yaml",
         f"model.path={assets / 'it'}", f"adapter={tmp_path / 'warm_start'}", f"run.output_dir={out}",
         "optimisation.max_steps=2", "run.save_steps=2", "problems.limit=2", "grpo.problems_per_step=1",
         "optimisation.grad_accum=4"],
        capture_output=True, text=True, timeout=1800, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-4000:]
    manifest = json.loads((out / "run_manifest.json").read_text())
    assert manifest["status"] == "done" and manifest["result"]["global_step"] == 2, manifest.get("result")
    assert manifest["libraries"]["transformers"] == "5.17.0" and manifest["libraries"]["vllm"] == "0.31.0+cpu"
    assert manifest["sampling"]["engine"] == "transformers generate"  # use_vllm is off in the smoke config
    assert (out / "checkpoint-2").is_dir() and (out / "model").is_dir()
