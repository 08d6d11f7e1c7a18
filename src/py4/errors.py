"""The one error base of the toolkit, and the command-line handling of it.

A :class:`Py4Error` is an error the user can fix — a missing file, a malformed line, an
impossible configuration — and its message says which file, line or field and what was
expected. The command line prints such an error as one line and exits with its
``exit_code``; anything else is a bug and keeps its traceback (so no command catches
``ValueError`` or ``KeyError`` around a whole stage).

This module sits at the bottom of the package: it imports nothing of py4, and typer only
inside :func:`cli_errors`'s wrapper.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import ParamSpec, TypeVar

__all__ = ["Py4Error", "ConfigError", "FileFormatError", "where", "cli_errors", "fail"]

P = ParamSpec("P")
R = TypeVar("R")


class Py4Error(Exception):
    """An error in what the user gave us; the command line shows it as one line, exit 2."""

    exit_code: int = 2


class ConfigError(Py4Error, ValueError):
    """A config could not be loaded; ``problems`` lists every problem found."""

    def __init__(self, source: str, problems: list[str]):
        self.source = source
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"invalid config {source}: {len(problems)} problem(s)\n{lines}")


class FileFormatError(Py4Error, ValueError):
    """A file that is missing or malformed; the message starts ``path:line:`` (see py4.fileio)."""


def where(path: str | Path, line: int | None = None) -> str:
    """``path:line`` (or ``path``), the prefix of every message about a file's content."""
    return f"{path}:{line}" if line is not None else f"{path}"


def fail(message: str, exit_code: int = 2) -> Py4Error:
    """A :class:`Py4Error` with another exit code, for ``raise fail(...)`` in command bodies."""
    error = Py4Error(message)
    error.exit_code = exit_code
    return error


def cli_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Decorate a typer command: a :class:`Py4Error` becomes ``error: …`` on stderr and its exit code.

    Only user errors are caught; a bug's exception propagates with its traceback. An EOFError
    goes on as a RuntimeError: click takes an EOFError for the end of a prompt's input and prints
    only ``Aborted.``, but a command's (torch.load or pickle reading a file cut short) is a bug.
    """

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except Py4Error as exc:
            import typer

            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(exc.exit_code) from None
        except EOFError as exc:
            raise RuntimeError(f"EOFError: {exc}") from exc

    return wrapper
