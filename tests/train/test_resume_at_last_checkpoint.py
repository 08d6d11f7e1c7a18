"""A run resumed from the checkpoint of its last step ends at max_steps.

The campaign runner reruns a node whose process died after its last checkpoint and before
its final save (or before the node record was written); ``run.resume: auto`` then resumes
from ``checkpoint-<max_steps>``. transformers 5.24's Trainer only checks ``max_steps`` after an
optimizer step (``DefaultFlowCallback.on_step_end``) and, when the data hold more batches than
``max_steps`` (mixes and packs cap their schedules), the resumed epoch still has batches left:
it trained step max_steps + 1. Here one process, the tiny smoke model, midtraining and packed
SFT (both ``py4.train.packed.run_packed``): a finished run's final model is removed and the run
started again.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from train_helpers import ParamSnapshot, pack_chat, pack_text

pytestmark = pytest.mark.smoke
MAX_STEPS = 2
RUN = {"logging_steps": 1, "save_steps": MAX_STEPS, "report_to": [], "progress_bar": False}


def _config(kind: str, **fields):
    from py4.stages import config_type

    return config_type(kind).model_validate(fields)


@pytest.fixture(scope="module")
def mid_data(smoke_assets, tmp_path_factory) -> Path:
    from py4.chat.smoke_tokenizer import stdlib_texts

    docs = [t[:3000] for t in stdlib_texts(200_000)][:12]
    out = tmp_path_factory.mktemp("mid") / "packed"
    return pack_text(out, smoke_assets / "tokenizer", docs, seq_len=128, micro_batch=2, warmup=0.25)


@pytest.fixture(scope="module")
def sft_data(smoke_assets, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sft") / "packed"
    return pack_chat(out, smoke_assets / "tokenizer", smoke_assets / "instructions", seq_len=512, max_sequences=6)


def _weights(model_dir: Path) -> dict[str, torch.Tensor]:
    tensors: dict[str, torch.Tensor] = {}
    for shard in sorted(model_dir.glob("*.safetensors")):
        tensors.update(load_file(shard))
    assert tensors, f"no weights saved in {model_dir}"
    return tensors


@pytest.mark.parametrize("kind, model, data_fixture", [("midtrain", "base", "mid_data"), ("sft", "it", "sft_data")])
def test_resumed_from_the_last_checkpoint_the_run_ends_at_max_steps(kind, model, data_fixture, smoke_assets,
                                                                     request, tmp_path):
    import importlib
    import shutil

    from py4.train.packed import load_packed

    stage = importlib.import_module(f"py4.train.{kind}")
    data = request.getfixturevalue(data_fixture)
    # max_steps from the config (no schedule file), below what the data hold: a capped schedule.
    steps_in_data = len(load_packed(data)) // 2  # micro_batch 2, one process
    assert steps_in_data > MAX_STEPS, "the data must hold more steps than max_steps to show the defect"
    run_dir = tmp_path / "run"
    config = _config(kind, model={"path": str(smoke_assets / model)}, data={"path": str(data)},
                     optimisation={"learning_rate": 1e-3, "optim": "adamw_torch", "micro_batch": 2,
                                   "max_steps": MAX_STEPS, "warmup": 1},
                     run={"output_dir": str(run_dir), **RUN})

    snapshot = ParamSnapshot()
    first = stage.run(config, callbacks=[snapshot])
    assert first.global_step == MAX_STEPS and first.resumed_from is None
    snapshot.assert_every_trainable_changed_and_nothing_else()  # the first run trained
    finished = _weights(run_dir / "model")
    assert (run_dir / f"checkpoint-{MAX_STEPS}").is_dir()
    # Died after its last checkpoint, before the final save: the model is not there.
    shutil.rmtree(run_dir / "model")

    again = stage.run(config)

    assert again.resumed_from.endswith(f"checkpoint-{MAX_STEPS}")
    assert again.global_step == MAX_STEPS
    assert not (run_dir / f"checkpoint-{MAX_STEPS + 1}").exists()
    # The final model is the last checkpoint's weights: no further optimizer step.
    resumed = _weights(run_dir / "model")
    assert resumed.keys() == finished.keys()
    moved = [name for name in finished if not torch.equal(finished[name], resumed[name])]
    assert not moved, f"weights changed after resuming at max_steps: {moved[:5]}"
    manifest = json.loads((run_dir / "run_manifest.json").read_text())
    assert manifest["status"] == "done" and manifest["attempt"] == 2
    assert manifest["result"]["global_step"] == MAX_STEPS
    # Honest about a resumed run that had nothing left to train.
    assert manifest["result"]["steps_this_run"] == 0
    assert manifest["result"]["train_loss"] is None
    assert manifest["lr_trace"]["steps"] == []
    # The optimizer state came back from the checkpoint (one state tensor pair per parameter).
    assert manifest["optimizer"]["class"] == "AdamW" and manifest["optimizer"]["state_tensors"] > 0


def test_eft_resumed_from_its_last_checkpoint_ends_at_max_steps(smoke_assets, tmp_path):
    # LoRA EFT with max_steps below the epoch's steps (gold-only dose: no replay generation).
    import shutil

    from py4.train import eft
    from py4.train.eft_data import EFTDoseConfig, build_dose

    dose = build_dose(EFTDoseConfig(out=str(tmp_path / "dose"), gold=8, replay=0, split="eft_pool"))
    run_dir = tmp_path / "run"
    config = eft.EFTConfig.model_validate({
        "model": {"path": str(smoke_assets / "it")}, "data": {"path": str(dose), "max_length": 512},
        "optimisation": {"learning_rate": 1e-3, "lr_scheduler": "cosine", "min_lr_rate": None, "warmup": 0.0,
                         "optim": "adamw_torch", "micro_batch": 2, "max_steps": MAX_STEPS},
        "run": {"output_dir": str(run_dir), **RUN}})
    assert eft.run(config).global_step == MAX_STEPS  # 8 rows / 2: 4 steps in the epoch, 2 taken
    finished = _weights(run_dir / "model")
    shutil.rmtree(run_dir / "model")

    again = eft.run(config)

    assert again.resumed_from.endswith(f"checkpoint-{MAX_STEPS}") and again.global_step == MAX_STEPS
    resumed = _weights(run_dir / "model")  # the adapter
    assert resumed.keys() == finished.keys()
    assert all(torch.equal(finished[name], resumed[name]) for name in finished)
    assert json.loads((run_dir / "run_manifest.json").read_text())["result"]["steps_this_run"] == 0


def test_grpo_segment_resumed_at_its_end_takes_no_further_step(smoke_assets, warm_start_adapter, tmp_path):
    # The campaign's first GRPO segment (stop_at_step) rerun after its checkpoint: it must stay at
    # the segment's end, where the next segment resumes.
    import shutil

    from py4.train import grpo

    run_dir = tmp_path / "run"
    config = grpo.GRPOStageConfig.model_validate({
        "model": {"path": str(smoke_assets / "it")}, "adapter": str(warm_start_adapter),
        "episode": {"max_tool_calls": 1, "token_budget": 64, "max_turn_tokens": 64},
        "problems": {"split": "grpo", "limit": 2, "epochs": 1},
        "grpo": {"num_generations": 2, "problems_per_step": 1, "max_prompt_length": 1024, "stop_at_step": 1},
        "optimisation": {"learning_rate": 1e-3, "lr_scheduler": "constant", "min_lr_rate": None, "warmup": 0,
                         "optim": "adamw_torch", "micro_batch": 2, "grad_accum": 1, "max_steps": 2},
        "run": {"output_dir": str(run_dir), **RUN, "save_steps": 1}})
    assert grpo.run(config).global_step == 1
    shutil.rmtree(run_dir / "model")

    again = grpo.run(config)

    assert again.resumed_from.endswith("checkpoint-1") and again.global_step == 1
    assert not (run_dir / "checkpoint-2").exists()
    assert json.loads((run_dir / "run_manifest.json").read_text())["result"]["steps_this_run"] == 0
