"""`boa migrate FILE.py`: Python 3 → Python-4, preserving behaviour (docs/migrate.md).

Exit codes: 0 migrated completely, 1 something could not be converted (the output is
still written, with the constructs listed on stderr or in the JSON), 2 usage or I/O
error (unreadable file, unknown rule id), shown by ``py4.errors.cli_errors`` as one line,
``error: …``; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from py4.errors import Py4Error, cli_errors


def _split_ids(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [part for part in text.replace(" ", ",").split(",") if part]


@cli_errors
def migrate_command(
    file: str = typer.Argument(..., help="Python 3 program, or - for stdin."),
    output: str | None = typer.Option(None, "-o", "--output",
                                      help="Write the Python-4 program here (default: stdout)."),
    only_rules: str | None = typer.Option(None, "--only-rules",
                                          help="Comma-separated rule ids: apply only these fixers."),
    skip_rules: str | None = typer.Option(None, "--skip-rules",
                                          help="Comma-separated rule ids: do not apply these fixers."),
    as_json: bool = typer.Option(False, "--json", help="Print {source, rules_applied, cannot_convert} as JSON."),
    python3: bool = typer.Option(False, "--python3",
                                 help="Treat the input as Python 3 even when it also compiles as Python-4."),
) -> None:
    """Migrate a Python 3 program to Python-4 with the same behaviour."""
    from py4.boa.cli_lang import display_name, read_source
    from py4.lang.migrate import MigrationError, migrate

    try:
        source = read_source(file).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Py4Error(f"{display_name(file)} is not UTF-8 text: {exc}") from None
    try:
        result = migrate(source, only_rules=_split_ids(only_rules),
                         skip_rules=_split_ids(skip_rules), assume_python3=python3)
    except MigrationError as exc:  # bad options (an unknown rule id): the user's to fix
        raise Py4Error(str(exc)) from None
    if output is not None:
        try:
            Path(output).write_text(result.source, encoding="utf-8")
        except OSError as exc:
            raise Py4Error(f"cannot write {output!r}: {exc}") from None
    if as_json:
        typer.echo(json.dumps(result.to_json()))
    else:
        if output is None:
            sys.stdout.write(result.source)
        name = display_name(file)
        for item in result.cannot_convert:
            typer.echo(f"{name}:{item.line}:{item.col}: cannot convert: {item.reason}", err=True)
    raise typer.Exit(1 if result.cannot_convert else 0)


def register(app: typer.Typer) -> None:
    app.command("migrate")(migrate_command)
