"""The data pipeline's user error (a :class:`~py4.errors.Py4Error`)."""

from __future__ import annotations

from py4.errors import Py4Error

__all__ = ["DataError"]


class DataError(Py4Error, ValueError):
    """Bad input data: the message names the file, line and field, and what was expected."""
