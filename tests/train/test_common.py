"""Fast unit tests of the shared training pieces (no model)."""

from __future__ import annotations

import json

import pytest

from py4.config import ConfigError, load_config
from py4.errors import FileFormatError
from py4.train import common, loading


def test_cpu_device_settings():
    settings = loading.device_settings()
    assert settings == loading.DeviceSettings(use_cpu=True, bf16=False, gradient_checkpointing=False, device="cpu")


def test_trainer_kwargs_map_warmup_ratio_and_min_lr():
    opt = common.Optimisation(warmup=0.03)
    run = common.RunSettings(output_dir="/tmp/x")
    kwargs = common.trainer_kwargs(opt, run, loading.device_settings(), 306)
    assert kwargs["warmup_steps"] == 0.03 and kwargs["max_steps"] == 306
    assert kwargs["lr_scheduler_type"] == "cosine_with_min_lr"
    assert kwargs["lr_scheduler_kwargs"] == {"min_lr_rate": 0.1}
    assert kwargs["use_cpu"] and not kwargs["bf16"] and kwargs["report_to"] == ["tensorboard"]
    steps = common.trainer_kwargs(common.Optimisation(warmup=10), run, loading.device_settings(), 48)
    assert steps["warmup_steps"] == 10 and isinstance(steps["warmup_steps"], int)


def test_trainer_kwargs_are_accepted_by_transformers_and_trl():
    from transformers import TrainingArguments
    from trl import GRPOConfig, SFTConfig

    kwargs = common.trainer_kwargs(common.Optimisation(optim="adamw_torch", micro_batch=2),
                                   common.RunSettings(output_dir="/tmp/x"), loading.device_settings(), 4)
    TrainingArguments(**kwargs)
    SFTConfig(**kwargs)
    assert not GRPOConfig(**kwargs, num_generations=2).gradient_checkpointing  # TRL's default is on


def test_a_run_whose_global_batch_is_not_its_schedules_is_refused():
    # The schedule counted 10 steps of 8 sequences (micro 1 x accum 4 x gpus 2); a run stepping 16
    # at a time would stop after 10 steps having trained on twice the data (comparing max_steps
    # alone lets it run).
    schedule = {"max_steps": 10, "sequences_per_step": 8, "micro_batch": 1, "grad_accum": 4, "gpus": 2}
    assert common.check_schedule(common.Optimisation(micro_batch=2, grad_accum=2, gpus=2), schedule) == 10
    with pytest.raises(common.TrainingGuardError,
                       match=r"mix/step_schedule.json counts its steps for 8 sequences per step \(micro 1 × accum 4 × "
                             r"gpus 2\), but optimisation trains 16 \(micro 1 × accum 8 × gpus 2\)"):
        common.check_schedule(common.Optimisation(grad_accum=8, gpus=2), schedule, "mix/step_schedule.json")
    assert common.check_schedule(common.Optimisation(grad_accum=8), {"max_steps": 10}) == 10  # older schedules


def test_cosine_with_min_lr_needs_min_lr_rate():
    with pytest.raises(ValueError, match="min_lr_rate is required"):
        common.trainer_kwargs(common.Optimisation(min_lr_rate=None), common.RunSettings(output_dir="/tmp/x"),
                              loading.device_settings(), 4)


def test_schedule_guard(tmp_path):
    (tmp_path / "step_schedule.json").write_text(json.dumps({"max_steps": 306, "warmup_steps": 10}))
    schedule = common.read_schedule(tmp_path)
    assert common.check_schedule(common.Optimisation(), schedule) == 306
    assert common.check_schedule(common.Optimisation(max_steps=306), schedule) == 306
    assert common.check_schedule(common.Optimisation(max_steps=7), None) == 7
    with pytest.raises(common.TrainingGuardError, match="max_steps 305 in the config differs from max_steps 306"):
        common.check_schedule(common.Optimisation(max_steps=305), schedule)
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(FileFormatError, match="bad.json: field 'max_steps': expected an integer"):
        common.read_schedule(tmp_path / "bad.json")


def fake_checkpoint(folder, weights="model.safetensors", state=True):
    """A folder with the files the Trainer reads when it resumes (contents do not matter here)."""
    folder.mkdir(parents=True)
    if weights:
        (folder / weights).write_bytes(b"weights")
    if state:
        (folder / "trainer_state.json").write_text("{}")
    return folder


def test_resume_picks_the_last_checkpoint(tmp_path):
    for step in (2, 10, 4):
        fake_checkpoint(tmp_path / f"checkpoint-{step}")
    assert common.resume_checkpoint(common.RunSettings(output_dir=str(tmp_path))).endswith("checkpoint-10")
    assert common.resume_checkpoint(common.RunSettings(output_dir=str(tmp_path), resume="never")) is None
    assert common.resume_checkpoint(common.RunSettings(output_dir=str(tmp_path / "new"))) is None
    with pytest.raises(FileNotFoundError):
        common.resume_checkpoint(common.RunSettings(output_dir=str(tmp_path), resume=str(tmp_path / "nope")))


