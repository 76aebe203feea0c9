"""The ``ggsci`` console script (typer): thin, delegating to library functions.

Sub-command groups live in their own modules (``cli_params``, ``cli_db``, ...) and are
registered in :func:`build_app`. Nothing imported here may import pyspark.

Start-up time matters (the shell must answer in well under half a second), so this module
imports nothing heavy at its top: typer and the sub-command modules are imported inside
:func:`build_app`, and :func:`main` first offers the arguments to
:func:`ggsci.launch.fast_main`, which runs the GGSCI shell, ``run`` and ``obey`` without typer.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer

HELP = "GoldenGate-style change capture: parameter files, GGSCI shell, Extract on Spark."


def _new_app() -> typer.Typer:
    import typer

    return typer.Typer(
        name="ggsci",
        help=HELP,
        add_completion=False,
        pretty_exceptions_enable=False,
    )


def build_app() -> typer.Typer:
    import ggsci.cli_logdump as cli_logdump
    from ggsci import cli_db, cli_extract, cli_params, cli_replicat, cli_shell

    app = _new_app()
    cli_shell.register(app)
    app.add_typer(cli_params.app, name="params")
    app.add_typer(cli_db.app, name="db")
    app.command(name="logdump")(cli_logdump.logdump)
    app.command(name="extract", context_settings={"ignore_unknown_options": True})(
        cli_extract.extract
    )
    app.command(name="replicat", context_settings={"ignore_unknown_options": True})(
        cli_replicat.replicat
    )
    return app


def build_shell_app() -> typer.Typer:
    """Only the GGSCI front-ends (the default shell, ``run``, ``obey``)."""
    from ggsci import cli_shell

    app = _new_app()
    cli_shell.register(app)
    return app


def main() -> None:
    from engine.home.trust import private_umask

    private_umask()
    try:
        _main()
    except BrokenPipeError:
        # the output's reader went away (``ggsci run ... | head``): stop quietly, and keep
        # Python from reporting the same error again when it flushes stdout at exit
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)


def _main() -> None:
    from ggsci.launch import fast_main, is_shell_invocation
    from ggsci.textin import tolerant_streams

    tolerant_streams()
    status = fast_main(sys.argv[1:])
    if status is not None:
        sys.exit(status)
    if is_shell_invocation(sys.argv[1:]):
        build_shell_app()()
    else:
        build_app()()
