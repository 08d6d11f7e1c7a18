"""The chat-vector graft: W_graft = W_mid + lambda_ * (W_it - W_base), streamed over safetensors shards.

    from py4.graft import GraftConfig, run, verify_graft

Modules: ``config`` (GraftConfig and its policies), ``checkpoint`` (sources, headers),
``plan`` (per-tensor decisions, shard layout), ``stream`` (chunked arithmetic and shard
writing), ``provenance`` (input hashes, files from -it), ``engine`` (``run``),
``verify`` (independent recomputation), ``cli`` (``py4 graft``).
Attributes are imported lazily so that ``py4 --help`` does not import torch.
"""

from __future__ import annotations

import importlib

__all__ = ["GraftConfig", "GraftError", "GraftResult", "run", "verify_graft", "VerifyResult"]

_WHERE = {
    "GraftConfig": "py4.graft.config",
    "GraftError": "py4.graft.checkpoint",
    "GraftResult": "py4.graft.engine",
    "run": "py4.graft.engine",
    "verify_graft": "py4.graft.verify",
    "VerifyResult": "py4.graft.verify",
}


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'py4.graft' has no attribute {name!r}")