@pytest.mark.parametrize(("make", "reason"), [
    (lambda d: d.mkdir(), "no trainer_state.json"),
    (lambda d: fake_checkpoint(d, weights=None), "no model or adapter weights"),
])
def test_resume_at_a_folder_that_is_not_a_checkpoint_is_refused_before_loading(tmp_path, make, reason):
    """The Trainer raises ValueError("Can't find a valid checkpoint") only after the weights load."""
    make(tmp_path / "notackpt")
    run = common.RunSettings(output_dir=str(tmp_path / "out"), resume=str(tmp_path / "notackpt"))
    with pytest.raises(common.TrainingInputMissing,
                       match=rf"run.resume: {tmp_path / 'notackpt'} is not a checkpoint folder \({reason}; expected"):
        common.resume_checkpoint(run)


@pytest.mark.parametrize("weights", ["model.safetensors", "adapter_model.safetensors", "pytorch_model_fsdp_0",
                                     "default/adapter_model.safetensors"])
def test_resume_accepts_each_kind_of_trainer_checkpoint(tmp_path, weights):
    folder = fake_checkpoint(tmp_path / "checkpoint-3", weights=None)
    target = folder / weights
    target.parent.mkdir(exist_ok=True)
    target.mkdir() if weights == "pytorch_model_fsdp_0" else target.write_bytes(b"w")
    assert common.resume_checkpoint(common.RunSettings(output_dir=str(tmp_path), resume=str(folder))) == str(folder)


def test_auto_resume_passes_over_a_checkpoint_cut_short(tmp_path):
    """A save killed before trainer_state.json (written last) is not resumed from; the one before is."""
    fake_checkpoint(tmp_path / "checkpoint-2")
    fake_checkpoint(tmp_path / "checkpoint-4", state=False)
    (tmp_path / "checkpoint-x").mkdir()
    assert common.resume_checkpoint(common.RunSettings(output_dir=str(tmp_path))) == str(tmp_path / "checkpoint-2")
    # The Trainer writes trainer_state.json in place: a save killed while writing it leaves part of it.
    (fake_checkpoint(tmp_path / "checkpoint-6") / "trainer_state.json").write_text('{"global_step": 6, "log_hi')
    assert common.resume_checkpoint(common.RunSettings(output_dir=str(tmp_path))) == str(tmp_path / "checkpoint-2")
    with pytest.raises(common.TrainingInputMissing, match="trainer_state.json is not whole JSON"):
        common.resume_checkpoint(common.RunSettings(output_dir=str(tmp_path), resume=str(tmp_path / "checkpoint-6")))


def test_auto_resume_passes_over_a_checkpoint_whose_other_process_was_cut_short(tmp_path):
    """Each process of a launch writes its own rng_state_<rank>.pth, with no barrier before process 0
    writes trainer_state.json: a launch killed then leaves the other process's file empty or part
    written, which torch.load cannot read (an EOFError, after the weights load)."""
    import torch

    whole = fake_checkpoint(tmp_path / "checkpoint-2")
    for rank in (0, 1):
        torch.save({"cpu": torch.random.get_rng_state()}, whole / f"rng_state_{rank}.pth")
    data = (whole / "rng_state_1.pth").read_bytes()
    for step, part in ((4, b""), (6, data[: len(data) // 2])):
        folder = fake_checkpoint(tmp_path / f"checkpoint-{step}")
        (folder / "rng_state_0.pth").write_bytes(data)
        (folder / "rng_state_1.pth").write_bytes(part)
        assert common.checkpoint_problem(folder) == "rng_state_1.pth is not a whole file (a save cut short?)"
    assert common.resume_checkpoint(common.RunSettings(output_dir=str(tmp_path))) == str(whole)


def test_model_sources_must_exist_or_be_pinned(tmp_path):
    with pytest.raises(ValueError, match="pinned revision"):
        loading.load_tokenizer(loading.ModelSource(path="google/gemma-4-31b"))
    with pytest.raises(FileNotFoundError, match="model folder not found"):
        loading.load_model(loading.ModelSource(path=str(tmp_path / "missing")), loading.device_settings())
    assert loading.model_provenance(loading.ModelSource(path="google/gemma-4-31b", revision="5bbc2fb1")) == {
        "hub_id": "google/gemma-4-31b", "revision": "5bbc2fb1"}


def test_stage_configs_reject_unknown_keys_and_bad_shapes(tmp_path):
    from py4.train.grpo import GRPOStageConfig
    from py4.stages import config_type, get_stage

    path = tmp_path / "c.yaml"
    path.write_text("model: {path: x}\ndata: {path: d}\nrun: {output_dir: o}\noptimisation: {learning_rat: 1}\n")
    with pytest.raises(ConfigError, match="did you mean 'learning_rate'"):
        load_config(config_type("midtrain"), path)
    with pytest.raises(ConfigError, match="completions per step"):
        load_config(GRPOStageConfig, None, ["model.path=x", "run.output_dir=o", "optimisation.grad_accum=3"])
    with pytest.raises(KeyError, match="did you mean 'sft'"):
        get_stage("sfy")
