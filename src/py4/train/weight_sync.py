"""Exact LoRA weight sync from the GRPO trainer to vLLM.

TRL 1.16 (``trl/generation/vllm_generation.py``, ``VLLMGeneration._iter_named_params``) sends a
PEFT policy to vLLM by merging the adapter into the frozen base (PEFT:
``base_layer.weight.data += delta``), streaming the merged weights, then unmerging
(``-= delta``), both in the base's dtype. In bf16 ``W + d − d`` is not ``W``: every sync moves
the frozen base a little, so the policy that generates drifts away from the one being trained,
and the saved adapter is trained against a moved base (docs/training.md, "Weight sync").

Here the walk never writes to the model: for each LoRA layer the weight sent is
``W + Σ scale·B·A`` computed in fp32 into a fresh tensor and cast once to the base's dtype
(the bias likewise when the adapter has ``lora_bias``). Names, the parameters skipped (the
adapters' own, ``original_module`` of modules to save) and the gathering under DeepSpeed ZeRO-3
are TRL's. FSDP2 parameters are read whole (``full_tensor``), as TRL's FSDP2 walk does; FSDP1
(which py4 does not use) and LoRA variants without a plain ``B·A`` delta (DoRA, embedding or
convolution LoRA) are refused with :class:`WeightSyncError` rather than sent wrong.

The trainer uses it through :func:`use_exact_sync`, which makes the trainer's
``vllm_generation`` an instance of a subclass of its own class overriding ``_iter_named_params``
(the object TRL built and connected is kept; only the walk changes). The subclass counts the syncs
and the prompts vLLM generated for, and notes the sampling TRL handed vLLM (the ``SamplingParams``
TRL builds for a colocated engine, the keywords of its server client's request): the run
manifest's ``vllm_generation``, so that the record is what vLLM got, not what the config asked.
It also counts the multimodal placeholder ids sampled in completions (:func:`placeholder_ids`),
the one input on which vLLM and transformers' Gemma-4 differ (docs/training.md, "Weight sync").

Colocated on vLLM's CPU build, TRL's push (``model.load_weights`` one tensor at a time) cannot
work: after loading, vLLM's CPU linear layers hold their weight packed in a kernel handle and keep
an empty parameter without a weight loader. There the same exact walk goes through vLLM's in-place
reload (``model_runner.reload_weights``), which restores the layers, loads every tensor and packs
them again. On a GPU, and in server mode, TRL's push is unchanged.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from py4.train.errors import TrainingError

__all__ = ["WeightSyncError", "exact_named_params", "merged_lora_tensor", "exact_sync_class", "use_exact_sync",
           "sent_sampling", "placeholder_ids"]

_BASE = ".base_layer."


class WeightSyncError(TrainingError):
    """A model whose weights the exact sync cannot compute (said before anything is sent)."""


def _whole(tensor: Any, device: Any = None) -> Any:
    """A parameter's full value: FSDP2's DTensor gathered (on ``device`` when it sits on the CPU)."""
    data = getattr(tensor, "data", tensor)
    if hasattr(data, "full_tensor"):
        if device is not None and data.is_cpu:
            data = data.to(device)
        data = data.full_tensor()
    return data


def _lora_adapters(layer) -> list[str]:
    """The adapters of ``layer`` to add to its base: active, present, not already merged into it."""
    if getattr(layer, "disable_adapters", False):
        return []
    merged = set(getattr(layer, "merged_adapters", ()))
    return [a for a in layer.active_adapters if a in layer.lora_A and a not in merged]


def merged_lora_tensor(layer, leaf: str, base: Any, device: Any = None) -> Any:
    """``base`` (the layer's ``weight`` or ``bias``) plus its active LoRA deltas, computed in fp32 and
    cast once to the base's dtype; a new tensor (``base`` is only read). Raises WeightSyncError for
    a LoRA kind with no plain ``B·A`` delta."""
    import torch
    from peft.tuners.lora import layer as lora_layer
    from peft.utils.other import transpose

    adapters = _lora_adapters(layer)
    if not adapters or leaf not in ("weight", "bias"):
        return base
    if not isinstance(layer, lora_layer.Linear):
        raise WeightSyncError(f"exact weight sync: {type(layer).__name__} LoRA layers are not supported "
                              f"(only Linear LoRA has a plain scale·B·A delta)")
    variants = [a for a in adapters if a in getattr(layer, "lora_variant", {})]
    if variants:
        raise WeightSyncError(f"exact weight sync: adapter(s) {variants} use a LoRA variant (DoRA, ...) whose merge "
                              f"is not W + scale·B·A")
    out = base.to(torch.float32, copy=True)
    for adapter in adapters:
        scale = layer.scaling[adapter]
        if leaf == "weight":
            a = _whole(layer.lora_A[adapter].weight, device).to(out.device, torch.float32)
            b = _whole(layer.lora_B[adapter].weight, device).to(out.device, torch.float32)
            out += transpose(b @ a, layer.fan_in_fan_out) * scale
        elif layer.lora_bias.get(adapter) and layer.lora_B[adapter].bias is not None:
            out += _whole(layer.lora_B[adapter].bias, device).to(out.device, torch.float32) * scale
    return out.to(base.dtype)


def exact_named_params(model, fix_name: Callable[..., str], device: Any = None) -> Iterator[tuple[str, Any]]:
    """(vLLM name, weight) for every parameter of a PEFT model, the LoRA layers' bases merged exactly.

    The names and the parameters left out are those of TRL's PEFT walk: ``base_model.model.``
    and ``.base_layer`` removed, the adapter's own parameters and ``original_module`` skipped,
    ``fix_name`` (TRL's ``_fix_param_name_to_vllm``) applied with ``modules_to_save.default.``.
    """
    from peft.tuners.lora import LoraLayer

    layers = {name: module for name, module in model.named_modules() if isinstance(module, LoraLayer)}
    prefix = model.prefix
    for name, param in model.named_parameters():
        vllm_name = name.removeprefix("base_model.model.").replace(".base_layer", "")
        if prefix in vllm_name or "original_module" in vllm_name:
            continue
        vllm_name = fix_name(vllm_name, extra_prefixes=["modules_to_save.default."])
        owner, base, leaf = name.rpartition(_BASE)
        value = _whole(param, device)
        layer = layers.get(owner) if base else None
        yield vllm_name, (merged_lora_tensor(layer, leaf, value, device) if layer is not None else value)


def exact_sync_class(generation_class: type) -> type:
    """A subclass of TRL's ``VLLMGeneration`` (or of a subclass of it) whose parameter walk for a
    PEFT model sends exactly merged weights and leaves the model untouched."""
    if not callable(getattr(generation_class, "_iter_named_params", None)):
        raise WeightSyncError(f"{generation_class.__qualname__} has no _iter_named_params: this TRL's weight sync "
                              f"is not the one py4.train.weight_sync overrides (TRL 1.16)")

    class ExactSyncVLLMGeneration(generation_class):  # type: ignore[misc, valid-type]
        def _iter_named_params(self):
            from accelerate.utils import is_peft_model

            if not is_peft_model(self.model):
                yield from super()._iter_named_params()
                return
            if self._dist.fsdp_version == 1:
                raise WeightSyncError("exact weight sync: FSDP1 is not supported (py4 trains with FSDP2)")
            device = self.accelerator.device if self._dist.is_fsdp else None
            with self._dist.gather_params(list(self.model.parameters())):
                yield from exact_named_params(self.model, self._fix_param_name_to_vllm, device)

        weight_syncs = 0  # counted per instance once it synced or generated (the run manifest's record)
        prompts_generated = 0

        def sync_weights(self):
            self.weight_syncs += 1
            if self.mode == "colocate" and colocated_on_cpu():
                # vLLM's CPU build packs each linear weight into a kernel handle and leaves an empty
                # parameter without a weight loader, which TRL's per-tensor load_weights cannot fill;
                # vLLM's in-place reload restores the layers, loads, and packs them again.
                runner = self.llm.llm_engine.model_executor.driver_worker.model_runner
                runner.reload_weights(weights_iterator=self._iter_named_params())
                self.llm.reset_prefix_cache()
                return
            super().sync_weights()

        sampling_sent = None  # what TRL passed vLLM at its first generation (the run manifest's record)
        sampling_calls = 0
        placeholders_sampled = 0  # multimodal placeholder ids among the completions (see placeholder_ids)

        def generate(self, prompts, *args, **kwargs):
            self.prompts_generated += len(prompts)
            with self._recording_sampling():
                out = super().generate(prompts, *args, **kwargs)
            ids = placeholder_ids(self.model)
            if ids:
                self.placeholders_sampled += sum(token in ids for completion in out[1] for token in completion)
            return out

        @contextlib.contextmanager
        def _recording_sampling(self):
            """While TRL generates, note the sampling it hands vLLM: the ``SamplingParams`` it builds
            for the colocated ``LLM.generate``, or the keywords of the server client's ``generate``."""
            # TRL gives only the main process a server client: the others send nothing
            target = getattr(self, "llm" if self.mode == "colocate" else "vllm_client", None)
            if target is None:
                yield
                return
            original, own = target.generate, "generate" in vars(target)

            def generate(*args, **kwargs):
                sent = sent_sampling(kwargs.get("sampling_params", kwargs) if self.mode == "colocate" else kwargs)
                self.sampling_calls += 1
                if self.sampling_sent is None:
                    self.sampling_sent = sent
                elif sent != self.sampling_sent:
                    self.sampling_sent = {**self.sampling_sent, "changed_at_call": self.sampling_calls,
                                          "changed_to": sent}
                return original(*args, **kwargs)

            target.generate = generate
            try:
                yield
            finally:
                if own:
                    target.generate = original
                else:
                    del target.generate  # the bound method of the object's class again

    ExactSyncVLLMGeneration.__qualname__ = f"ExactSync{generation_class.__qualname__}"
    return ExactSyncVLLMGeneration


SAMPLING_SENT = ("n", "temperature", "top_p", "top_k", "min_p", "repetition_penalty", "max_tokens", "seed",
                 "logit_bias", "bad_words", "allowed_token_ids", "generation_kwargs")


def sent_sampling(params: Any) -> dict[str, Any]:
    """The sampling fields of what TRL handed vLLM: a ``SamplingParams`` (colocate) or the server
    client's ``generate`` keywords; fields that are absent or None are left out."""
    get = params.get if isinstance(params, dict) else (lambda name: getattr(params, name, None))
    return {name: get(name) for name in SAMPLING_SENT if get(name) not in (None, {}, [])}


PLACEHOLDERS = ("image_token_id", "video_token_id", "audio_token_id")


def placeholder_ids(model) -> frozenset[int]:
    """The model's multimodal placeholder token ids (Gemma-4: image, video, audio; none for a text model).

    transformers' Gemma-4 forward replaces these ids with pad before embedding them, while vLLM
    embeds them as they are, so a completion that samples one is scored by the trainer for another
    input than the one vLLM generated from; the manifest counts them (``placeholder_tokens_sampled``)."""
    config = getattr(model, "config", None)
    return frozenset(v for v in (getattr(config, name, None) for name in PLACEHOLDERS) if isinstance(v, int))


def colocated_on_cpu() -> bool:
    """Whether the colocated vLLM engine runs on vLLM's CPU platform (its CPU build)."""
    from vllm.platforms import current_platform

    return current_platform.is_cpu()


def use_exact_sync(trainer) -> bool:
    """Make a TRL trainer's vLLM weight sync exact (see the module docstring); False when it does
    not generate with vLLM (plain generation reads the trained model itself)."""
    generation = getattr(trainer, "vllm_generation", None)
    if not getattr(trainer, "use_vllm", False) or generation is None:
        return False
    if not type(generation).__qualname__.startswith("ExactSync"):
        generation.__class__ = exact_sync_class(type(generation))
    return True
