"""``.venv-vllm``'s torchvision is the one scripts/cpu_torchvision.py writes, and what Gemma-4 needs of it imports.

vLLM's multimodal Gemma-4 classes (``gemma4_mm`` for the 31B, ``gemma4_unified`` for the 12B)
import transformers' Gemma-4 processors, whose image and video processors import
``torchvision.transforms.v2``. On the CPU machine the registry's torchvision (linked against CUDA)
fails to import; ``make vllm-env`` installs it without its compiled ops. Checked in that
environment's interpreter: the version, the absent ops (torchvision's own error when one is
called), a transform of the kind Gemma-4's processor runs, and the vLLM and transformers modules.
"""

from __future__ import annotations

import subprocess

import pytest

from vllm_tier import VLLM_PYTHON

pytestmark = pytest.mark.vllm

CHECK = """
import importlib.metadata as m
import torch, torchvision
from torchvision.transforms.v2 import functional as F
import torchvision.extension as ext
print(torchvision.__version__, m.version("torchvision"), ext._has_ops())
print(tuple(F.resize(torch.rand(3, 40, 50), [24, 30]).shape))
try:
    torchvision.ops.nms(torch.rand(2, 4), torch.rand(2), 0.5)
except RuntimeError as error:
    print("nms:", str(error).split(".")[0])
import transformers.models.gemma4.processing_gemma4, transformers.models.gemma4.image_processing_gemma4
import transformers.models.gemma4_unified.processing_gemma4_unified
import vllm.model_executor.models.gemma4_mm, vllm.model_executor.models.gemma4_unified
print("imported")
"""


def test_the_cpu_torchvision_and_the_multimodal_gemma4_modules_import_in_the_vllm_env():
    if not VLLM_PYTHON.is_file():
        pytest.fail(f"{VLLM_PYTHON} is missing: build the vLLM environment first (make vllm-env)")
    done = subprocess.run([str(VLLM_PYTHON), "-c", CHECK], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0] == "0.28.0+cpu.noops 0.28.0+cpu.noops False"
    assert lines[1] == "(3, 24, 30)"
    assert lines[2] == "nms: Couldn't load custom C++ ops"
    assert lines[-1] == "imported"
