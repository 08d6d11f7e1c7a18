"""FSDP2 under ``accelerate launch``: what the launch asked for, rank-0 loading, full-weight saves.

The campaign trains full-parameter stages with ``configs/accelerate/fsdp2.yaml`` (``--num_processes``:
the stage config's ``optimisation.gpus``).
``accelerate launch`` passes that file's settings to every process as environment variables
(``ACCELERATE_USE_FSDP``, ``FSDP_VERSION``, ``FSDP_STATE_DICT_TYPE``,
``FSDP_CPU_RAM_EFFICIENT_LOADING`` …); :func:`launch` reads them back. Three things here:

- **Loading once** (:func:`load_empty`, :func:`share_buffers_from_rank0`): with
  ``fsdp_cpu_ram_efficient_loading`` only global rank 0 reads the checkpoint; the other ranks
  build the model on the ``meta`` device from its config (no weights in host RAM), and
  accelerate's FSDP2 preparation broadcasts rank 0's weights shard by shard. transformers 5.24
  does not skip the read on the other ranks itself (its FSDP branch only fills the
  non-persistent buffers), so this module does. Non-persistent buffers (rotary frequencies,
  Gemma's embedding scale) are in no state dict and FSDP never broadcasts them: rank 0 sends
  its own.
- **Saving the final model** (:func:`gathered_state_dict`): FSDP2 with bf16 mixed precision
  keeps fp32 master weights, so a plain save writes fp32. The final model is gathered one
  tensor at a time and cast to the dtype of the checkpoint it started from on the way, so
  rank 0 never holds more than the model in its own dtype plus one fp32 tensor.
- **Resuming a sharded checkpoint** (:func:`load_sharded_optimizer`): a parameter that never
  had a gradient (Gemma-4's vision tower in text-only training) has no optimizer state in
  the checkpoint, but the fresh optimizer accelerate loads into has one for every parameter,
  and DCP's strict load then fails ("Missing key in checkpoint state_dict:
  optimizer.state.model.vision_tower…"). Those parameters keep their fresh (zero) state;
  every state the checkpoint holds is loaded strictly.
- **bf16 master weights** (:func:`keep_param_dtype`, ``optimisation.master_weights: bf16``):
  accelerate 1.16 upcasts every trainable parameter to fp32 before sharding whenever
  ``mixed_precision`` is not ``no`` (``fsdp_utils.fsdp2_prepare_model``, lines 800-806), so
  gradients and optimizer state are fp32 too: 10 bytes per parameter with AdamW 8-bit, which
  GLM-4.5-Air's 106.9 B parameters cannot fit on 8 H200s. axolotl's FSDP2 path replaces that
  function with one that has no upcast (``src/axolotl/monkeypatch/accelerate/fsdp2.py``,
  ``fsdp2_prepare_model``, installed by ``patch_accelerate_fsdp2``): parameters stay in the
  loaded bf16 while ``MixedPrecisionPolicy`` still computes in bf16. This does the same by
  letting accelerate's own function see ``mixed_precision == "no"`` for that one decision.
- **FSDP2 on a CPU** (:func:`enable_fsdp_on_cpu`): accelerate 1.16 turns an FSDP launch with
  ``use_cpu: true`` into plain multi-process CPU training (its FSDP switch is only on the GPU
  branch), so a CPU rehearsal of the campaign's FSDP2 configs would silently be DDP. This
  patches that one decision so the same FSDP2 path (``fully_shard`` over gloo, DTensor
  parameters, sharded checkpoints) runs on CPU processes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

__all__ = ["FsdpLaunch", "launch", "enable_fsdp_on_cpu", "load_empty", "share_buffers_from_rank0",
           "gathered_state_dict", "is_sharded_checkpointing", "load_sharded_optimizer",
           "install_sharded_optimizer_loading", "keep_param_dtype"]


def _flag(name: str) -> bool:
    return os.environ.get(name, "false").strip().lower() in ("1", "true", "yes")


@dataclass(frozen=True)
class FsdpLaunch:
    """The FSDP settings of this process's ``accelerate launch`` (all off outside one)."""

    enabled: bool
    version: int
    state_dict_type: str
    cpu_ram_efficient_loading: bool
    activation_checkpointing: bool
    rank: int
    world_size: int

    @property
    def loads_on_rank0_only(self) -> bool:
        """Only global rank 0 reads the weights; the others start on ``meta``."""
        return self.enabled and self.version == 2 and self.cpu_ram_efficient_loading and self.world_size > 1


