"""Fixtures for the episode tests: ``smoke_assets`` is the evaluation tests' (shared cache)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_path = Path(__file__).resolve().parents[1] / "evaluate" / "conftest.py"
_spec = importlib.util.spec_from_file_location("py4_evaluate_conftest", _path)
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)

smoke_assets = _module.smoke_assets
