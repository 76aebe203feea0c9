"""The GGSCI front-ends of the ``ggsci`` command (typer), thin over :mod:`ggsci.launch`.

- ``ggsci [--home DIR]``: the interactive shell on a terminal; without a terminal, commands
  are read from standard input line by line (``ggsci << EOF`` scripts).
- ``ggsci obey FILE`` runs an obey file; ``--syntax-only`` only parses it.
- ``ggsci run "INFO ALL" ["START MGR" ...]`` runs commands given as arguments.

``run`` and ``obey`` exit non-zero when a command failed; the shell exits 0 after EXIT or
end of input as GGSCI does (``--count-failures``: the number of failed commands).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from engine.home.layout import HomeError, named_home
from ggsci import launch

HomeOption = Annotated[
    str | None,
    typer.Option(
        "--home",
        help="The home directory (else $GGHOME, the current directory if it "
        "has dirprm/, or the user data directory).",
        show_default=False,
    ),
]


def _home(ctx: typer.Context, explicit: str | None) -> str | None:
    return explicit or (ctx.obj or {}).get("home")


def main_callback(
    ctx: typer.Context,
    home: HomeOption = None,
    count_failures: Annotated[
        bool,
        typer.Option(
            "--count-failures",
            help="Exit with the number of commands that failed (at most 255) instead of 0.",
        ),
    ] = False,
) -> None:
    """GGSCI: with no command, the interactive shell (or commands from standard input)."""
    ctx.obj = {"home": home}
    if ctx.invoked_subcommand is None:
        raise typer.Exit(launch.shell(home, count_failures))
    if home and ctx.invoked_subcommand not in ("obey", "run"):
        try:
            named_home(home)
        except HomeError as exc:
            typer.echo(str(exc), err=True)
            raise typer.Exit(1) from None
        # ggsci --home H db|params|extract|logdump ...: every sub-command resolves its home
        # through resolve_home (its own --home, then $GGHOME), so the global option is theirs
        os.environ["GGHOME"] = home


def obey(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="The obey file (GGSCI commands, one a line).")],
    syntax_only: Annotated[
        bool, typer.Option("--syntax-only", help="Parse only; report file:line:col: message.")
    ] = False,
    home: HomeOption = None,
) -> None:
    """Run the GGSCI commands of FILE."""
    raise typer.Exit(launch.obey(_home(ctx, home), file, syntax_only))


def run(
    ctx: typer.Context,
    commands: Annotated[list[str], typer.Argument(help="GGSCI commands, each one argument.")],
    home: HomeOption = None,
) -> None:
    """Run GGSCI commands given on the command line, e.g. ggsci run "INFO ALL"."""
    raise typer.Exit(launch.run(_home(ctx, home), commands))


def register(app: typer.Typer) -> None:
    app.callback(invoke_without_command=True)(main_callback)
    app.command(name="obey")(obey)
    app.command(name="run")(run)
