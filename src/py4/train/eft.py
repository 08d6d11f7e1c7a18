"""EFT (elicitation fine-tuning): one LoRA on a chat parent or graft, assistant turn only.

Reference values (the table's EFT groups): LoRA r 64, α 128, dropout 0, no bias, on
q/k/v/o/gate/up/down (attention-only q/k/v/o for GLM: PEFT ≥ 0.19 remaps its packed
experts' MLP targets into target_parameters vLLM cannot serve); 4,096 tokens, no
packing; 2 epochs; global batch 32 rows (micro 1 × accum 32 × 1 GPU, or 2 × 4 × 4 for
GLM); LR 1e-4, 5% warmup, cosine to 0 (GLM: to 0.1×, weight decay 0.01); seed 424242.
The dose (rows, gold/replay split, ``held_out_rules_in_targets``) comes from
``py4.train.eft_data``; a dose that puts a held-out rule in a target is refused unless
the config allows it (the 2,048-row large dose does).

    py4 train eft --config configs/train/smoke/eft.yaml
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Literal

from py4.config import StrictModel
from py4.train import common, loading
from py4.train.packed import StageResult, common_recorder, finish

ALL_PROJECTIONS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


class LoraSpec(StrictModel):
    r: int = 64
    alpha: int = 128
    dropout: float = 0.0
    bias: Literal["none", "all", "lora_only"] = "none"
    target_modules: list[str] = ALL_PROJECTIONS
    """Module-name suffixes; ["q_proj", "k_proj", "v_proj", "o_proj"] is attention-only (GLM)."""
    modules_to_save: list[str] | None = None
    """Modules trained in full beside the LoRA and saved in the adapter (not the table's EFT:
    the smoke campaign sets ["embed_tokens"], since a LoRA on the 64-wide tiny model cannot
    memorise its dose with the tied embeddings frozen). Tied weights stay tied."""

    def peft_config(self):
        from peft import LoraConfig

        extra = ({"modules_to_save": list(self.modules_to_save), "ensure_weight_tying": True}
                 if self.modules_to_save else {})
        return LoraConfig(r=self.r, lora_alpha=self.alpha, lora_dropout=self.dropout, bias=self.bias,
                          target_modules=list(self.target_modules), task_type="CAUSAL_LM", **extra)


class DoseData(StrictModel):
    """An EFT dose folder (``data.jsonl`` + ``manifest.json`` from ``py4.train.eft_data``)."""

    path: str
    max_length: int = 4096
    packing: bool = False
    allow_held_out_rules: bool = False
    """The large 2,048-row dose includes held-out-rule problems; every other dose must not."""
    schedule: str | None = None
    """Optional ``step_schedule.json`` (rows mode): max_steps must match it."""


class EFTConfig(StrictModel):
    model: loading.ModelSource
    lora: LoraSpec = LoraSpec()
    data: DoseData
    optimisation: common.Optimisation = common.Optimisation(
        learning_rate=1e-4, lr_scheduler="cosine", min_lr_rate=None, warmup=0.05, weight_decay=0.0,
        optim="adamw_torch", seed=424242, micro_batch=1, grad_accum=32, epochs=2,
    )
    run: common.RunSettings
    plain_loss: bool = False
    """Take the loss from the model's full logits (transformers' causal-LM loss) instead of TRL's
    chunked fused LM head: the same loss (tested), ~2.5x faster for the tiny CPU model, but the
    full logits of a 262k vocabulary do not fit at campaign scale (keep False there)."""


def read_dose_manifest(path: str | Path) -> dict:
    """The dose's manifest.json ({} when the folder has none, e.g. hand-made test data)."""
    manifest = Path(path) / "manifest.json" if Path(path).is_dir() else Path(path).parent / "manifest.json"
    return json.loads(manifest.read_text(encoding="utf-8")) if manifest.exists() else {}


def check_dose(dose: dict, data: DoseData) -> None:
    """Raises TrainingGuardError when a held-in dose has held-out rules in its targets."""
    held_out = int(dose.get("held_out_rules_in_targets", 0) or 0)
    if held_out and not data.allow_held_out_rules:
        raise common.TrainingGuardError(
            f"dose {data.path} has {held_out} row(s) whose target exercises a held-out rule; "
            "a held-in dose must have none (set data.allow_held_out_rules only for the large dose)"
        )


def run(config: EFTConfig, callbacks=()) -> StageResult:
    """Train one LoRA on ``config.model`` over the dose; saves the adapter under output_dir/model.

    Raises TrainingGuardError for a dirty dose, a schedule mismatch, an empty batch or a NaN loss.
    """
    from py4.train import sft

    opt, settings, data = config.optimisation, config.run, config.data
    dose = read_dose_manifest(data.path)
    check_dose(dose, data)
    schedule = common.read_schedule(data.schedule) if data.schedule else None
    max_steps = common.check_schedule(opt.max_steps, schedule, str(data.schedule))
    common.check_world_size(opt)
    device = loading.device_settings(opt.gradient_checkpointing)
    with common_recorder(settings.output_dir, config, "eft") as recorder:
        recorder.add_input("model", hash_content=False, **loading.model_provenance(config.model))
        recorder.add_input("dose", path=data.path, manifest={k: v for k, v in dose.items() if k != "row_ids"})
        tokenizer = loading.load_tokenizer(config.model)
        model = loading.load_model(config.model, device)
        rows = sft.read_chat_rows(data.path)
        lr_trace = common.LRTrace()
        trainer = sft.build_chat_trainer(model, tokenizer, sft.chat_dataset(rows), opt, settings, device,
                                         max_steps if max_steps else -1, data.max_length, data.packing,
                                         peft_config=config.lora.peft_config(), callbacks=[lr_trace, *callbacks],
                                         plain_loss=config.plain_loss)
        summary = common.trainable_summary(trainer.model)
        recorder.set(data_rows=len(rows), adapted_modules=summary["adapted_modules"],
                     held_out_rules_in_targets=int(dose.get("held_out_rules_in_targets", 0) or 0),
                     schedule=schedule)
        resumed_from = common.resume_checkpoint(settings)
        t0 = time.monotonic()
        trainer.train(resume_from_checkpoint=resumed_from)
        return finish(recorder, trainer, lr_trace, settings.output_dir, resumed_from, tokenizer, t0)
