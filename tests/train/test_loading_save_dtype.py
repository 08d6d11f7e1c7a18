"""A full-parameter stage saves its model in the source checkpoint's dtype, launched or not.

On one process (no accelerate launch) a bf16 checkpoint trains in float32 on CPU; its final
model must still be bf16, with the same tensors as the source (tied embeddings saved once),
so that the graft (``mismatch.dtype: error``) reads it. The FSDP2 launch is in
test_fsdp2_training.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.smoke


def _tensors(folder: Path) -> dict:
    from safetensors.torch import load_file

    out = {}
    for shard in sorted(folder.glob("*.safetensors")):
        out.update(load_file(shard))
    return out


def test_single_process_midtrain_saves_bf16_like_its_source(tmp_path):
    sys.path.insert(0, str(Path(__file__).parent))
    from train_helpers import pack_text

    from py4.config import validate_config
    from py4.rehearsal.standins import build_standin
    from py4.train import loading, midtrain

    standin = build_standin("gemma4", "base", tmp_path / "gemma4-base", seed=0)
    docs = [("def f%d(x):\n    return x + %d\n" % (i, i)) * 20 for i in range(6)]
    data = pack_text(tmp_path / "data", standin, docs, seq_len=64, micro_batch=1, warmup=0.25)
    config = validate_config(midtrain.MidtrainConfig, {
        "model": {"path": str(standin)}, "data": {"path": str(data)},
        "optimisation": {"max_steps": 2, "learning_rate": 1e-3, "optim": "adamw_torch", "warmup": 0},
        "run": {"output_dir": str(tmp_path / "run"), "report_to": [], "progress_bar": False, "save_steps": 100},
    })
    assert loading.torch_dtype(config.model, loading.device_settings()) == torch.float32  # trains in fp32 here
    midtrain.run(config)

    source, saved = _tensors(standin), _tensors(tmp_path / "run" / "model")
    assert set(saved) == set(source)  # the tied lm_head is not saved as a second tensor
    assert all(saved[name].dtype == source[name].dtype == torch.bfloat16 for name in saved)
    language = [n for n in source if ".language_model." in n and n.endswith("proj.weight")]
    assert language and not [n for n in language if torch.equal(source[n], saved[n])]
    config_json = json.loads((tmp_path / "run" / "model" / "config.json").read_text())
    assert config_json["dtype"] == "bfloat16" and config_json["text_config"]["dtype"] == "bfloat16"
    manifest = json.loads((tmp_path / "run" / "run_manifest.json").read_text())
    assert manifest["saved_model"] == {"saved_dtype": "bfloat16", "source_dtype": "bfloat16"}
    assert manifest["loading"]["weights_read_by"] == "every process"
