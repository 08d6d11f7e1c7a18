"""EFT (elicitation fine-tuning): one LoRA on a chat parent or graft, assistant turn only.

The reference's hyperparameters are the config type's defaults and the campaign's configs
(docs/training.md, the stage table). Departure: GLM-4.5-Air's LoRA is attention-only (q/k/v/o),
not the reference's q/k/v/o/gate/up/down, because PEFT ≥ 0.19 remaps its packed experts' MLP
targets into ``target_parameters``, which vLLM cannot serve. The dose (rows, gold/replay split,
``held_out_rules_in_targets``) comes from ``py4.train.eft_data``; a dose that puts a held-out
rule in a target is refused unless the config allows it (the 2,048-row large dose does).

Which modules the LoRA adapts is checked, not assumed: ``lora.target_scope`` (a regex) keeps
the targets inside the language model's decoder layers (Gemma-4's vision tower has q/k/v/o and
MLP projections of its own, ``Gemma4ClippableLinear``, which PEFT refuses), and the number of
adapted modules must equal what the model config implies (decoder layers × targets, less the
projections a layer lacks; :func:`expected_adapted_modules`). The manifest records it as
``lora.adapted_modules``.

    py4 train eft --config configs/train/smoke/eft.yaml
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Literal

import pydantic

from py4.config import StrictModel
from py4.fileio import read_json_object
from py4.train import common, loading
from py4.train.packed import StageResult, common_recorder, finish, stop_at_max_steps

ALL_PROJECTIONS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
ATTENTION_PROJECTIONS = {"q_proj", "k_proj", "v_proj", "o_proj"}


class LoraSpec(StrictModel):
    r: int = 64
    alpha: int = 128
    dropout: float = 0.0
    bias: Literal["none", "all", "lora_only"] = "none"
    target_modules: list[str] = ALL_PROJECTIONS
    """Projection names (a subset of ALL_PROJECTIONS); ["q_proj", "k_proj", "v_proj", "o_proj"]
    is attention-only (GLM)."""
    target_scope: str | None = None
    """A regex for the module that holds the targets, matched against the end of its dotted name:
    LoRA then adapts ``<scope>.<target>`` only. Gemma-4: ``language_model\\.layers\\.\\d+\\.(self_attn|mlp)``
    (the vision tower's projections carry the same names but are Gemma4ClippableLinear, which PEFT
    refuses). None: every module whose name ends in a target, PEFT's plain list rule."""
    modules_to_save: list[str] | None = None
    """Modules trained in full beside the LoRA and saved in the adapter (not the table's EFT:
    the smoke campaign sets ["embed_tokens"], since a LoRA on the 64-wide tiny model cannot
    memorise its dose with the tied embeddings frozen). Tied weights stay tied."""

    @pydantic.field_validator("target_modules")
    @classmethod
    def _known_projections(cls, value: list[str]) -> list[str]:
        # The expected count of adapted modules is derived per projection (see
        # expected_adapted_modules), so only the projections it knows are accepted.
        unknown = [name for name in value if name not in ALL_PROJECTIONS]
        if unknown or not value:
            raise ValueError(f"expected a non-empty subset of {ALL_PROJECTIONS}, got unknown {unknown}")
        return value

    @pydantic.field_validator("target_scope")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a regular expression ({exc})") from None
        return value

    def target_pattern(self) -> str | list[str]:
        """PEFT's ``target_modules``: the plain list, or a regex PEFT full-matches against each module name."""
        if self.target_scope is None:
            return list(self.target_modules)
        names = "|".join(re.escape(name) for name in self.target_modules)
        return rf"(?:.*\.)?(?:{self.target_scope})\.(?:{names})"

    def peft_config(self):
        from peft import LoraConfig

        extra = ({"modules_to_save": list(self.modules_to_save), "ensure_weight_tying": True}
                 if self.modules_to_save else {})
        return LoraConfig(r=self.r, lora_alpha=self.alpha, lora_dropout=self.dropout, bias=self.bias,
                          target_modules=self.target_pattern(), task_type="CAUSAL_LM", **extra)


def stand_in_warm_start(model_dir: str | Path, out: str | Path, lora: LoraSpec, model_class=None, dtype=None) -> Path:
    """A LoRA of ``lora``'s settings on ``model_dir``, saved to ``out``, standing in for a trained
    warm start (the EFT run GRPO starts from): PEFT's initialisation, but B drawn small (normal,
    std 1e-3, seed 0) as after training, since with PEFT's B = 0 the first GRPO step's gradient on
    A is exactly zero. ``model_class``: the transformers auto class to load with (default a
    causal LM); ``dtype``: the torch dtype (default float32)."""
    import torch
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    model = (model_class or AutoModelForCausalLM).from_pretrained(model_dir, dtype=dtype or torch.float32)
    model = get_peft_model(model, lora.peft_config())
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "lora_B" in name:
                param.normal_(std=1e-3)
    model.save_pretrained(out)
    return Path(out)


def is_mixture_of_experts(text_config) -> bool:
    """Whether the language model routes its MLP through experts (GLM-4.5, Gemma-4 MoE variants)."""
    return bool(getattr(text_config, "n_routed_experts", None) or getattr(text_config, "num_experts", None)
                or getattr(text_config, "enable_moe_block", False))


