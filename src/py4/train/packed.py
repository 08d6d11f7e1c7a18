"""Training on pre-packed blocks: the loop shared by midtraining and packed SFT.

The data pipeline (``py4.data``) writes packed ``datasets`` folders with columns
``input_ids``, ``labels`` (−100 where not supervised) and ``position_ids``, plus
``manifest.json``. Here a plain ``transformers.Trainer`` trains on them: the labels decide
the loss mask (every token for midtraining, assistant tokens for SFT), the position ids
decide what a token attends to. They restart at 0 for every SFT conversation, and for
every midtraining document when the mix says ``documents: apart``; a midtraining mix with
``documents: concatenated`` numbers each row 0..seq_len-1 (one causal sequence across its
documents). The collator passes ``position_ids`` without an ``attention_mask``, so
transformers reads each restart as a new sequence (``find_packed_sequence_indices``) and
masks attention block-causally — provided no KV cache is built in the forward: the
Trainer sets ``config.use_cache`` to its ``use_cache`` argument (False). Tested in
tests/data/test_pack_documents.py for Gemma-3, Gemma-4 and GLM-4.5.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from py4.config import StrictModel
from py4.data.errors import DataError
from py4.fileio import read_json_object
from py4.runs import RunRecorder
from py4.train import common, fsdp, loading

if TYPE_CHECKING:
    from py4.train.callbacks import LRTrace


class PackedData(StrictModel):
    """A packed dataset folder and, optionally, its step schedule."""

    path: str
    """``datasets.save_to_disk`` folder with input_ids / labels / position_ids."""
    schedule: str | None = None
    """``step_schedule.json`` (or its folder): max_steps comes from it and must match."""


@dataclass
class StageResult:
    """What a training stage returns (also written to its run manifest)."""

    output_dir: str
    model_dir: str
    global_step: int
    train_loss: float | None
    lr_peak: float | None
    lr_end: float | None
    trainable_parameters: int
    adapted_modules: int
    resumed_from: str | None
    steps_this_run: int | None = None
    """Optimizer steps this process took (global_step less the resumed checkpoint's step)."""


def load_packed(path: str | Path):
    """Load a packed dataset; raises DataError naming the folder and what it lacks."""
    from datasets import load_from_disk

    path = Path(path)
    if not path.exists():
        raise DataError(f"data.path: packed dataset not found: {path}")
    try:
        dataset = load_from_disk(str(path))
    except FileNotFoundError as exc:  # a folder that datasets.save_to_disk did not write
        raise DataError(f"{path}: not a saved dataset (expected a py4 data mix / pack folder): {exc}") from None
    if hasattr(dataset, "keys") and "train" in dataset:
        dataset = dataset["train"]
    missing = {"input_ids", "labels"} - set(dataset.column_names)
    if missing:
        raise DataError(f"{path}: packed dataset lacks column(s) {sorted(missing)} (has {dataset.column_names})")
    return dataset


class PackedBlockCollator:
    """Stacks packed blocks; pads a short last block (pad id, label −100, position 0)."""

    def __init__(self, pad_token_id: int):
        self.pad_token_id = pad_token_id

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        import torch

        width = max(len(f["input_ids"]) for f in features)

        def column(key: str, fill: int):
            rows = [list(f[key]) + [fill] * (width - len(f[key])) for f in features]
            return torch.tensor(rows, dtype=torch.long)

        batch = {"input_ids": column("input_ids", self.pad_token_id), "labels": column("labels", -100)}
        if "position_ids" in features[0]:
            # No attention_mask with position ids: restarting ids are what keeps packed documents apart.
            batch["position_ids"] = column("position_ids", 0)
        else:
            batch["attention_mask"] = (batch["input_ids"] != self.pad_token_id).long()
        return batch


def record_inputs(recorder, model_source: loading.ModelSource, data_path: str, schedule: dict | None) -> None:
    """Model revision, data manifest (hashed) and schedule into the run manifest."""
    recorder.add_input("model", hash_content=False, **loading.model_provenance(model_source))
    manifest = Path(data_path) / "manifest.json"
    extra: dict[str, Any] = {}
    if manifest.exists():
        extra["manifest"] = read_json_object(manifest)
        recorder.add_input("data", path=manifest, **extra)
    else:
        recorder.add_input("data", path=data_path)
    if schedule is not None:
        recorder.set(schedule=schedule)


def save_final_model(trainer, model_dir: Path) -> dict[str, Any]:
    """Save the trained model to ``model_dir``; returns what the manifest records about it.

    A LoRA adapter is saved as the trainer saves it. A full-parameter model is saved in the
    dtype of the checkpoint it started from (``loading.load_model`` notes it on the model):
    FSDP2 with bf16 mixed precision trains fp32 master weights and a CPU run trains in
    float32, but the graft (``mismatch.dtype: error``) and the next stage expect the
    campaign's checkpoints as they are, bf16. Under FSDP the weights are gathered one tensor
    at a time on every rank (a collective) whatever ``fsdp_state_dict_type`` the checkpoints
    use, and rank 0 writes them.
    """

    model = trainer.accelerator.unwrap_model(trainer.model)
    dtype = getattr(model, loading.CHECKPOINT_DTYPE_ATTR, None)
    is_main = trainer.accelerator.is_main_process
    if hasattr(model, "peft_config") and trainer.is_fsdp_enabled and fsdp.is_sharded_checkpointing(trainer):
        # The Trainer saves nothing under FSDP with sharded checkpoints: gather the adapter only.
        adapter = fsdp.gathered_state_dict(trainer.model, None, is_main, keep=_is_adapter_tensor)
        if is_main:
            _write_adapter(model, model_dir, adapter)
        trainer.accelerator.wait_for_everyone()
        return {"saved_dtype": "as trained (adapter)", "source_dtype": None if dtype is None else str(dtype)}
    if hasattr(model, "peft_config") or dtype is None:
        trainer.save_model(str(model_dir))
        return {"saved_dtype": "as trained", "source_dtype": None if dtype is None else str(dtype)}
    if trainer.is_fsdp_enabled:
        state = fsdp.gathered_state_dict(trainer.model, dtype, is_main)
    else:
        state = _cast_state(model.state_dict(keep_vars=True), dtype) if is_main else {}
    if is_main:
        model.save_pretrained(str(model_dir), state_dict=state)
        _write_config_dtype(model, model_dir, dtype)
    del state
    trainer.accelerator.wait_for_everyone()
    name = str(dtype).removeprefix("torch.")
    return {"saved_dtype": name, "source_dtype": name}


def _is_adapter_tensor(name: str) -> bool:
    return "lora_" in name or "modules_to_save" in name


def _write_adapter(model, model_dir: Path, adapter: dict[str, Any]) -> None:
    """Write a gathered LoRA adapter as PEFT does (adapter_model.safetensors + adapter_config.json).

    Not ``PeftModel.save_pretrained``: PEFT 0.21 selects adapter tensors by the module names it
    walks, which under FSDP's activation checkpointing carry ``_checkpoint_wrapped_module`` while
    the state dict's keys do not, so it would write an empty adapter.
    """
    from safetensors.torch import save_file

    name = model.active_adapter if isinstance(model.active_adapter, str) else model.active_adapter[0]
    tensors = {}
    for key, tensor in adapter.items():  # PEFT's saved names: without the adapter name
        key = key.replace(f".modules_to_save.{name}.", ".").replace(f".{name}.", ".")
        tensors[key] = tensor.detach().contiguous()
    model_dir.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(model_dir / "adapter_model.safetensors"), metadata={"format": "pt"})
    model.peft_config[name].save_pretrained(str(model_dir))


