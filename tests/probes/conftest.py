"""Fixtures for the evaluation tests.

``smoke_assets`` reuses the training tests' cached smoke assets (same folder, same key:
tests/train/conftest.py), so the tiny -it model is built at most once per machine.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest


def _train_conftest():
    path = Path(__file__).resolve().parents[1] / "train" / "conftest.py"
    spec = importlib.util.spec_from_file_location("py4_train_conftest", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def smoke_assets() -> Path:
    import os
    import tempfile

    from py4.train.assets import build_smoke_assets

    key = _train_conftest()._assets_key()
    out = Path(os.environ.get("PY4_SMOKE_ASSETS") or Path(tempfile.gettempdir()) / f"py4-smoke-assets-{key}")
    return build_smoke_assets(out)
