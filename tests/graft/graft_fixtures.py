"""Tiny random checkpoints in the Hugging Face layout, for the graft tests."""

from __future__ import annotations

import json
import random
from pathlib import Path

import torch
from safetensors.torch import save_file

from py4.graft.config import GraftConfig

SHAPES = {
    "model.embed_tokens.weight": (32, 16),
    "model.norm.weight": (16,),
    "model.layers.0.input_layernorm.weight": (16,),
    "model.layers.0.self_attn.q_proj.weight": (16, 16),
    "model.layers.0.mlp.up_proj.weight": (24, 16),
    "model.layers.1.input_layernorm.weight": (16,),
    "model.layers.1.self_attn.q_proj.weight": (16, 16),
    "model.layers.1.mlp.up_proj.weight": (24, 16),
    "model.layers.10.mlp.down_proj.weight": (16, 24),
    "lm_head.weight": (32, 16),
}


def random_weights(seed: int, dtype=torch.bfloat16, shapes=SHAPES) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return {name: torch.randn(shape, generator=g).to(dtype) for name, shape in shapes.items()}


def related_triple(dtype=torch.bfloat16, shapes=SHAPES) -> dict[str, dict[str, torch.Tensor]]:
    """base, it = base + a chat delta, mid = base + a midtraining delta."""
    base = random_weights(0, torch.float32, shapes)
    it = {k: v + 0.05 * random_weights(1, torch.float32, shapes)[k] for k, v in base.items()}
    mid = {k: v + 0.05 * random_weights(2, torch.float32, shapes)[k] for k, v in base.items()}
    return {role: {k: v.to(dtype) for k, v in w.items()} for role, w in {"mid": mid, "it": it, "base": base}.items()}


def write_checkpoint(folder: Path, tensors: dict[str, torch.Tensor], *, shards: int = 1, seed: int = 0,
                     role: str = "model", index_single: bool = False) -> Path:
    """Save ``tensors`` like save_pretrained does; ``shards > 1`` partitions names at random."""
    folder.mkdir(parents=True, exist_ok=True)
    names = list(tensors)
    random.Random(seed).shuffle(names)
    if shards == 1 and not index_single:
        save_file(dict(tensors), folder / "model.safetensors", metadata={"format": "pt"})
    else:
        groups = [names[i::shards] for i in range(shards)]
        weight_map = {}
        for i, group in enumerate(groups, start=1):
            file = f"model-{i:05d}-of-{shards:05d}.safetensors"
            save_file({n: tensors[n] for n in group}, folder / file, metadata={"format": "pt"})
            weight_map.update({n: file for n in group})
        total = sum(t.numel() * t.element_size() for t in tensors.values())
        (folder / "model.safetensors.index.json").write_text(
            json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}))
    (folder / "config.json").write_text(json.dumps({"model_type": "tiny", "made_for": role}))
    (folder / "generation_config.json").write_text(json.dumps({"do_sample": False, "role": role}))
    (folder / "tokenizer_config.json").write_text(json.dumps({"role": role}))
    (folder / "tokenizer.json").write_text(json.dumps({"version": "1.0", "role": role}))
    (folder / "chat_template.jinja").write_text(f"{{# {role} template #}}{{{{ messages }}}}")
    return folder


def write_triple(root: Path, triple: dict[str, dict[str, torch.Tensor]],
                 shards: dict[str, int] | None = None) -> dict[str, Path]:
    shards = shards or {}
    return {role: write_checkpoint(root / role, w, shards=shards.get(role, 1), seed=i, role=role)
            for i, (role, w) in enumerate(triple.items())}


def graft_config(dirs: dict[str, Path], out: Path, **fields) -> GraftConfig:
    data = {"mid": str(dirs["mid"]), "it": str(dirs["it"]), "base": str(dirs["base"]), "out": str(out),
            "fsync": False, "verify_sample": 4}
    data.update(fields)
    return GraftConfig.model_validate(data)


def load_output(out: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    index = json.loads((out / "model.safetensors.index.json").read_text())
    tensors = {}
    for file in sorted(set(index["weight_map"].values())):
        tensors.update(load_file(out / file))
    assert set(tensors) == set(index["weight_map"])
    return tensors
