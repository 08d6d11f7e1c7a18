"""`py4 smoke` command group."""

import typer

app = typer.Typer(help="smoke-scale assets", no_args_is_help=True)