def _cast_state(state: dict[str, Any], dtype) -> dict[str, Any]:
    """Floating tensors cast to ``dtype``; tied parameters stay one tensor (saved once)."""
    cast: dict[int, Any] = {}
    out = {}
    for name, tensor in state.items():
        if id(tensor) not in cast:
            cast[id(tensor)] = tensor.detach().to(dtype) if tensor.is_floating_point() else tensor.detach()
        out[name] = cast[id(tensor)]
    return out


def _write_config_dtype(model, model_dir: Path, dtype) -> None:
    """config.json states the saved dtype (save_pretrained writes the training dtype)."""
    name = str(dtype).removeprefix("torch.")
    config = model.config
    for sub in (config, *(getattr(config, key, None) for key in getattr(config, "sub_configs", {}))):
        if sub is not None and hasattr(sub, "dtype"):
            sub.dtype = name
    config.save_pretrained(str(model_dir))


def stop_at_max_steps(trainer, last_step: int | None = None) -> None:
    """Make ``trainer`` take no optimizer step once ``max_steps`` (or ``last_step``, a segment's
    end) is reached, also when it resumes there.

    transformers 5.24's Trainer checks ``max_steps`` only after a step (``DefaultFlowCallback.
    on_step_end``; GRPO's segment end likewise). Resumed from the checkpoint of the last step (a
    run that died before its final save, rerun by the campaign runner) with data holding more
    batches than that (capped schedules, GRPO segments), the resumed epoch still has batches
    left and one more step was trained. No callback runs before that step's forward, backward
    and optimizer step, so the epoch itself is skipped; the weights stay the checkpoint's, which
    the final save writes.
    """
    run_epoch = type(trainer)._run_epoch  # AttributeError if a new transformers renamed it

    def run_epoch_unless_done(*args, **kwargs):
        ends = [s for s in (trainer.state.max_steps, last_step) if s is not None and s > 0]
        if ends and trainer.state.global_step >= min(ends):
            trainer.control.should_training_stop = True
            return None
        return run_epoch(trainer, *args, **kwargs)

    trainer._run_epoch = run_epoch_unless_done


