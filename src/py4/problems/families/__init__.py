"""The family modules. Importing a module registers its families.

Append new modules at the END of ``MODULES``: problem ids are assigned in registration
order, so appending keeps every existing id of a bank version stable.
"""

from __future__ import annotations

import importlib

MODULES: tuple[str, ...] = (
    "errors",
    "formatting",
    "functional",
    "imports",
    "comparisons",
    "ranges",
    "slices",
    "indexing",
    "dicts",
    "stacks",
    "joining",
    "enumerating",
    "zipping",
    "counting",
    "rounding",
    "division",
    "trimming",
    "lints",
    "types",
    "numbers",
    "records",
    "text",
    "algorithms",
    "misc",
    "grids",
)

_loaded = False


def load_all() -> None:
    """Import every family module once (registration is an import side effect)."""
    global _loaded
    if _loaded:
        return
    for name in MODULES:
        importlib.import_module(f"{__name__}.{name}")
    _loaded = True
