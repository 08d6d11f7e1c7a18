"""`boa`: the Python-4 interpreter's command line.

Exit codes: 0 success / clean, 1 the program has diagnostics or failed, 2 usage or
I/O error. Every command reads ``-`` as standard input.
Each group of commands lives in its own module and registers itself here.
"""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    name="boa",
    help="Boa, the Python-4 interpreter: check, translate, run, certify, migrate.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Modules with a `register(app)` function adding their commands.
COMMAND_MODULES = (
    "py4.boa.cli_lang",  # check, translate, rules
    "py4.boa.cli_exec",  # run, certify
    "py4.boa.cli_migrate",  # migrate
)

for _module in COMMAND_MODULES:
    importlib.import_module(_module).register(app)


def main() -> None:  # pragma: no cover - console-script entry point
    app()