def checkpoint_step(checkpoint: str | None) -> int:
    """The global step a Trainer checkpoint was written at (0 for no checkpoint).

    A checkpoint the run resumed from is often gone by the time the run ends: the Trainer
    removes all but the newest ``save_total_limit`` checkpoints as it saves. Its name still says
    the step (the Trainer names each ``checkpoint-<global step>``)."""
    if checkpoint is None:
        return 0
    state = Path(checkpoint) / "trainer_state.json"
    if state.exists():
        return int(read_json_object(state)["global_step"])
    from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

    step = Path(checkpoint).name.removeprefix(f"{PREFIX_CHECKPOINT_DIR}-")
    return int(step) if step.isdigit() else 0


def optimizer_facts(trainer) -> dict[str, Any]:
    """The optimizer that ran and how many of its state tensors are quantized.

    torchao's AdamW8bit (``adamw_torch_8bit``) keeps a parameter's state in 8 bits only when
    its local shard has at least 4,096 elements and divides by the block size (256); smaller
    ones stay float32. Counting ``OptimState*`` tensors shows which path really ran.
    """
    optimizer = getattr(trainer.optimizer, "optimizer", trainer.optimizer)  # accelerate wraps it
    if optimizer is None:
        return {}
    states = quantized = 0
    for state in optimizer.state.values():
        for value in state.values():
            local = value.to_local() if hasattr(value, "to_local") else value  # a DTensor under FSDP2
            if getattr(local, "ndim", 0) == 0:  # step counters
                continue
            states += 1
            quantized += type(local).__name__.startswith("OptimState")
    return {"class": type(optimizer).__name__, "state_tensors": states, "quantized_state_tensors": quantized}


def finish(recorder, trainer, lr_trace: LRTrace, output_dir: str, resumed_from: str | None,
           tokenizer, t0: float, source: loading.ModelSource | None = None) -> StageResult:
    """Save the final model, record the outcome, return the stage result.

    The saved folder is complete: with the tokenizer, and the processor files of ``source`` (the
    trained model; its -it tokenizer source first), which neither save writes
    (:func:`py4.train.model_files.copy_processor_files`; vLLM needs them to serve Gemma-4).
    """
    model_dir = Path(output_dir) / "model"
    saved = save_final_model(trainer, model_dir)
    if trainer.accelerator.is_main_process:
        tokenizer.save_pretrained(str(model_dir))
        if source is not None:
            from py4.train.model_files import copy_processor_files

            sources = [(source.tokenizer_path, source.tokenizer_revision)] if source.tokenizer_path else []
            copied = copy_processor_files([*sources, (source.path, source.revision)], model_dir)
            recorder.set(processor_files={name: {"from": facts["from"], "sha256": facts["sha256"]}
                                          for name, facts in copied.items()})
    summary = common.trainable_summary(trainer.model)
    steps = trainer.state.global_step - checkpoint_step(resumed_from)
    # The Trainer logs train_loss 0.0 for a call that took no step: no loss was measured.
    losses = [h["train_loss"] for h in trainer.state.log_history if "train_loss" in h] if steps else []
    lr = lr_trace.summary()
    result = StageResult(
        output_dir=output_dir, model_dir=str(model_dir), global_step=trainer.state.global_step,
        train_loss=losses[-1] if losses else None, lr_peak=lr.get("lr_peak"), lr_end=lr.get("lr_end"),
        trainable_parameters=summary["trainable_parameters"], adapted_modules=summary["adapted_modules"],
        resumed_from=resumed_from, steps_this_run=steps,
    )
    recorder.set(result={k: v for k, v in result.__dict__.items()}, parameters=summary,
                 lr_trace={"steps": lr_trace.steps, "lr": lr_trace.lrs}, saved_model=saved,
                 optimizer=optimizer_facts(trainer))
    recorder.add_output("model", model_dir)
    recorder.timing("train_s", time.monotonic() - t0)
    return result


