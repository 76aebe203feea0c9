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


SHELL_COMMANDS = ("run", "obey")


def is_shell_invocation(args: list[str]) -> bool:
    """Whether ``args`` ask for the shell, ``run`` or ``obey`` (so no other group is needed)."""
    i = 0
    while i < len(args) and args[i].startswith("--home"):
        i += 1 if "=" in args[i] else 2
    rest = args[i:]
    if not rest:
        return True
    return rest[0] in SHELL_COMMANDS


def fast_main(args: list[str]) -> int | None:
    """Run the plain forms without typer; ``None`` when typer should handle ``args``.

    Why: building the typer app costs about a third of the half-second start-up budget. Only
    ``[--home DIR] [run CMD... | obey [--syntax-only] FILE]`` is handled here; anything else
    (``--help``, other options, other sub-commands) goes through the typer app, whose
    behaviour this mirrors.
    """
    home: str | None = None
    i = 0
    while i < len(args) and args[i].startswith("--home"):
        if args[i].startswith("--home="):
            home, i = args[i].split("=", 1)[1], i + 1
        elif args[i] == "--home" and i + 1 < len(args):
            home, i = args[i + 1], i + 2
        else:
            return None
    rest = args[i:]
    if any(a.startswith("-") and a != "--syntax-only" for a in rest):
        return None
    from ggsci.runner import run_commands, run_obey_file, run_stream, setup_debug_log, syntax_errors

    if not rest:
        setup_debug_log()
        resolved = resolve_home(home)
        if sys.stdin.isatty() and sys.stdout.isatty():
            from ggsci.shell.session import interactive

            return interactive(resolved, sys.stdout)
        return run_stream(resolved, sys.stdin, sys.stdout)
    if rest[0] == "run" and len(rest) > 1:
        setup_debug_log()
        return run_commands(resolve_home(home), rest[1:], sys.stdout, sys.stdin)
    if rest[0] == "obey":
        files = [a for a in rest[1:] if a != "--syntax-only"]
        if len(files) != 1:
            return None
        path = Path(files[0])
        if "--syntax-only" in rest:
            try:
                errors = syntax_errors(path)
            except OSError as exc:
                sys.stderr.write(f"{path}: cannot read: {exc.strerror}\n")
                return 2
            sys.stdout.write("".join(e + "\n" for e in errors))
            return 1 if errors else 0
        setup_debug_log()
        return run_obey_file(resolve_home(home), path.resolve(), sys.stdout, sys.stdin)
    return None
