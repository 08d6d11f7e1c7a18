"""The test tree itself: pytest's default import mode needs unique test-module names."""

from __future__ import annotations

from collections import Counter
from pathlib import Path


def test_test_module_basenames_are_unique():
    root = Path(__file__).parent
    names = Counter(p.name for p in root.rglob("test_*.py"))
    assert [n for n, c in names.items() if c > 1] == []
