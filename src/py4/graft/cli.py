"""`py4 graft` command group."""

import typer

app = typer.Typer(help="graft", no_args_is_help=True)
