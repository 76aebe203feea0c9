"""The ``ggsci`` console script (typer): thin, delegating to library functions.

Sub-command groups live in their own modules (``cli_params``, ``cli_db``, ...) and are
registered in :func:`build_app`. Nothing imported here may import pyspark.
"""

from __future__ import annotations

import typer

import ggsci.cli_logdump as cli_logdump
from ggsci import cli_params, cli_shell


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="ggsci",
        help="GoldenGate-style change capture: parameter files, GGSCI shell, Extract on Spark.",
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    cli_shell.register(app)
    app.add_typer(cli_params.app, name="params")
    app.command(name="logdump")(cli_logdump.logdump)
    return app


def main() -> None:
    build_app()()
