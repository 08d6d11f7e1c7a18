"""`py4 evaluate` command group."""

import typer

app = typer.Typer(help="evaluate", no_args_is_help=True)
