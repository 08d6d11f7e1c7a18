"""`py4 data` command group."""

import typer

app = typer.Typer(help="data", no_args_is_help=True)