def layer_projections(text_config) -> list[set[str]]:
    """The projections each decoder layer of the language model has, read from its config.

    Every layer has all seven, except in Gemma-4: a layer that reuses another layer's KV cache
    has no k/v projections, and with ``attention_k_eq_v`` a full-attention layer has no v_proj
    (its keys serve as values). Recorded campaign counts follow: 12B 48 × 7 − 8 = 328,
    31B 60 × 7 − 10 = 410 (one full-attention layer in six).
    """
    layers = []
    gemma4 = text_config.model_type in ("gemma4_text", "gemma4_unified_text")  # 31B / 12B (gemma4_unified)
    kv_modes = getattr(text_config, "kv_sharing_modes", None) if gemma4 else None
    for index in range(text_config.num_hidden_layers):
        names = set(ALL_PROJECTIONS)
        if kv_modes is not None:
            if kv_modes[index] == "reuse":
                names -= {"k_proj", "v_proj"}
            elif text_config.attention_k_eq_v and text_config.layer_types[index] != "sliding_attention":
                names.discard("v_proj")
        layers.append(names)
    return layers


def expected_adapted_modules(model_config, spec: LoraSpec) -> int:
    """How many modules ``spec`` must adapt on a model with ``model_config``: Σ over decoder layers
    of the targets that layer has.

    Raises TrainingGuardError for MLP targets on a mixture-of-experts model (PEFT ≥ 0.19 turns
    them into target_parameters on the packed experts, which vLLM cannot serve as a LoRA).
    """
    text_config = model_config.get_text_config(decoder=True)
    mlp_targets = sorted(set(spec.target_modules) - ATTENTION_PROJECTIONS)
    if mlp_targets and is_mixture_of_experts(text_config):
        raise common.TrainingGuardError(
            f"lora.target_modules: {mlp_targets} on a mixture-of-experts model ({text_config.model_type}); "
            f"expected attention projections only ({sorted(ATTENTION_PROJECTIONS)}): PEFT remaps MLP targets onto "
            "the packed experts' parameters, which vLLM cannot serve")
    targets = set(spec.target_modules)
    return sum(len(targets & names) for names in layer_projections(text_config))


def check_lora_targets(model, spec: LoraSpec) -> list[str]:
    """The names of the modules ``spec`` targets on ``model``, checked before PEFT wraps it.

    Raises TrainingGuardError naming the lora fields when a target is not a plain Linear (PEFT
    would refuse it, e.g. Gemma-4's vision tower) or when the count differs from
    :func:`expected_adapted_modules`.
    """
    import torch
    from peft.tuners.tuners_utils import check_target_module_exists

    peft_config = spec.peft_config()
    # PEFT's own matching rule (an excluded module answers a falsy marker).
    matched = [(name, module) for name, module in model.named_modules()
               if bool(check_target_module_exists(peft_config, name))]
    foreign = [f"{name} ({type(module).__name__})" for name, module in matched
               if not isinstance(module, torch.nn.Linear)]
    if foreign:
        raise common.TrainingGuardError(
            f"lora.target_modules / lora.target_scope match {len(foreign)} module(s) that are not torch.nn.Linear, "
            f"e.g. {foreign[0]}; expected the language model's projections only (set lora.target_scope, "
            "e.g. 'language_model\\.layers\\.\\d+\\.(self_attn|mlp)' for Gemma-4)")
    expected = expected_adapted_modules(model.config, spec)
    if len(matched) != expected:
        raise common.TrainingGuardError(
            f"lora.target_modules / lora.target_scope match {len(matched)} module(s); the model config implies "
            f"{expected} (decoder layers × {spec.target_modules}); first matches: {[n for n, _ in matched[:4]]}")
    return [name for name, _ in matched]


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
    return read_json_object(manifest) if manifest.exists() else {}


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
    max_steps = common.check_schedule(opt, schedule, str(data.schedule))
    common.check_world_size(opt)
    device = loading.device_settings(opt.gradient_checkpointing)
    with common_recorder(settings.output_dir, config, "eft") as recorder:
        recorder.add_input("model", hash_content=False, **loading.model_provenance(config.model))
        recorder.add_input("dose", path=data.path, manifest={k: v for k, v in dose.items() if k != "row_ids"})
        tokenizer = loading.load_tokenizer(config.model)
        sft.check_training_template(tokenizer, config.model)
        resumed_from = common.resume_checkpoint(settings)
        sft.checked_chat_kwargs(opt, settings, device, max_steps or -1, data.max_length, data.packing)
        model = loading.load_model(config.model, device)
        targeted = check_lora_targets(model, config.lora)
        rows = sft.read_chat_rows(data.path)
        from py4.train.callbacks import LRTrace

        lr_trace = LRTrace()
        trainer = sft.build_chat_trainer(model, tokenizer, sft.chat_dataset(rows), opt, settings, device,
                                         max_steps if max_steps else -1, data.max_length, data.packing,
                                         peft_config=config.lora.peft_config(), callbacks=[lr_trace, *callbacks],
                                         plain_loss=config.plain_loss)
        adapted = common.trainable_summary(trainer.model)["adapted_modules"]
        if adapted != len(targeted):  # PEFT may rewrite targets (its MoE remap): count what it did
            raise common.TrainingGuardError(
                f"lora: PEFT adapted {adapted} module(s), {len(targeted)} expected from lora.target_modules / "
                "lora.target_scope and the model config")
        recorder.set(data_rows=len(rows),
                     lora={"adapted_modules": adapted, "target_modules": config.lora.target_pattern()},
                     held_out_rules_in_targets=int(dose.get("held_out_rules_in_targets", 0) or 0),
                     schedule=schedule)
        stop_at_max_steps(trainer)  # resumed at the last step: no step more
        t0 = time.monotonic()
        trainer.train(resume_from_checkpoint=resumed_from)
        return finish(recorder, trainer, lr_trace, settings.output_dir, resumed_from, tokenizer, t0, config.model)
