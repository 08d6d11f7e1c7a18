"""The training stages' user errors (each a :class:`~py4.errors.Py4Error`: one line, exit 2).

Each keeps the built-in class its callers caught before in its bases, so an ``except
ValueError`` written against the old code still catches it. Everything else a stage raises
is a bug and keeps its traceback.
"""

from __future__ import annotations

from py4.errors import Py4Error

__all__ = ["TrainingError", "TrainingInputMissing", "TrainingGuardError"]


class TrainingError(Py4Error, ValueError):
    """A stage's input or setting cannot work (an unpinned Hub model, too few rows for a dose, a
    missing package); the message names the field or file and what was expected."""


class TrainingInputMissing(Py4Error, FileNotFoundError):
    """A model folder, checkpoint or dataset a stage was pointed at does not exist (names the field)."""


class TrainingGuardError(Py4Error, RuntimeError):
    """A guard stopped the run (empty supervision, NaN loss, schedule mismatch, a dirty dose)."""