def run_packed(kind: str, config, callbacks=()) -> StageResult:
    """Train ``config.model`` on ``config.data`` (packed) with ``config.optimisation``.

    ``config`` has fields model, data (PackedData), optimisation, run. Raises
    TrainingGuardError for a schedule mismatch, an empty batch or a NaN loss.
    """
    from transformers import Trainer, TrainingArguments

    opt, settings = config.optimisation, config.run
    common.check_optimizer(opt)
    schedule = common.read_schedule(config.data.schedule) if config.data.schedule else None
    max_steps = common.check_schedule(opt, schedule, str(config.data.schedule))
    common.check_world_size(opt)
    device = loading.device_settings(opt.gradient_checkpointing)
    common.check_checkpointing(opt, device)
    if opt.master_weights == "bf16" and fsdp.launch().enabled:
        fsdp.keep_param_dtype()
    with common_recorder(settings.output_dir, config, kind) as recorder:
        record_inputs(recorder, config.model, config.data.path, schedule)
        # The arguments first: they start the process group, which rank-0-only loading needs.
        kwargs = common.trainer_kwargs(opt, settings, device, max_steps if max_steps else -1)
        common.check_fields(TrainingArguments, kwargs, kind)
        args = TrainingArguments(**kwargs)
        args.device  # noqa: B018 — accelerate's PartialState (process group) is created on first use
        tokenizer = loading.load_tokenizer(config.model)
        resumed_from = common.resume_checkpoint(settings)
        recorder.set(resumed_from=resumed_from)
        model = loading.load_model(config.model, device)
        recorder.set(loading=loading.loading_facts(model))
        dataset = load_packed(config.data.path)
        recorder.set(data_rows=len(dataset), max_steps=max_steps if max_steps is not None else -1)
        from py4.train.callbacks import CheckpointCards, GuardCallback, LRTrace, TrackerRuns

        lr_trace = LRTrace()
        trainer = Trainer(
            model=model, args=args, train_dataset=dataset, processing_class=tokenizer,
            data_collator=common.guarded_collator(PackedBlockCollator(tokenizer.pad_token_id)),
            callbacks=[GuardCallback(), lr_trace, TrackerRuns(), CheckpointCards(), *callbacks],
        )
        stop_at_max_steps(trainer)
        t0 = time.monotonic()
        trainer.train(resume_from_checkpoint=resumed_from)
        return finish(recorder, trainer, lr_trace, settings.output_dir, resumed_from, tokenizer, t0, config.model)


def common_recorder(output_dir: str, config, kind: str) -> RunRecorder:
    """The run manifest's recorder. Under a multi-process launch only rank 0 writes the file:
    every rank rewriting one manifest raced (a rerun's ``attempt`` was read back from the other
    rank's fresh write and counted twice). Other ranks keep theirs in memory; a rank that fails
    shows in the launch's log and exit status, which the campaign runner records."""
    recorder_type = RunRecorder if int(os.environ.get("RANK", "0")) == 0 else InMemoryRecorder
    return recorder_type(output_dir, config, kind=kind)


class InMemoryRecorder(RunRecorder):
    """A RunRecorder that never writes its manifest (ranks other than 0)."""

    def flush(self) -> None:
        pass