def launch() -> FsdpLaunch:
    """What the accelerate launcher put in the environment of this process."""
    return FsdpLaunch(
        enabled=_flag("ACCELERATE_USE_FSDP"),
        version=int(os.environ.get("FSDP_VERSION", "1")),
        state_dict_type=os.environ.get("FSDP_STATE_DICT_TYPE", "FULL_STATE_DICT"),
        cpu_ram_efficient_loading=_flag("FSDP_CPU_RAM_EFFICIENT_LOADING"),
        activation_checkpointing=_flag("FSDP_ACTIVATION_CHECKPOINTING"),
        rank=int(os.environ.get("RANK", "0")),
        world_size=int(os.environ.get("WORLD_SIZE", "1")),
    )


def is_sharded_checkpointing(trainer) -> bool:
    """Whether the trainer's checkpoints are sharded (DCP) rather than full weights."""
    plugin = getattr(trainer.accelerator.state, "fsdp_plugin", None)
    return plugin is not None and "SHARDED_STATE_DICT" in str(plugin.state_dict_type)


_CPU_PATCHED = False


def enable_fsdp_on_cpu() -> bool:
    """Let an FSDP launch on CPU processes run FSDP2 instead of falling back to DDP.

    Only acts inside an FSDP launch on a machine without CUDA; idempotent. Returns whether
    the patch is in place. On a GPU node accelerate chooses FSDP itself and nothing changes.
    """
    global _CPU_PATCHED
    import torch

    fsdp = launch()
    if not fsdp.enabled or torch.cuda.is_available():
        return False
    if _CPU_PATCHED:
        return True
    from accelerate.state import AcceleratorState, PartialState
    from accelerate.utils import DistributedType

    original_init = AcceleratorState.__init__

    def init(self, *args, fsdp_plugin=None, **kwargs):
        original_init(self, *args, fsdp_plugin=fsdp_plugin, **kwargs)
        # accelerate's GPU branch does exactly this (state.py: distributed_type = FSDP,
        # set_mixed_precision, fsdp_plugin); its CPU branch skips it.
        if self.distributed_type == DistributedType.MULTI_CPU and fsdp_plugin is not None:
            self.distributed_type = DistributedType.FSDP
            if self._mixed_precision != "no":
                fsdp_plugin.set_mixed_precision(self._mixed_precision)
            self.fsdp_plugin = fsdp_plugin
            PartialState._shared_state["distributed_type"] = DistributedType.FSDP

    AcceleratorState.__init__ = init
    _CPU_PATCHED = True
    return True


