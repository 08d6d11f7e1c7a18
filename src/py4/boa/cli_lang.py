"""`boa check`, `boa translate`, `boa rules`: the language front end on the command line.

Exit codes: 0 clean, 1 the program has diagnostics (check) or does not compile
(translate), 2 usage or I/O error (a :class:`~py4.errors.Py4Error` shown by ``cli_errors``
as one line, ``error: …``). FILE may be ``-`` for standard input.
"""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path

import typer

from py4.errors import Py4Error, cli_errors
from py4.lang import RULES, compile_py4
from py4.lang.diagnostics import Rendering


class DiagnosticsMode(str, Enum):
    """``--diagnostics``: how diagnostics and runtime errors are worded."""

    verbatim = "verbatim"
    generic = "generic"

    @property
    def rendering(self) -> Rendering:
        return "generic" if self is DiagnosticsMode.generic else "verbatim"


def read_source(file: str, what: str = "") -> bytes:
    """The bytes of FILE (``-`` = stdin); a :class:`Py4Error` (exit 2) naming it when unreadable.

    ``what`` names the file's role in the message (e.g. "solution"). Shared by every
    `boa` command that reads a file; each of them is under ``cli_errors``.
    """
    try:
        if file == "-":
            return sys.stdin.buffer.read()
        return Path(file).read_bytes()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        role = f"{what} " if what else ""
        raise Py4Error(f"cannot read {role}{file!r}: {reason}") from None


def display_name(file: str) -> str:
    return "<stdin>" if file == "-" else file


@cli_errors  # an unreadable FILE: one line, exit 2; anything else keeps its traceback
def check(
    file: str = typer.Argument(..., help="Python-4 source file, or - for stdin."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    diagnostics: DiagnosticsMode = typer.Option(
        DiagnosticsMode.verbatim, "--diagnostics",
        help="verbatim: rule, message and fix; generic: kind and line only."),
) -> None:
    """Check a Python-4 program: exit 0 when clean, 1 on any error or warning."""
    name = display_name(file)
    result = compile_py4(read_source(file), name)
    mode = diagnostics.rendering
    if as_json:
        items = []
        for diag in result.diagnostics:
            item = diag.to_json()
            if mode == "generic":
                item["message"] = diag.render("generic")
            items.append(item)
        payload = {"file": name, "ok": result.ok, "diagnostics": items,
                   "rules_exercised": result.rules_exercised}
        typer.echo(json.dumps(payload))
    else:
        for diag in result.diagnostics:
            typer.echo(f"{name}: {diag.render(mode)}")
        if not result.diagnostics:
            typer.echo(f"{name}: ok")
    raise typer.Exit(1 if result.diagnostics else 0)


@cli_errors
def translate(
    file: str = typer.Argument(..., help="Python-4 source file, or - for stdin."),
) -> None:
    """Print the Python 3 translation of a Python-4 program (exit 1 if it does not compile)."""
    name = display_name(file)
    result = compile_py4(read_source(file), name)
    if not result.ok or result.python_source is None:
        for diag in result.diagnostics:
            typer.echo(f"{name}: {diag.render('verbatim')}", err=True)
        raise typer.Exit(1)
    typer.echo(result.python_source)


def rules(as_json: bool = typer.Option(False, "--json", help="Print a JSON list.")) -> None:
    """List the Python-4 rules (id, kind, title, default held-out flag)."""
    if as_json:
        typer.echo(json.dumps([rule.to_json() for rule in RULES.values()]))
        return
    for rule in RULES.values():
        held = "held-out" if rule.held_out else "held-in"
        typer.echo(f"{rule.id}  {rule.kind:<9}  {held:<8}  {rule.title}: {rule.summary}")


def register(app: typer.Typer) -> None:
    """Add check, translate and rules to the `boa` app."""
    app.command("check")(check)
    app.command("translate")(translate)
    app.command("rules")(rules)
