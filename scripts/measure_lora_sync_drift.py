"""How far TRL's merge / stream / unmerge weight sync moves a bf16 base, and py4's exact sync.

    .venv/bin/python scripts/measure_lora_sync_drift.py [--size 4096] [--rank 64] [--walks 130]

One bf16 Linear layer of ``size``² with a LoRA of ``rank`` (alpha = 2·rank), its base weights
N(0, 0.02²) and its update scale·B·A about 3 % of the base's norm (an adapter after a warm
start); after each sync B changes by 1 % (a training step). The walks are TRL 1.16's own
``VLLMGeneration._iter_named_params`` (PEFT merges the bf16 delta into the base, then subtracts
it) and py4's override (``py4.train.weight_sync``). Printed per walk count: the base's drift
norm relative to the LoRA update's norm, and the share of base elements changed.
PEFT computes the delta in fp32 on the CPU and in bf16 on a GPU; either way the delta is a
bf16 tensor added to and subtracted from a bf16 base, where the rounding happens.
"""

from __future__ import annotations

import argparse
import time

import torch
from accelerate import Accelerator
from peft import LoraConfig, get_peft_model
from trl.distributed import DistributedBackend
from trl.generation.vllm_generation import VLLMGeneration

from py4.train.weight_sync import exact_sync_class


def build(size: int, rank: int):
    torch.manual_seed(0)
    layer = torch.nn.Sequential()
    layer.add_module("proj", torch.nn.Linear(size, size, bias=False))
    torch.nn.init.normal_(layer.proj.weight, std=0.02)
    model = get_peft_model(layer.to(torch.bfloat16), LoraConfig(r=rank, lora_alpha=2 * rank, target_modules=["proj"]))
    lora = model.base_model.model.proj
    torch.nn.init.normal_(lora.lora_A["default"].weight, std=size ** -0.5)
    base_norm = lora.base_layer.weight.float().norm()
    b = torch.randn(size, rank)
    delta = (b @ lora.lora_A["default"].weight.float()) * lora.scaling["default"]
    lora.lora_B["default"].weight.data = (b * (0.03 * base_norm / delta.norm())).to(torch.bfloat16)
    return model, lora


@torch.no_grad()
def walk_all(model, lora, cls, walks: int) -> tuple[float, float]:
    gen = object.__new__(cls)
    gen.model, gen.accelerator = model, Accelerator(cpu=True)
    gen._dist = DistributedBackend(gen.accelerator)
    w0 = lora.base_layer.weight.detach().clone()
    gen_b = torch.Generator().manual_seed(1)
    for i in range(walks):
        for _ in gen._iter_named_params():
            pass
        if i not in (0, walks // 2):  # a step after each sync; a segment's first sync walks twice
            b = lora.lora_B["default"].weight
            b.data = (b.float() * (1 + 0.01 * torch.randn(b.shape, generator=gen_b))).to(b.dtype)
    update = (lora.lora_B["default"].weight.float() @ lora.lora_A["default"].weight.float()) * lora.scaling["default"]
    moved = lora.base_layer.weight.float() - w0.float()
    return float(moved.norm() / update.norm()), float((moved != 0).float().mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--rank", type=int, default=64)
    parser.add_argument("--walks", type=int, default=130)
    args = parser.parse_args()
    for name, cls in (("TRL merge/unmerge", VLLMGeneration), ("py4 exact", exact_sync_class(VLLMGeneration))):
        model, lora = build(args.size, args.rank)
        t0 = time.monotonic()
        drift, changed = walk_all(model, lora, cls, args.walks)
        print(f"{name:18s} {args.size}² rank {args.rank}, {args.walks} walks: base drift / LoRA update norm "
              f"= {100 * drift:.2f} %, elements changed = {100 * changed:.2f} % ({time.monotonic() - t0:.0f} s)")


if __name__ == "__main__":
    main()
