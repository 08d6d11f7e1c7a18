"""`py4 corpus` command group."""

import typer

app = typer.Typer(help="corpus", no_args_is_help=True)
