"""`py4 campaign` command group."""

import typer

app = typer.Typer(help="campaign", no_args_is_help=True)
