"""`py4 problems` command group."""

import typer

app = typer.Typer(help="problems", no_args_is_help=True)
