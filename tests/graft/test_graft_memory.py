"""The graft streams: its memory does not grow with the size of a tensor."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch
from safetensors.torch import save_file

from graft_fixtures import graft_config

_CHILD = """
import json, sys
from py4.graft import GraftConfig, run

def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024

before = hwm()
run(GraftConfig.model_validate_json(sys.argv[1]), show_progress=False)
print(json.dumps({"before": before, "after": hwm()}))
"""


@pytest.mark.slow
def test_peak_memory_is_a_fraction_of_the_largest_tensor(tmp_path):
    numel = 128 * 2**20  # 256 MB in bf16 per input
    dirs = {}
    for seed, role in enumerate(("mid", "it", "base")):
        g = torch.Generator().manual_seed(seed)
        dirs[role] = tmp_path / role
        dirs[role].mkdir()
        save_file({"model.embed_tokens.weight": torch.randn(numel // 2048, 2048, generator=g).to(torch.bfloat16),
                   "model.norm.weight": torch.ones(2048, dtype=torch.bfloat16)},
                  dirs[role] / "model.safetensors", metadata={"format": "pt"})
        (dirs[role] / "config.json").write_text("{}")
    config = graft_config(dirs, tmp_path / "out", verify_sample=0, input_hashes="metadata")
    proc = subprocess.run([sys.executable, "-c", _CHILD, config.model_dump_json()], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    marks = json.loads(proc.stdout.strip().splitlines()[-1])
    growth = marks["after"] - marks["before"]
    largest = numel * 2
    assert growth < largest / 2, f"the graft grew by {growth / 2**20:.0f} MiB for a {largest / 2**20:.0f} MiB tensor"
