"""Starting the GGSCI front-ends, kept light so that ``ggsci`` answers fast.

Imports here are only what every start needs; the interpreter (grammar, handlers) and the
prompt-toolkit shell are imported inside the functions that use them. :func:`fast_main` runs the
plain command lines (``[--home DIR] [run CMD... | obey [--syntax-only] FILE]``) without building
the typer app; the typer commands in :mod:`ggsci.cli_shell` call the same functions.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import platformdirs

from engine.home.layout import Home, HomeError, resolve_home
from engine.home.trust import NotHomeOwner, check_home_owner
from ggsci.secretin import SecretOnCommandLine, read_secret, refuse_commands
from params import textfile

SHELL_COMMANDS = ("run", "obey")


def debug_log_path() -> Path:
    return Path(platformdirs.user_log_dir("ggsci", appauthor=False)) / "ggsci-debug.log"


def setup_debug_log() -> None:
    """Tracebacks of unexpected failures go here, never to the user's terminal."""
    path = debug_log_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(path, delay=True)
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("ggsci")
    for old in logger.handlers:  # a second set-up in one process (tests) closes the first's file
        old.close()
    logger.handlers[:] = [handler]
    logger.setLevel(logging.DEBUG)
    logger.propagate = False


def owned_home(home: str | None) -> Home | None:
    """The home to act on; ``None`` (after one line on stderr) when we do not own it."""
    try:
        resolved = resolve_home(home)
        check_home_owner(resolved)
    except (HomeError, NotHomeOwner) as exc:
        sys.stderr.write(f"{exc}\n")
        return None
    return resolved


def shell(home: str | None, count_failures: bool = False) -> int:
    """The interactive shell on a terminal, else commands read from standard input. Exits 0
    after EXIT or end of input as GGSCI does; ``count_failures``: non-zero when a command
    failed (from standard input: how many, at most 255)."""
    resolved = owned_home(home)
    if resolved is None:
        return 1
    setup_debug_log()
    if sys.stdin.isatty() and sys.stdout.isatty():
        from ggsci.shell.session import interactive

        status = interactive(resolved, sys.stdout)
        return status if count_failures else 0
    from ggsci.runner import run_stream

    status = run_stream(resolved, sys.stdin, sys.stdout, count=True)
    return status if count_failures else 0


def run(home: str | None, commands: list[str]) -> int:
    """``ggsci run CMD...``: a command holding a password is refused before anything runs
    (arguments are readable by every local user); a Password: question reads standard input,
    on a terminal without echo."""
    try:
        refuse_commands(commands)
    except SecretOnCommandLine as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    resolved = owned_home(home)
    if resolved is None:
        return 1
    from ggsci.runner import run_commands

    setup_debug_log()
    secret = read_secret if sys.stdin.isatty() else None
    return run_commands(resolved, commands, sys.stdout, sys.stdin, secret)


def _obey_file(home: str | None, path: Path) -> Path:
    """A relative name that is not here is the home's, as OBEY inside the shell reads it."""
    if path.is_absolute() or textfile.exists(path):
        return path
    try:
        theirs = resolve_home(home).root / path
    except HomeError:  # refused where the home is used (not by --syntax-only)
        return path
    return theirs if textfile.exists(theirs) else path


def obey(home: str | None, path: Path, syntax_only: bool) -> int:
    from ggsci.runner import run_obey_file, syntax_errors

    path = _obey_file(home, path)
    if syntax_only:
        try:
            errors = syntax_errors(path)
        except OSError as exc:  # as OBEY of a missing file: one ERROR line, status 1
            sys.stdout.write(f"ERROR: Cannot open obey file {path} ({exc.strerror}).\n")
            return 1
        sys.stdout.write("".join(e + "\n" for e in errors))
        return 1 if errors else 0
    resolved = owned_home(home)
    if resolved is None:
        return 1
    setup_debug_log()
    return run_obey_file(resolved, path.absolute(), sys.stdout, sys.stdin)


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
    if not rest:
        return shell(home)
    if rest[0] == "run" and len(rest) > 1:
        return run(home, rest[1:])
    if rest[0] == "obey":
        files = [a for a in rest[1:] if a != "--syntax-only"]
        if len(files) != 1:
            return None
        return obey(home, Path(files[0]), "--syntax-only" in rest)
    return None
