"""The unit every data source yields: one document's id, text and where it came from."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Document"]


@dataclass(frozen=True)
class Document:
    id: str
    text: str
    source: str
