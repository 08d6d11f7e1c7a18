"""Shared fixtures for the training tests (the warm start: tests/smoke_models.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import smoke_models


@pytest.fixture(scope="session")
def small_tokenizer(tmp_path_factory):
    """A quickly trained tokenizer (smaller text and vocabulary) for format tests."""
    from py4.chat.smoke_tokenizer import stdlib_texts, train_tokenizer

    return train_tokenizer(stdlib_texts(600_000), vocab_size=1024)


@pytest.fixture(scope="module")
def warm_start_adapter(smoke_assets, tmp_path_factory):
    """A LoRA on the -it model standing in for the EFT-512 warm start: small random B, as after training."""
    return smoke_models.smoke_warm_start(smoke_assets / "it", tmp_path_factory.mktemp("adapter"))


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
