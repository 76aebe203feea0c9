"""The GGSCI front-ends of the ``ggsci`` command (typer), thin over :mod:`ggsci.runner`.

- ``ggsci [--home DIR]``: the interactive shell on a terminal; without a terminal, commands
  are read from standard input line by line (``ggsci << EOF`` scripts).
- ``ggsci obey FILE`` runs an obey file; ``--syntax-only`` only parses it.
- ``ggsci run "INFO ALL" ["START MGR" ...]`` runs commands given as arguments.

All exit non-zero when a command failed.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from engine.home import Home, resolve_home

HomeOption = Annotated[
    str | None,
    typer.Option(
        "--home",
        help="The home directory (else $GGHOME, the current directory if it "
        "has dirprm/, or the user data directory).",
        show_default=False,
    ),
]


def _home(ctx: typer.Context, explicit: str | None) -> Home:
    chosen = explicit or (ctx.obj or {}).get("home")
    return resolve_home(chosen)


def main_callback(ctx: typer.Context, home: HomeOption = None) -> None:
    """GGSCI: with no command, the interactive shell (or commands from standard input)."""
    ctx.obj = {"home": home}
    if ctx.invoked_subcommand is not None:
        return
    from ggsci.runner import run_stream, setup_debug_log

    setup_debug_log()
    resolved = resolve_home(home)
    if sys.stdin.isatty() and sys.stdout.isatty():
        from ggsci.shell.session import interactive

        raise typer.Exit(interactive(resolved, sys.stdout))
    raise typer.Exit(run_stream(resolved, sys.stdin, sys.stdout))


def obey(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="The obey file (GGSCI commands, one a line).")],
    syntax_only: Annotated[
        bool, typer.Option("--syntax-only", help="Parse only; report file:line:col: message.")
    ] = False,
    home: HomeOption = None,
) -> None:
    """Run the GGSCI commands of FILE."""
    from ggsci.runner import run_obey_file, setup_debug_log, syntax_errors

    if syntax_only:
        try:
            errors = syntax_errors(file)
        except OSError as exc:
            typer.echo(f"{file}: cannot read: {exc.strerror}", err=True)
            raise typer.Exit(2) from exc
        for error in errors:
            typer.echo(error)
        raise typer.Exit(1 if errors else 0)
    setup_debug_log()
    raise typer.Exit(run_obey_file(_home(ctx, home), file.resolve(), sys.stdout, sys.stdin))


def run(
    ctx: typer.Context,
    commands: Annotated[list[str], typer.Argument(help="GGSCI commands, each one argument.")],
    home: HomeOption = None,
) -> None:
    """Run GGSCI commands given on the command line, e.g. ggsci run "INFO ALL"."""
    from ggsci.runner import run_commands, setup_debug_log

    setup_debug_log()
    raise typer.Exit(run_commands(_home(ctx, home), commands, sys.stdout, sys.stdin))


def register(app: typer.Typer) -> None:
    app.callback(invoke_without_command=True)(main_callback)
    app.command(name="obey")(obey)
    app.command(name="run")(run)
