"""`boa`: the Python-4 interpreter's command line.

Exit codes: 0 success / clean, 1 the program has diagnostics or failed, 2 usage or
I/O error. Every command reads ``-`` as standard input.
Each group of commands lives in its own module and registers itself here. ``app`` has
every command but `boa certify`, which reads the problem bank's files: the `boa` console
script is ``py4.boa_cli``'s app, made with the bank's reader (the bank sits above Boa).
"""

from __future__ import annotations

import typer

from py4.boa import cli_exec, cli_lang, cli_migrate


def make_app(read_problem: cli_exec.ProblemReader | None = None) -> typer.Typer:
    """The `boa` app; with `boa certify` when given ``read_problem`` (a problem file's reader)."""
    app = typer.Typer(
        name="boa",
        help="Boa, the Python-4 interpreter: check, translate, run, certify, migrate.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    cli_lang.register(app)  # check, translate, rules
    cli_exec.register(app, read_problem)  # run, certify
    cli_migrate.register(app)  # migrate
    return app


app = make_app()
