"""Instruction SFT: full-parameter, assistant tokens only.

Two data forms, one stage:

- ``data`` — packed blocks from the data pipeline (Dolci packed to 8,192 with
  assistant-only labels): a plain Trainer, the labels are the loss mask (campaign path);
- ``chat_data`` — chat rows (``messages`` [+ ``tools``, ``chat_template_kwargs``]):
  TRL's SFTTrainer renders them with the chat template and masks all but the
  ``{% generation %}`` spans (``assistant_only_loss``), packing padding-free when
  asked. The smoke ``-it`` model and EFT use this path. A tokenizer whose template
  has no markers (Gemma-4, GLM-4.5) is given its family's training template
  (:mod:`py4.chat.templates`, same text) while TRL tokenizes; the tokenizer saved
  with the model keeps its own template.

The reference's hyperparameters are the config type's defaults (docs/training.md, the stage
table). Departures: the chat-row path exists for the smoke ``-it`` model and EFT, not for the
reference's SFT (packed Dolci); a family training template stands in for a template without
``{% generation %}`` markers only while TRL tokenizes.

    py4 train sft --config configs/train/smoke/sft.yaml
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pydantic

from py4.chat.templates import (ChatTemplateError, resolve_training_template, restore_tool_arguments,
                                 use_training_template)
from py4.config import StrictModel
from py4.train import common, loading
from py4.train.packed import PackedData, StageResult, common_recorder, finish, run_packed


class ChatData(StrictModel):
    """Chat rows: a jsonl file, or a folder holding ``data.jsonl``."""

    path: str
    max_length: int = 8192
    packing: bool = True
    limit: int | None = None
    """Use only the first N rows (smoke runs)."""


class SFTStageConfig(StrictModel):
    model: loading.ModelSource
    data: PackedData | None = None
    chat_data: ChatData | None = None
    optimisation: common.Optimisation = common.Optimisation(warmup=10)
    run: common.RunSettings

    @pydantic.model_validator(mode="after")
    def _one_data_form(self) -> "SFTStageConfig":
        if (self.data is None) == (self.chat_data is None):
            raise ValueError("set exactly one of data (packed blocks) or chat_data (chat rows)")
        return self


def read_chat_rows(path: str | Path, limit: int | None = None) -> list[dict[str, Any]]:
    """Chat rows from a jsonl file or a folder with data.jsonl; raises ValueError naming the bad line."""
    from py4.data.smoke_instructions import read_smoke_instructions

    rows = read_smoke_instructions(path)
    return rows[:limit] if limit is not None else rows


def _arrow_safe(row: dict[str, Any]) -> dict[str, Any]:
    """One row in the form :func:`chat_dataset` stores: tool calls as ``{"type", "function"}``
    with their arguments as mappings (JSON text decoded: the Gemma-4 and GLM templates
    read a mapping), tool schemas as JSON text (TRL decodes it)."""
    messages = []
    for message in restore_tool_arguments(row["messages"]):
        message = dict(message)
        if message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                fn = dict(call.get("function", call))
                fn["arguments"] = fn.get("arguments") or {}
                calls.append({**({"id": call["id"]} if call.get("id") else {}), "type": "function", "function": fn})
            message["tool_calls"] = calls
        messages.append(message)
    out: dict[str, Any] = {"messages": messages}
    tools = row.get("tools")
    out["tools"] = json.dumps(tools) if tools and not isinstance(tools, str) else tools
    out["chat_template_kwargs"] = row.get("chat_template_kwargs") or {}
    return out


def chat_dataset(rows: list[dict[str, Any]]):
    """A ``datasets.Dataset`` of chat rows that TRL's SFTTrainer renders with the chat template.

    Each message is stored as a ``datasets.Json`` value: JSON text in Arrow (which would
    otherwise merge the argument dicts of different tools, and the keys of different
    messages, into one struct with null fields that templates then render), read back as
    the very dicts given — so the template sees tool-call arguments as mappings.
    """
    from datasets import Dataset, Features, Json, List, Value

    prepared = [_arrow_safe(r) for r in rows]
    features = {"messages": List(Json()), "tools": Value("string")}
    if not any(p["chat_template_kwargs"] for p in prepared):
        for p in prepared:
            p.pop("chat_template_kwargs")
    else:
        features["chat_template_kwargs"] = Json()
    return Dataset.from_list(prepared, features=Features(features))


# SFTConfig fields (TRL 1.16's own, beyond TrainingArguments) that :func:`chat_kwargs` sets.
SFT_FIELDS: tuple[str, ...] = ("assistant_only_loss", "packing", "max_length", "dataset_num_proc", "eos_token")


def config_fields(available) -> frozenset[str]:
    """Every SFTConfig field py4 may set when the class has the field names ``available``."""
    return common.trainer_fields(available) | frozenset(SFT_FIELDS)


def chat_kwargs(opt: common.Optimisation, settings: common.RunSettings, device: loading.DeviceSettings,
                max_steps: int, max_length: int, packing: bool, available=None) -> dict:
    """The SFTConfig keywords of a chat run; ``available``: its field names (default: the installed SFTConfig's)."""
    if available is None:
        from trl import SFTConfig

        available = common.installed_fields(SFTConfig)
    return {**common.trainer_kwargs(opt, settings, device, max_steps, available), "assistant_only_loss": True,
            "packing": packing, "max_length": max_length, "dataset_num_proc": None, "eos_token": None}


def checked_chat_kwargs(opt: common.Optimisation, settings: common.RunSettings, device: loading.DeviceSettings,
                        max_steps: int, max_length: int, packing: bool) -> dict:
    """:func:`chat_kwargs`, after checking the installed SFTConfig has every one (TrainingError if not).
    The stages call it before any weights load."""
    from trl import SFTConfig

    kwargs = chat_kwargs(opt, settings, device, max_steps, max_length, packing)
    common.check_fields(SFTConfig, kwargs, "SFT")
    return kwargs


def build_chat_trainer(model, tokenizer, dataset, opt: common.Optimisation, settings: common.RunSettings,
                       device: loading.DeviceSettings, max_steps: int, max_length: int, packing: bool,
                       peft_config=None, callbacks=(), plain_loss: bool = False,
                       chat_template_family: str | None = None):
    """TRL SFTTrainer with assistant-only loss over ``dataset``, guarded and LR-traced.

    The rows are tokenized with the tokenizer's family training template when its own has
    no generation markers (TRL knows none for Gemma-4 and raises "not training-compatible");
    ``chat_template_family`` names the family when the template text does not tell it.
    ``trainer.training_template`` describes the template used.

    ``plain_loss``: take the loss from the model's own forward (full logits) instead of TRL's
    fused LM head, which also computes entropy and top-1 metrics tile by tile — most of a
    step's time for a tiny model on CPU. The same mean token NLL over the labelled tokens
    (tested), but a 262k vocabulary's full logits do not fit at campaign scale.
    """
    from trl import SFTConfig, SFTTrainer

    from py4.train.callbacks import CheckpointCards, GuardCallback, TrackerRuns

    args = SFTConfig(**checked_chat_kwargs(opt, settings, device, max_steps, max_length, packing))
    own_template = tokenizer.chat_template
    # SFTTrainer tokenizes the dataset in its constructor: the training template is set for
    # that, and the model's own template put back so the saved tokenizer is the model's.
    training_template = use_training_template(tokenizer, chat_template_family)
    try:
        trainer = SFTTrainer(model=model, args=args, train_dataset=dataset, processing_class=tokenizer,
                             peft_config=peft_config,
                             callbacks=[GuardCallback(), TrackerRuns(), CheckpointCards(), *callbacks])
    finally:
        tokenizer.chat_template = own_template
    trainer.training_template = training_template.describe()
    trainer.data_collator = common.guarded_collator(trainer.data_collator)
    if plain_loss:
        trainer.compute_loss = _plain_loss
    return trainer


def check_training_template(tokenizer, source: loading.ModelSource) -> None:
    """Raises ChatTemplateError naming the tokenizer's folder when its chat template cannot give
    assistant-only labels: found before the weights load, not when the trainer is built."""
    try:
        resolve_training_template(tokenizer)
    except ChatTemplateError as exc:
        raise ChatTemplateError(f"model {source.tokenizer_path or source.path}: {exc}") from None


def _plain_loss(model, inputs, return_outputs=False, num_items_in_batch=None):
    outputs = model(**inputs, use_cache=False, num_items_in_batch=num_items_in_batch)
    return (outputs.loss, outputs) if return_outputs else outputs.loss


def run(config: SFTStageConfig, callbacks=()) -> StageResult:
    """Run SFT; raises TrainingGuardError for a schedule mismatch, an empty batch or a NaN loss."""
    if config.data is not None:
        return run_packed("sft", config, callbacks)
    opt, settings, chat = config.optimisation, config.run, config.chat_data
    common.check_world_size(opt)
    device = loading.device_settings(opt.gradient_checkpointing)
    with common_recorder(settings.output_dir, config, "sft") as recorder:
        recorder.add_input("model", hash_content=False, **loading.model_provenance(config.model))
        recorder.add_input("chat_data", path=chat.path)
        tokenizer = loading.load_tokenizer(config.model)
        check_training_template(tokenizer, config.model)
        resumed_from = common.resume_checkpoint(settings)
        checked_chat_kwargs(opt, settings, device, opt.max_steps or -1, chat.max_length, chat.packing)
        model = loading.load_model(config.model, device)
        rows = read_chat_rows(chat.path, chat.limit)
        recorder.set(data_rows=len(rows))
        from py4.train.callbacks import LRTrace

        lr_trace = LRTrace()
        trainer = build_chat_trainer(model, tokenizer, chat_dataset(rows), opt, settings, device,
                                     opt.max_steps if opt.max_steps else -1, chat.max_length, chat.packing,
                                     callbacks=[lr_trace, *callbacks])
        recorder.set(training_template=trainer.training_template)
        t0 = time.monotonic()
        trainer.train(resume_from_checkpoint=resumed_from)
        return finish(recorder, trainer, lr_trace, settings.output_dir, resumed_from, tokenizer, t0, config.model)