def load_empty(path: str, hub_kwargs: dict[str, Any], dtype, attn_implementation: str):
    """The model of ``path`` built from its config on the ``meta`` device: shapes, no weights."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(path, **hub_kwargs)
    with torch.device("meta"):
        return AutoModelForCausalLM.from_config(config, dtype=dtype, attn_implementation=attn_implementation)


def _comm_device():
    import torch
    import torch.distributed as dist

    if dist.get_backend() == "gloo":
        return torch.device("cpu")
    return torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))


def share_buffers_from_rank0(model) -> int:
    """Broadcast rank 0's non-persistent buffers into every rank's model; returns how many.

    Collective: every rank calls it with the same model class. Raises RuntimeError when a
    rank's buffers differ in name, shape or dtype from rank 0's (a different model).
    """
    import torch
    import torch.distributed as dist

    device = _comm_device()
    buffers = sorted(model.named_non_persistent_buffers(), key=lambda item: item[0])
    layout = [(name, tuple(buf.shape), str(buf.dtype)) for name, buf in buffers]
    layouts: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(layouts, layout)
    if any(other != layouts[0] for other in layouts):
        raise RuntimeError(f"non-persistent buffers differ between ranks: rank 0 {layouts[0]} vs {layout}")
    for name, buf in buffers:
        if dist.get_rank() == 0:
            tensor = buf.detach().to(device).contiguous()
        else:
            tensor = torch.empty(buf.shape, dtype=buf.dtype, device=device)
        dist.broadcast(tensor, src=0)
        owner_name, _, local = name.rpartition(".")
        owner = model.get_submodule(owner_name) if owner_name else model
        owner._buffers[local] = tensor.to("cpu")  # still non-persistent: that set is keyed by name
    return len(buffers)


def gathered_state_dict(model, dtype, is_main_process: bool, keep=None) -> dict[str, Any]:
    """The full state dict of an FSDP2 model, each floating tensor cast to ``dtype`` (None: as is).

    ``keep(name)``, when given, selects the tensors to gather (e.g. a LoRA adapter's).
    Collective (every rank must call it): each sharded tensor is all-gathered in turn; rank 0
    keeps it on CPU in ``dtype``, the others drop it at once (they return an empty dict).
    Tied parameters stay one tensor, so ``save_pretrained`` still sees them as tied.
    """
    from torch.distributed.tensor import DTensor

    full: dict[str, Any] = {}
    seen: dict[int, Any] = {}
    # keep_vars: tied parameters come back as the same object (detached copies would not).
    for name, tensor in model.state_dict(keep_vars=True).items():
        if keep is not None and not keep(name):
            continue
        key = id(tensor)
        if key not in seen:
            value = tensor.full_tensor() if isinstance(tensor, DTensor) else tensor
            if is_main_process:
                value = value.detach().to("cpu")
                seen[key] = value.to(dtype) if (dtype is not None and value.is_floating_point()) else value
            else:
                seen[key] = None
            del value
        if is_main_process:
            full[name] = seen[key]
    return full


def load_sharded_optimizer(fsdp_plugin, accelerator, optimizer, model, input_dir, optimizer_index=0,
                           adapter_only=False, use_dcp=True):
    """accelerate's ``load_fsdp_optimizer``, except that FSDP2 DCP checkpoints may lack the
    state of parameters that never had a gradient (they keep the fresh optimizer's state).

    Other layouts (FULL_STATE_DICT, FSDP1, per-rank files) go to accelerate unchanged.
    """
    from pathlib import Path

    from accelerate.utils import fsdp_utils

    sharded = "SHARDED_STATE_DICT" in str(fsdp_plugin.state_dict_type)
    # (transformers always passes adapter_only=True; the DCP optimizer branch ignores it)
    if not (fsdp_plugin.fsdp_version == 2 and sharded and use_dcp):
        return _ACCELERATE_LOAD_OPTIMIZER(fsdp_plugin, accelerator, optimizer, model, input_dir,
                                          optimizer_index=optimizer_index, adapter_only=adapter_only, use_dcp=use_dcp)
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.default_planner import DefaultLoadPlanner
    from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict, set_optimizer_state_dict

    accelerator.wait_for_everyone()
    folder = Path(input_dir)
    name = f"{fsdp_utils.OPTIMIZER_NAME}_{optimizer_index}"
    folder = folder if folder.name == name else folder / name
    options = fsdp_utils._prepare_sd_options(fsdp_plugin)
    optim = fsdp_utils._unwrap_optimizer(optimizer)
    state = get_optimizer_state_dict(model, optim, options=options)  # a fresh state for every parameter
    reader = dcp.FileSystemReader(str(folder))
    prefix = "optimizer.state."  # keys read optimizer.state.<parameter fqn>.<state name>
    saved = {key[len(prefix):].rsplit(".", 1)[0] for key in reader.read_metadata().state_dict_metadata
             if key.startswith(prefix)}
    kept = {fqn: value for fqn, value in state["state"].items() if fqn not in saved}
    wanted = {**state, "state": {fqn: v for fqn, v in state["state"].items() if fqn not in kept}}
    loaded = {"optimizer": wanted}
    dcp.load(state_dict=loaded, storage_reader=reader, planner=DefaultLoadPlanner())  # strict for the rest
    merged = {**loaded["optimizer"], "state": {**loaded["optimizer"]["state"], **kept}}
    set_optimizer_state_dict(model, optim, merged, options=options)
    accelerator.wait_for_everyone()


_ACCELERATE_LOAD_OPTIMIZER = None


def install_sharded_optimizer_loading() -> None:
    """Make the Trainer resume sharded FSDP2 checkpoints with :func:`load_sharded_optimizer`.

    transformers' Trainer calls ``load_fsdp_optimizer`` through its module namespace; this
    points that name here (idempotent). Nothing changes for other checkpoint layouts.
    """
    global _ACCELERATE_LOAD_OPTIMIZER
    import transformers.trainer as trainer_module

    if _ACCELERATE_LOAD_OPTIMIZER is None:
        _ACCELERATE_LOAD_OPTIMIZER = trainer_module.load_fsdp_optimizer
    trainer_module.load_fsdp_optimizer = load_sharded_optimizer


class _NoUpcast:
    """An Accelerator seen by ``fsdp2_prepare_model`` with ``mixed_precision`` ``no``: its only use
    there is the fp32 upcast; the FSDP plugin's MixedPrecisionPolicy (bf16 compute) is untouched."""

    def __init__(self, accelerator):
        object.__setattr__(self, "_accelerator", accelerator)

    mixed_precision = "no"

    def __getattr__(self, name):
        return getattr(self._accelerator, name)

    def __setattr__(self, name, value):
        setattr(self._accelerator, name, value)


_PREPARE = None


def keep_param_dtype() -> None:
    """Make accelerate's FSDP2 preparation keep trainable parameters in their loaded dtype (idempotent)."""
    global _PREPARE
    import accelerate.accelerator as accelerator_module

    if _PREPARE is not None:
        return
    _PREPARE = accelerator_module.fsdp2_prepare_model

    def prepare(accelerator, model):
        return _PREPARE(_NoUpcast(accelerator), model)

    accelerator_module.fsdp2_prepare_model = prepare
