"""Shared fixtures for the training tests.

The smoke assets (tokenizer, tiny base, tiny -it) are built once per machine and code
version: cached under the temp dir keyed by a hash of the sources that shape them, so
a second test session reuses them. Set PY4_SMOKE_ASSETS to use another folder.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import pytest

_SHAPING_SOURCES = ("chat/smoke_format.py", "chat/smoke_tokenizer.py", "train/tiny_model.py",
                    "train/assets.py", "data/smoke_instructions.py", "train/sft.py", "train/common.py")


def _assets_key() -> str:
    import py4

    root = Path(py4.__file__).parent
    h = hashlib.sha256()
    for rel in _SHAPING_SOURCES:
        h.update((root / rel).read_bytes())
    return h.hexdigest()[:12]


@pytest.fixture(scope="session")
def smoke_assets() -> Path:
    from py4.train.assets import build_smoke_assets

    out = Path(os.environ.get("PY4_SMOKE_ASSETS") or Path(tempfile.gettempdir()) / f"py4-smoke-assets-{_assets_key()}")
    return build_smoke_assets(out)


@pytest.fixture(scope="session")
def small_tokenizer(tmp_path_factory):
    """A quickly trained tokenizer (smaller text and vocabulary) for format tests."""
    from py4.chat.smoke_tokenizer import stdlib_texts, train_tokenizer

    return train_tokenizer(stdlib_texts(600_000), vocab_size=1024)


@pytest.fixture(scope="module")
def warm_start_adapter(smoke_assets, tmp_path_factory):
    """A LoRA on the -it model standing in for the EFT-512 warm start: small random B, as after
    training. (With PEFT's B = 0 init the first step's gradient on A is exactly zero.)"""
    import torch
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM

    from py4.train.eft import LoraSpec

    torch.manual_seed(0)
    model = get_peft_model(AutoModelForCausalLM.from_pretrained(smoke_assets / "it", dtype=torch.float32),
                           LoraSpec(r=8, alpha=16).peft_config())
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "lora_B" in name:
                param.normal_(std=1e-3)
    out = tmp_path_factory.mktemp("adapter")
    model.save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def extra_venv(tmp_path_factory):
    """A function building a throwaway venv with extra packages (pip requirement strings) on top of
    this test venv, returning its python. For the optional extras (trackio, wandb, mlflow) that
    `make install` leaves out: they pull packages the test venv must not get (trackio pins pillow
    below the venv's). The test venv's site-packages come after the venv's own on its path (a
    .pth file), so py4, torch and transformers are shared and pip installs only what is missing or
    must differ. Needs the package index; built once per set of requirements in a session."""
    import subprocess
    import sysconfig
    import venv

    built: dict[tuple[str, ...], Path] = {}

    def build(*requirements: str) -> Path:
        key = tuple(sorted(requirements))
        if key not in built:
            root = tmp_path_factory.mktemp("extra-venv")
            venv.EnvBuilder(with_pip=True).create(root)
            python = root / "bin" / "python"
            site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip()
            # An `import` line, so that the test venv's own .pth files (py4's editable install) apply too.
            (Path(site) / "py4-test-venv.pth").write_text(
                f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
            proc = subprocess.run([str(python), "-m", "pip", "install", "-q", *requirements],
                                  capture_output=True, text=True, timeout=900)
            assert proc.returncode == 0, f"pip install {' '.join(requirements)}:\n{proc.stderr[-3000:]}"
            built[key] = python
        return built[key]

    return build
