"""Instruction SFT: full-parameter, assistant tokens only.

Two data forms, one stage:

- ``data`` — packed blocks from the data pipeline (Dolci packed to 8,192 with
  assistant-only labels): a plain Trainer, the labels are the loss mask (campaign path);
- ``chat_data`` — chat rows (``messages`` [+ ``tools``, ``chat_template_kwargs``]):
  TRL's SFTTrainer renders them with the tokenizer's chat template and masks all but
  the ``{% generation %}`` spans (``assistant_only_loss``), packing padding-free when
  asked. The smoke ``-it`` model and EFT use this path.

Reference values (the table's SFT group): LR 1e-5, cosine to 0.1×, 10 warmup steps,
weight decay 0.01, clipping 1.0, 48 steps of 2,097,152 tokens, seed 42.

    py4 train sft --config configs/train/smoke/sft.yaml
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pydantic

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
    """One row in a form Arrow stores without inventing fields.

    Tool-call arguments and tool schemas become JSON strings (Arrow would merge the
    argument dicts of different tools into one struct with null fields, and the
    template would render those nulls); the chat template accepts string arguments.
    """
    messages = []
    for message in row["messages"]:
        message = dict(message)
        if message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                fn = dict(call.get("function", call))
                if not isinstance(fn.get("arguments"), str):
                    fn["arguments"] = json.dumps(fn.get("arguments") or {}, ensure_ascii=False)
                calls.append({"type": "function", "function": fn})
            message["tool_calls"] = calls
        messages.append(message)
    out: dict[str, Any] = {"messages": messages}
    tools = row.get("tools")
    out["tools"] = json.dumps(tools) if tools and not isinstance(tools, str) else tools
    out["chat_template_kwargs"] = row.get("chat_template_kwargs") or {}
    return out


def chat_dataset(rows: list[dict[str, Any]]):
    """A ``datasets.Dataset`` of chat rows that TRL's SFTTrainer renders with the chat template."""
    from datasets import Dataset

    prepared = [_arrow_safe(r) for r in rows]
    if not any(p["chat_template_kwargs"] for p in prepared):
        for p in prepared:
            p.pop("chat_template_kwargs")
    return Dataset.from_list(prepared)


def build_chat_trainer(model, tokenizer, dataset, opt: common.Optimisation, settings: common.RunSettings,
                       device: loading.DeviceSettings, max_steps: int, max_length: int, packing: bool,
                       peft_config=None, callbacks=(), plain_loss: bool = False):
    """TRL SFTTrainer with assistant-only loss over ``dataset``, guarded and LR-traced.

    ``plain_loss``: take the loss from the model's own forward (full logits) instead of TRL's
    fused LM head, which also computes entropy and top-1 metrics tile by tile — most of a
    step's time for a tiny model on CPU. The same mean token NLL over the labelled tokens
    (tested), but a 262k vocabulary's full logits do not fit at campaign scale.
    """
    from trl import SFTConfig, SFTTrainer

    kwargs = common.trainer_kwargs(opt, settings, device, max_steps)
    args = SFTConfig(**kwargs, assistant_only_loss=True, packing=packing, max_length=max_length,
                     dataset_num_proc=None, eos_token=None)
    trainer = SFTTrainer(model=model, args=args, train_dataset=dataset, processing_class=tokenizer,
                         peft_config=peft_config, callbacks=[common.GuardCallback(), *callbacks])
    trainer.data_collator = common.guarded_collator(trainer.data_collator)
    if plain_loss:
        trainer.compute_loss = _plain_loss
    return trainer


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
        model = loading.load_model(config.model, device)
        rows = read_chat_rows(chat.path, chat.limit)
        recorder.set(data_rows=len(rows))
        lr_trace = common.LRTrace()
        trainer = build_chat_trainer(model, tokenizer, chat_dataset(rows), opt, settings, device,
                                     opt.max_steps if opt.max_steps else -1, chat.max_length, chat.packing,
                                     callbacks=[lr_trace, *callbacks])
        resumed_from = common.resume_checkpoint(settings)
        t0 = time.monotonic()
        trainer.train(resume_from_checkpoint=resumed_from)
        return finish(recorder, trainer, lr_trace, settings.output_dir, resumed_from, tokenizer, t0)
