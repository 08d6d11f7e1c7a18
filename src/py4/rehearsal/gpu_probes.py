"""The GPU check's measurements that need no project stage: real-width layers and the LoRA sync drift.

- :func:`layer_probe`: a causal LM of the real architecture with the real widths (hidden size,
  heads and KV heads per layer type, head dims sliding and global, the real embedding and LM
  head rows) but only a few decoder layers, one training step (forward, loss, backward) at the
  campaign's sequence length. Hooks on the decoder layers and the final norm split the step into
  phases (embedding, each layer forward and backward, the logits and loss forward and backward),
  each with its seconds and its peak memory above what was allocated before the step; the same
  step again under each of PyTorch's SDPA backends alone says which kernels can run these head
  dims, and the profiler says which ran by default. From the per-layer seconds the probe
  extrapolates a whole model's step on one GPU (compute only: no FSDP communication, no optimizer).
- :func:`lora_drift_probe`: PEFT's merge/unmerge cycle (what TRL does around every weight sync to
  vLLM) on a real-width bf16 projection, against the exact sync of ``py4.train.weight_sync``
  (``W + scale·B·A`` in fp32 into a fresh tensor, cast once), both checked against an fp64
  reference.

Both run on the CPU at tiny sizes (the tests) and on a GPU at the real ones; nothing here reads
weights: every tensor is randomly initialised.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

GIB = 2**30


@dataclass(frozen=True)
class LayerProbeSpec:
    """One layer probe: a transformers config built from ``fields``, run at ``tokens`` per step."""

    name: str
    config_class: str
    fields: dict[str, Any]
    tokens: int
    real_layer_counts: dict[str, int]
    """Decoder layers per layer type in the real model (the extrapolation's multipliers)."""
    source: str


def _sync() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _peak_and_reset() -> int | None:
    import torch

    if not torch.cuda.is_available():
        return None
    peak = torch.cuda.max_memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    return peak


def _allocated() -> int | None:
    import torch

    return torch.cuda.memory_allocated() if torch.cuda.is_available() else None


class PhaseClock:
    """Marks on the forward and backward pass: per phase (name, seconds since the last mark, peak
    allocated since it, allocated at the last mark, allocated now)."""

    def __init__(self) -> None:
        self.marks: list[tuple[str, float, int | None, int | None, int | None]] = []
        self._last = time.perf_counter()
        self._allocated: int | None = None
        self.start_allocated: int | None = None

    def start(self) -> None:
        _sync()
        _peak_and_reset()
        self._last = time.perf_counter()
        self._allocated = self.start_allocated = _allocated()
        self.marks = []

    def mark(self, name: str) -> None:
        _sync()
        now = time.perf_counter()
        allocated = _allocated()
        self.marks.append((name, now - self._last, _peak_and_reset(), self._allocated, allocated))
        self._last, self._allocated = now, allocated

    def seconds(self) -> float:
        return sum(mark[1] for mark in self.marks)

    def peak_above_start_gib(self) -> float | None:
        """The step's peak over what was allocated when it started (the phases' peaks together)."""
        peaks = [mark[2] for mark in self.marks if mark[2] is not None]
        if not peaks or self.start_allocated is None:
            return None
        return round((max(peaks) - self.start_allocated) / GIB, 3)


def _hidden_of(args: tuple, kwargs: dict):
    return args[0] if args else kwargs.get("hidden_states")


def instrument(model, clock: PhaseClock) -> list:
    """Forward pre-hooks on each decoder layer and the final norm, and gradient hooks on their inputs.

    Phase names: ``embed_fwd``, ``layer<i>_fwd``, ``head_fwd`` (norm, logits, loss; marked by the
    caller after the forward), ``head_bwd``, ``layer<i>_bwd``, ``embed_bwd`` (marked by the caller).
    Returns the hook handles."""
    layers = list(model.model.layers)
    handles = []

    def layer_pre(index):
        def hook(module, args, kwargs):
            clock.mark("embed_fwd" if index == 0 else f"layer{index - 1}_fwd")
            hidden = _hidden_of(args, kwargs)
            if hidden is not None and hidden.requires_grad:
                # the gradient of this layer's input is ready once the layer's backward is done
                hidden.register_hook(lambda grad: clock.mark(f"layer{index}_bwd"))
        return hook

    def norm_pre(module, args, kwargs):
        clock.mark(f"layer{len(layers) - 1}_fwd")
        hidden = _hidden_of(args, kwargs)
        if hidden is not None and hidden.requires_grad:
            hidden.register_hook(lambda grad: clock.mark("head_bwd"))

    for index, layer in enumerate(layers):
        handles.append(layer.register_forward_pre_hook(layer_pre(index), with_kwargs=True))
    handles.append(model.model.norm.register_forward_pre_hook(norm_pre, with_kwargs=True))
    return handles


def _train_step(model, ids, clock: PhaseClock | None = None) -> float:
    clock = clock or PhaseClock()
    clock.start()
    out = model(input_ids=ids, labels=ids, use_cache=False)
    clock.mark("head_fwd")
    out.loss.backward()
    clock.mark("embed_bwd")
    loss = float(out.loss.detach())
    model.zero_grad(set_to_none=False)
    return loss


def _sdpa_ops(model, ids) -> dict[str, list[list[int]]]:
    """{scaled-dot-product op name: the query shapes it ran on} in one forward + backward (profiler)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
    with profile(activities=activities, record_shapes=True) as prof:
        out = model(input_ids=ids, labels=ids, use_cache=False)
        out.loss.backward()
        _sync()
    model.zero_grad(set_to_none=False)
    ops: dict[str, list[list[int]]] = {}
    for event in prof.events():
        if "scaled_dot_product" in event.name or "attention" in event.name.split("::")[-1]:
            if not event.name.startswith("aten::"):
                continue
            shapes = getattr(event, "input_shapes", None) or []
            query = list(shapes[0]) if shapes and shapes[0] else []
            ops.setdefault(event.name, [])
            if query and query not in ops[event.name]:
                ops[event.name].append(query)
    return ops


def _backend_trials(model, ids) -> dict[str, dict[str, Any]]:
    """The step under each SDPA backend alone: whether it runs these shapes, and its seconds."""
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    names = ["FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH"]
    if not torch.cuda.is_available():
        names = ["FLASH_ATTENTION", "MATH"]
    trials: dict[str, dict[str, Any]] = {}
    for name in names:
        backend = getattr(SDPBackend, name, None)
        if backend is None:
            continue
        try:
            with sdpa_kernel([backend]):
                _train_step(model, ids)  # warm-up (kernel selection, autotuning)
                clock = PhaseClock()
                _train_step(model, ids, clock)
            trials[name] = {"ran": True, "seconds": round(clock.seconds(), 4)}
        except Exception as exc:  # noqa: BLE001 — a backend that refuses the shapes is the finding
            trials[name] = {"ran": False, "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"}
        finally:
            model.zero_grad(set_to_none=False)
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
    return trials


def _gib(value: int | None) -> float | None:
    return None if value is None else round(value / GIB, 3)


def _phases(clock: PhaseClock, base: int | None) -> dict[str, dict[str, float | None]]:
    """Per phase: seconds; its peak above the step's start (``base``: weights and gradients) and above
    what was allocated when the phase began (the phase's own transient); what it left allocated."""
    phases = {}
    for name, seconds, peak, before, after in clock.marks:
        known = peak is not None and base is not None and before is not None and after is not None
        phases[name] = {"seconds": round(seconds, 5),
                        "peak_above_start_gib": _gib(peak - base) if known else None,
                        "peak_above_phase_start_gib": _gib(peak - before) if known else None,
                        "allocated_change_gib": _gib(after - before) if known else None}
    return phases


def _summary(spec: LayerProbeSpec, layer_types: list[str], phases: dict, tokens: int) -> dict[str, Any]:
    """Per layer type: seconds and peak; the logits/loss part; the whole model's step extrapolated."""
    def most(*values):
        known = [v for v in values if v is not None]
        return max(known) if known else None

    per_type: dict[str, dict[str, float | None]] = {}
    for index, kind in enumerate(layer_types):
        fwd, bwd = phases.get(f"layer{index}_fwd"), phases.get(f"layer{index}_bwd")
        if fwd is None or bwd is None:
            continue
        per_type[kind] = {"fwd_s": fwd["seconds"], "bwd_s": bwd["seconds"],
                          "tokens_per_s": round(tokens / max(fwd["seconds"] + bwd["seconds"], 1e-9), 1),
                          "peak_above_start_gib": most(fwd["peak_above_start_gib"], bwd["peak_above_start_gib"]),
                          # what the layer alone adds: its saved activations, and its transient on top of
                          # what was live when its forward or backward began
                          "saved_activations_gib": fwd["allocated_change_gib"],
                          "own_peak_gib": most(fwd["peak_above_phase_start_gib"], bwd["peak_above_phase_start_gib"])}
    head_f, head_b = phases["head_fwd"], phases["head_bwd"]
    embed = phases["embed_fwd"]["seconds"] + phases["embed_bwd"]["seconds"]
    head_s = head_f["seconds"] + head_b["seconds"]
    layers_s = sum(count * (per_type[kind]["fwd_s"] + per_type[kind]["bwd_s"])
                   for kind, count in spec.real_layer_counts.items() if kind in per_type)
    recompute_s = sum(count * per_type[kind]["fwd_s"]
                      for kind, count in spec.real_layer_counts.items() if kind in per_type)
    whole = embed + head_s + layers_s
    return {
        "per_layer_type": per_type,
        "logits_loss": {"fwd_s": head_f["seconds"], "bwd_s": head_b["seconds"],
                        "peak_above_start_gib": most(head_f["peak_above_start_gib"], head_b["peak_above_start_gib"]),
                        "own_peak_gib": most(head_f["peak_above_phase_start_gib"],
                                             head_b["peak_above_phase_start_gib"])},
        "model_step_estimate": {
            "layers": spec.real_layer_counts, "seconds": round(whole, 4),
            "tokens_per_s": round(tokens / max(whole, 1e-9), 1),
            "seconds_with_activation_checkpointing": round(whole + recompute_s, 4),
            "tokens_per_s_with_activation_checkpointing": round(tokens / max(whole + recompute_s, 1e-9), 1),
            "note": "one GPU, compute only: real layer counts x measured per-layer seconds + embedding and "
                    "logits/loss; no FSDP communication, no optimizer step",
        },
    }


def layer_probe(spec: LayerProbeSpec, seed: int = 0) -> dict[str, Any]:
    """Build ``spec``'s model (bf16 on a GPU, fp32 on the CPU), measure one training step by phase."""
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    on_gpu = torch.cuda.is_available()
    device = torch.device("cuda" if on_gpu else "cpu")
    dtype = torch.bfloat16 if on_gpu else torch.float32
    config = getattr(transformers, spec.config_class)(**spec.fields)
    torch.manual_seed(seed)
    t0 = time.monotonic()
    with device:
        model = AutoModelForCausalLM.from_config(config, dtype=dtype)
    model.train()
    build_s = time.monotonic() - t0
    weights = _allocated()
    parameters = sum(p.numel() for p in model.parameters())
    ids = torch.randint(0, config.vocab_size, (1, spec.tokens), generator=torch.Generator().manual_seed(seed))
    ids = ids.to(device)
    layer_types = list(getattr(config, "layer_types", None) or ["decoder"] * config.num_hidden_layers)
    if spec.config_class == "Glm4MoeConfig":
        layer_types = ["dense" if i < config.first_k_dense_replace else "moe" for i in range(config.num_hidden_layers)]

    loss = _train_step(model, ids)  # warm-up: allocates the gradients, picks the kernels
    weights_and_grads = _allocated()
    clock = PhaseClock()
    handles = instrument(model, clock)
    try:
        loss = _train_step(model, ids, clock)
    finally:
        for handle in handles:
            handle.remove()
    phases = _phases(clock, weights_and_grads)
    facts: dict[str, Any] = {
        "model": spec.name, "class": type(model).__name__, "source": spec.source, "tokens": spec.tokens,
        "dtype": str(dtype).removeprefix("torch."), "device": torch.cuda.get_device_name() if on_gpu else "cpu",
        "transformers": transformers.__version__, "torch": torch.__version__,
        "layer_types": layer_types, "parameters": parameters, "build_s": round(build_s, 2), "loss": round(loss, 4),
        "attn_implementation": getattr(config, "_attn_implementation", None),
        "experts_implementation": getattr(config, "_experts_implementation", None),
        "gpu_total_bytes": torch.cuda.get_device_properties(0).total_memory if on_gpu else None,
        "weights_gib": None if weights is None else round(weights / GIB, 3),
        "weights_and_grads_gib": None if weights_and_grads is None else round(weights_and_grads / GIB, 3),
        "phases": phases,
    }
    facts.update(_summary(spec, layer_types, phases, spec.tokens))
    facts["step_peak_above_start_gib"] = clock.peak_above_start_gib()
    facts["sdpa_ops_default"] = _sdpa_ops(model, ids) if any("attention" in t for t in layer_types) else {}
    if any("attention" in t for t in layer_types):
        facts["sdpa_backends_alone"] = _backend_trials(model, ids)
    # With transformers' gradient checkpointing (non-reentrant, as FSDP's checkpoint_wrapper): the peak
    # a checkpointed step reaches with these layers.
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    checkpointed = PhaseClock()
    _train_step(model, ids, checkpointed)
    facts["checkpointed_step"] = {"seconds": round(checkpointed.seconds(), 4),
                                  "peak_above_start_gib": checkpointed.peak_above_start_gib()}
    return facts


# --- the probes' specifications ------------------------------------------------------------------

def gemma4_31b_spec(tiny: bool) -> LayerProbeSpec:
    """Gemma-4 31B: one sliding and one full-attention layer at the real widths, 8,192 tokens."""
    from py4.train.model_shape import PINNED_CONFIGS

    pinned = PINNED_CONFIGS["google/gemma-4-31B-it"]
    text = dict(pinned["config"]["text_config"])
    text.pop("model_type", None)
    real = {kind: text["layer_types"].count(kind) for kind in ("sliding_attention", "full_attention")}
    text.update(num_hidden_layers=2, layer_types=["sliding_attention", "full_attention"],
                vocab_size_per_layer_input=text["vocab_size"])
    tokens = 8192
    if tiny:
        text.update(hidden_size=64, intermediate_size=128, num_attention_heads=2, num_key_value_heads=2,
                    num_global_key_value_heads=1, head_dim=32, global_head_dim=64, vocab_size=1024,
                    vocab_size_per_layer_input=1024, sliding_window=16)
        tokens = 64
    return LayerProbeSpec("gemma4_31b", "Gemma4TextConfig", text, tokens, real, pinned["source"])


def glm45_moe_spec(tiny: bool) -> LayerProbeSpec:
    """GLM-4.5-Air: one MoE layer (128 routed experts, top 8, one shared) and the 151,552-row head."""
    from py4.train.model_shape import PINNED_CONFIGS

    pinned = PINNED_CONFIGS["zai-org/GLM-4.5-Air"]
    fields = dict(pinned["config"])
    for key in ("model_type", "architectures"):
        fields.pop(key, None)
    real_layers = fields["num_hidden_layers"]
    dense = fields["first_k_dense_replace"]
    real = {"dense": dense, "moe": real_layers - dense}
    fields.update(num_hidden_layers=1, first_k_dense_replace=0)
    tokens = 8192
    if tiny:
        fields.update(hidden_size=64, intermediate_size=128, moe_intermediate_size=32, num_attention_heads=4,
                      num_key_value_heads=2, head_dim=16, n_routed_experts=8, num_experts_per_tok=2,
                      vocab_size=1024)
        tokens = 64
    return LayerProbeSpec("glm45_air", "Glm4MoeConfig", fields, tokens, real, pinned["source"])


# --- LoRA merge/unmerge drift --------------------------------------------------------------------

def _ulp_bf16(x):
    """The spacing of bf16 values at |x| (2^(exponent − 7)), as float64."""
    import torch

    mag = x.abs().double().clamp_min(2.0**-126)
    return torch.exp2(torch.floor(torch.log2(mag)) - 7)


def lora_drift_probe(width: int = 4096, rank: int = 64, alpha: int = 128, cycles: int = 130,
                     seed: int = 0) -> dict[str, Any]:
    """``cycles`` weight syncs of a rank-``rank`` LoRA on a ``width``² bf16 projection, two ways.

    Each cycle first moves A and B as an optimizer step would (a small seeded update), then
    syncs: PEFT's ``merge_adapter``/``unmerge_adapter`` (TRL 1.16's walk: ``W += d`` then
    ``W -= d`` in bf16), and separately ``py4.train.weight_sync.merged_lora_tensor`` on an
    untouched copy. Reported: how far PEFT's base moved from the original after all cycles,
    and each method's merged weight of the last cycle against the fp64 value ``W + scale·B·A``
    rounded once to bf16 (in units of bf16's spacing)."""
    import torch
    from peft import LoraConfig, get_peft_model

    from py4.train.weight_sync import merged_lora_tensor

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    generator = torch.Generator(device="cpu").manual_seed(seed)

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(width, width, bias=False)

    def build():
        block = Block()
        with torch.no_grad():
            block.proj.weight.copy_(torch.randn(width, width, generator=generator) * 0.02)
        block = block.to(device=device, dtype=torch.bfloat16)
        return get_peft_model(block, LoraConfig(r=rank, lora_alpha=alpha, lora_dropout=0.0,
                                                target_modules=["proj"]))

    peft_model = build()
    layer = peft_model.base_model.model.proj
    original = layer.base_layer.weight.detach().clone()
    with torch.no_grad():  # a trained adapter: B no longer zero
        layer.lora_B["default"].weight.copy_(
            (torch.randn(width, rank, generator=generator) * 0.01).to(layer.lora_B["default"].weight))
    scale = layer.scaling["default"]
    t0 = time.monotonic()
    exact_changed_base = False
    peft_last = exact_last = None
    for _ in range(cycles):
        with torch.no_grad():
            for p in (layer.lora_A["default"].weight, layer.lora_B["default"].weight):
                p.add_((torch.randn(p.shape, generator=generator) * 1e-4).to(p))
        # the exact sync first, while the base is what PEFT's cycles have left it: it must not write
        before = layer.base_layer.weight.detach().clone()
        exact_last = merged_lora_tensor(layer, "weight", layer.base_layer.weight)
        exact_changed_base |= not torch.equal(before, layer.base_layer.weight)
        exact_reference_base = before
        peft_model.merge_adapter()
        peft_last = layer.base_layer.weight.detach().clone()
        peft_model.unmerge_adapter()
    _sync()
    seconds = time.monotonic() - t0
    with torch.no_grad():
        drift = layer.base_layer.weight.double() - original.double()
        a = layer.lora_A["default"].weight.double()
        b = layer.lora_B["default"].weight.double()
        delta = scale * (b @ a)
        # fp64 references: the merge of the original base (what PEFT should send) and the merge of the
        # base the exact sync read in the last cycle (what it should send). Errors are counted in bf16
        # spacings at the magnitude the arithmetic worked at (the larger of |W|, |delta|, |W + delta|):
        # a rounding step at that magnitude is what one bf16 add or subtract can lose.
        peft_reference = original.double() + delta
        exact_reference = exact_reference_base.double() + delta
        scale_peft = _ulp_bf16(torch.maximum(torch.maximum(original.double().abs(), delta.abs()), peft_reference.abs()))
        peft_err = (peft_last.double() - peft_reference).abs() / scale_peft
        # the exact sync is one rounding of the fp32 sum: half a spacing of the result, except where
        # W + delta nearly cancels and fp32's accumulation error is large next to the result's spacing;
        # at the working magnitude (as for PEFT) it stays within half a spacing
        exact_abs = (exact_last.double() - exact_reference).abs()
        exact_err = exact_abs / _ulp_bf16(exact_reference)
        scale_exact = _ulp_bf16(torch.maximum(torch.maximum(exact_reference_base.double().abs(), delta.abs()),
                                              exact_reference.abs()))
        exact_err_working = exact_abs / scale_exact
        drift_ulps = drift.abs() / _ulp_bf16(torch.maximum(original.double().abs(), peft_reference.abs()))
    return {
        "width": width, "rank": rank, "alpha": alpha, "scale": scale, "cycles": cycles,
        "device": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
        "base_dtype": str(original.dtype).removeprefix("torch."),
        "adapter_dtype": str(layer.lora_A["default"].weight.dtype).removeprefix("torch."),
        "seconds": round(seconds, 3),
        "peft_merge_unmerge": {
            "base_elements_moved": int((drift != 0).sum()), "base_elements": drift.numel(),
            "base_max_abs_drift": float(drift.abs().max()),
            "base_mean_abs_drift": float(drift.abs().mean()),
            "base_relative_fro_drift": float(drift.norm() / original.double().norm()),
            "base_max_drift_in_ulps": float(drift_ulps.max()),
            "base_mean_drift_in_ulps": float(drift_ulps.mean()),
            "last_merged_max_err_ulps_vs_fp64_of_original_base": float(peft_err.max()),
            "last_merged_mean_err_ulps_vs_fp64_of_original_base": float(peft_err.mean()),
        },
        "exact_fp32_cast_once": {
            "wrote_base": exact_changed_base,
            "last_merged_max_err_ulps_vs_fp64": float(exact_err.max()),
            "last_merged_elements_off_by_one_ulp_or_more": int((exact_err >= 1.0).sum()),
            "last_merged_max_err_ulps_at_working_magnitude": float(exact_err_working.max()),
        },
    }
