"""The smoke models the tests share: the smoke assets, and the warm-start LoRA the GRPO tests start from.

The smoke assets (tokenizer, tiny base, tiny -it) are built once per machine and code version:
cached under the temp dir keyed by a hash of the sources that shape them, so a second test
session, and a test run by another environment's Python (the vllm tier's), reuse them. Set
PY4_SMOKE_ASSETS to use another folder. Imports torch only when a function runs.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

_SHAPING_SOURCES = ("chat/smoke_format.py", "chat/smoke_tokenizer.py", "train/tiny_model.py",
                    "train/assets.py", "data/smoke_instructions.py", "train/sft.py", "train/common.py")


def assets_key() -> str:
    import py4

    root = Path(py4.__file__).parent
    h = hashlib.sha256()
    for rel in _SHAPING_SOURCES:
        h.update((root / rel).read_bytes())
    return h.hexdigest()[:12]


def smoke_assets() -> Path:
    """The smoke assets' folder, built there when missing."""
    from py4.train.assets import build_smoke_assets

    out = Path(os.environ.get("PY4_SMOKE_ASSETS") or Path(tempfile.gettempdir()) / f"py4-smoke-assets-{assets_key()}")
    return build_smoke_assets(out)


def smoke_warm_start(model_dir: Path, out: Path) -> Path:
    """A warm-start LoRA (r=8, alpha=16, small random B: `py4.train.eft.stand_in_warm_start`) on
    the smoke -it model ``model_dir``, saved to ``out``."""
    from py4.train.eft import LoraSpec, stand_in_warm_start

    return stand_in_warm_start(model_dir, out, LoraSpec(r=8, alpha=16))
