"""Each stage runs a few steps on the tiny smoke models (CPU).

Checked per stage: every trainable parameter changes (and, for LoRA, nothing else);
one batch's labels prove the loss mask; the LR trace follows the configured schedule;
the guards stop bad runs; a killed run resumes and reaches the same step count.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from py4.train import common

from train_helpers import FirstBatch, KillAt, ParamSnapshot, pack_chat, pack_text

pytestmark = pytest.mark.smoke
TINY_RUN = {"logging_steps": 1, "save_steps": 1000, "report_to": [], "progress_bar": False}


def _docs() -> list[str]:
    from py4.chat.smoke_tokenizer import stdlib_texts

    return [t[:3000] for t in stdlib_texts(200_000)][:12]


@pytest.fixture(scope="module")
def mid_data(smoke_assets, tmp_path_factory) -> Path:
    # 2 rows per step (micro 2), warmup 25% of steps.
    out = tmp_path_factory.mktemp("mid") / "packed"
    return pack_text(out, smoke_assets / "tokenizer", _docs(), seq_len=128, micro_batch=2, warmup=0.25)


@pytest.fixture(scope="module")
def sft_data(smoke_assets, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sft") / "packed"
    return pack_chat(out, smoke_assets / "tokenizer", smoke_assets / "instructions", seq_len=512, max_sequences=6)


def _config(kind: str, **fields):
    from py4.stages import config_type

    return config_type(kind).model_validate(fields)


def _expected_cosine_min_lr(step: int, total: int, warmup: int, peak: float, min_rate: float) -> float:
    if step < warmup:
        return peak * step / max(1, warmup)
    progress = (step - warmup) / max(1, total - warmup)
    return peak * (min_rate + (1 - min_rate) * 0.5 * (1 + math.cos(math.pi * progress)))


def test_midtrain_every_token_supervised_all_params_change_lr_follows_schedule(smoke_assets, mid_data, tmp_path):
    from py4.train import midtrain

    schedule = json.loads((mid_data / "step_schedule.json").read_text())
    snapshot, first = ParamSnapshot(), FirstBatch()
    config = _config("midtrain", model={"path": str(smoke_assets / "base")},
                     data={"path": str(mid_data), "schedule": str(mid_data / "step_schedule.json")},
                     optimisation={"learning_rate": 1e-3, "optim": "adamw_torch", "micro_batch": 2, "warmup": 0.25},
                     run={"output_dir": str(tmp_path / "run"), **TINY_RUN})
    result = midtrain.run(config, callbacks=[snapshot, first])

    assert result.global_step == schedule["max_steps"] >= 3
    labels, ids = first.batch["labels"], first.batch["input_ids"]
    assert (labels == ids).all()  # every token supervised (HF shifts inside the model)
    snapshot.assert_every_trainable_changed_and_nothing_else()
    assert snapshot.trainable == set(snapshot.before)  # full-parameter: nothing frozen
    manifest = json.loads((tmp_path / "run" / "run_manifest.json").read_text())
    assert manifest["status"] == "done" and manifest["schedule"]["max_steps"] == result.global_step
    assert manifest["inputs"]["model"]["revision"].startswith("sha256:")
    assert manifest["inputs"]["data"]["sha256"] and manifest["libraries"]["transformers"]
    trace = manifest["lr_trace"]
    warmup = math.ceil(0.25 * result.global_step)
    expected = [_expected_cosine_min_lr(s, result.global_step, warmup, 1e-3, 0.1) for s in trace["steps"]]
    assert trace["lr"] == pytest.approx(expected, rel=1e-6)
    assert result.lr_end == pytest.approx(1e-4) and result.lr_peak == pytest.approx(1e-3)
    assert (tmp_path / "run" / "model" / "model.safetensors").exists()
    assert (tmp_path / "run" / "resolved_config.yaml").exists()
    card = (tmp_path / "run" / "model" / "README.md").read_text()  # what made it, for an upload
    assert "kind: midtrain" in card and manifest["config_sha256"] in card


def test_midtrain_refuses_max_steps_that_differ_from_the_schedule(smoke_assets, mid_data, tmp_path):
    from py4.train import midtrain

    config = _config("midtrain", model={"path": str(smoke_assets / "base")},
                     data={"path": str(mid_data), "schedule": str(mid_data / "step_schedule.json")},
                     optimisation={"max_steps": 99, "optim": "adamw_torch", "micro_batch": 2},  # the pack's batch
                     run={"output_dir": str(tmp_path)})
    with pytest.raises(common.TrainingGuardError, match="differs from max_steps"):
        midtrain.run(config)


@pytest.mark.parametrize("kind, model, data_fixture, warmup",
                         [("midtrain", "base", "mid_data", 0.25), ("sft", "it", "sft_data", 1)])
def test_killed_run_resumes_from_its_checkpoint_to_the_same_step(kind, model, data_fixture, warmup,
                                                                 smoke_assets, request, tmp_path):
    # Killed at step 3 with a checkpoint every 2 steps, then run again: it resumes from
    # checkpoint-2, reaches the planned steps and continues the same LR schedule.
    import importlib

    stage = importlib.import_module(f"py4.train.{kind}")
    data = request.getfixturevalue(data_fixture)
    config = _config(kind, model={"path": str(smoke_assets / model)},
                     data={"path": str(data), "schedule": str(data / "step_schedule.json")},
                     optimisation={"learning_rate": 1e-3, "optim": "adamw_torch", "micro_batch": 2, "warmup": warmup},
                     run={"output_dir": str(tmp_path / "run"), **TINY_RUN, "save_steps": 2})
    max_steps = json.loads((data / "step_schedule.json").read_text())["max_steps"]
    assert max_steps >= 3  # else the kill would not land after the checkpoint
    with pytest.raises(KeyboardInterrupt):
        stage.run(config, callbacks=[KillAt(3)])
    assert json.loads((tmp_path / "run" / "run_manifest.json").read_text())["status"] == "interrupted"
    result = stage.run(config)
    assert result.resumed_from.endswith("checkpoint-2")
    assert result.global_step == max_steps
    manifest = json.loads((tmp_path / "run" / "run_manifest.json").read_text())
    assert manifest["status"] == "done" and manifest["attempt"] == 2
    assert manifest["lr_trace"]["steps"][0] == 3  # the trace starts after step 2
    last = max(int(p.name.split("-")[1]) for p in (tmp_path / "run").glob("checkpoint-*"))
    card = (tmp_path / "run" / f"checkpoint-{last}" / "README.md").read_text()  # a checkpoint is a model: a card
    assert f"kind: {kind}" in card and f"step: {last}" in card and manifest["config_sha256"] in card


def test_sft_packed_supervises_only_assistant_tokens(smoke_assets, sft_data, tmp_path):
    from transformers import AutoTokenizer

    from py4.train import sft

    snapshot, first = ParamSnapshot(), FirstBatch()
    config = _config("sft", model={"path": str(smoke_assets / "it")},
                     data={"path": str(sft_data), "schedule": str(sft_data / "step_schedule.json")},
                     optimisation={"learning_rate": 1e-3, "optim": "adamw_torch", "micro_batch": 2, "warmup": 1},
                     run={"output_dir": str(tmp_path / "run"), **TINY_RUN})
    result = sft.run(config, callbacks=[snapshot, first])
    assert result.global_step >= 2
    snapshot.assert_every_trainable_changed_and_nothing_else()
    assert snapshot.trainable == set(snapshot.before)  # full-parameter: nothing frozen
    tokenizer = AutoTokenizer.from_pretrained(smoke_assets / "tokenizer")
    labels, ids = first.batch["labels"], first.batch["input_ids"]
    supervised = tokenizer.decode(ids[labels != -100])
    unsupervised = tokenizer.decode(ids[labels == -100])
    assert "<end_of_turn>" in supervised and "<start_of_turn>" not in supervised
    assert "<start_of_turn>user" in unsupervised
    assert "position_ids" in first.batch  # packed conversations kept apart


def test_sft_chat_rows_trl_path_masks_prompts(smoke_assets, tmp_path):
    from transformers import AutoTokenizer

    from py4.train import sft

    snapshot, first = ParamSnapshot(), FirstBatch()
    config = _config("sft", model={"path": str(smoke_assets / "base")},
                     chat_data={"path": str(smoke_assets / "instructions"), "max_length": 512, "limit": 8},
                     optimisation={"learning_rate": 1e-3, "optim": "adamw_torch", "micro_batch": 2, "warmup": 1,
                                   "max_steps": 2},
                     run={"output_dir": str(tmp_path / "run"), **TINY_RUN})
    result = sft.run(config, callbacks=[snapshot, first])
    assert result.global_step == 2
    snapshot.assert_every_trainable_changed_and_nothing_else()
    assert snapshot.trainable == set(snapshot.before)  # full-parameter: nothing frozen
    tokenizer = AutoTokenizer.from_pretrained(smoke_assets / "tokenizer")
    ids, labels = first.batch["input_ids"], first.batch["labels"]
    supervised = tokenizer.decode(ids[labels != -100])
    assert "<end_of_turn>" in supervised and "<start_of_turn>" not in supervised and "You can call" not in supervised


def test_nan_loss_and_unsupervised_batch_stop_the_run():
    import torch

    from py4.train.callbacks import GuardCallback

    guard = GuardCallback()
    state = type("S", (), {"global_step": 7})()
    with pytest.raises(common.TrainingGuardError, match="loss is nan at step 7"):
        guard.on_log(None, state, None, logs={"loss": float("nan")})
    collate = common.guarded_collator(lambda rows: {"labels": torch.full((len(rows), 5), -100)})
    with pytest.raises(common.TrainingGuardError, match="no supervised token"):
        collate([{}, {}])
