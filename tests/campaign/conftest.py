"""Fixtures for the campaign tests: the cached smoke assets of tests/train/conftest.py."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def smoke_assets() -> Path:
    """The tiny tokenizer, base and -it model, built at most once per machine and code version."""
    import os
    import tempfile

    from py4.train.assets import build_smoke_assets

    path = Path(__file__).resolve().parents[1] / "train" / "conftest.py"
    spec = importlib.util.spec_from_file_location("py4_train_conftest", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = Path(os.environ.get("PY4_SMOKE_ASSETS")
               or Path(tempfile.gettempdir()) / f"py4-smoke-assets-{module._assets_key()}")
    return build_smoke_assets(out)
