"""`py4 report` command group."""

import typer

app = typer.Typer(help="report", no_args_is_help=True)
