"""Fixtures for the probe tests: the evaluation tests' ``smoke_assets`` (one definition, the
same cached tiny models; see tests/evaluate/conftest.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_path = Path(__file__).resolve().parents[1] / "evaluate" / "conftest.py"
_spec = importlib.util.spec_from_file_location("py4_evaluate_conftest", _path)
_evaluate_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_evaluate_conftest)

smoke_assets = _evaluate_conftest.smoke_assets
