"""Test folders never shadow a package: pytest puts ``tests/`` on ``sys.path``, so a folder named
like a library (``tests/vllm``) becomes an importable namespace package with no version, and
TRL's ``is_vllm_available`` then breaks every import of its generation code."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

# Top-level packages py4 or its environments import that may be absent from this venv.
OTHER_ENVIRONMENTS = {"vllm", "torchao", "trackio", "wandb", "mlflow", "inspect_ai", "deepspeed", "flash_attn",
                      "liger_kernel"}


def test_no_test_folder_is_named_like_an_importable_package():
    tests = Path(__file__).parent
    folders = {p.name for p in tests.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    installed = set(importlib.metadata.packages_distributions())
    assert folders & (installed | OTHER_ENVIRONMENTS) == set()
