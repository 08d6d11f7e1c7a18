"""`py4 train` command group."""

import typer

app = typer.Typer(help="training stages", no_args_is_help=True)
