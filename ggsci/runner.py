"""Running GGSCI commands without a terminal: from standard input, an obey file, or arguments.

Each front-end builds a :class:`~ggsci.session.Session` on the streams it was given and feeds it
lines; ``run`` and ``obey`` exit 0 when every command succeeded and 1 otherwise. The shell on
standard input exits 0 after EXIT or end of input, as GGSCI does; ``--count-failures`` makes
its status the number of commands that failed (at most 255), for scripts. ``--syntax-only``
parses an obey file without executing it and reports each error as ``file:line:col: message``.
Input is read by the rules of :mod:`ggsci.textin` (undecodable bytes as U+FFFD, a length limit).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TextIO

from engine.home.layout import Home
from ggsci.commands.models import CommandError
from ggsci.commands.parse import is_blank_or_comment, parse_command
from ggsci.dispatch.table import bind, execute
from ggsci.session import LineReader, Session
from ggsci.textin import clean, read_text, shown
from params.masking import mask_secrets


def stream_session(
    home: Home, lines: Iterator[str], out: TextIO, secret: LineReader | None = None
) -> Session:
    """A session whose questions (confirmations, FC edits, passwords) read the next input
    line; ``secret``: how passwords are read instead (a terminal's prompt without echo)."""

    def read_line(prompt: str) -> str | None:
        out.write(prompt)
        line = next(lines, None)
        out.write("\n" if line is None else line.rstrip("\n") + "\n")
        return None if line is None else line.rstrip("\n")

    def read_secret(prompt: str) -> str | None:
        out.write(prompt + "\n")
        line = next(lines, None)
        return None if line is None else line.rstrip("\n")

    return bind(Session(home, out, read_line=read_line, read_secret=secret or read_secret))


def run_lines(session: Session, lines: Iterator[str], echo: bool = True) -> int:
    """Execute every line; echo ``prompt + command`` like GGSCI does for scripts. Returns
    how many commands failed."""
    failed = 0
    for raw in lines:
        line = raw.rstrip("\n")
        if is_blank_or_comment(line):
            continue
        if echo:
            session.say(f"{session.prompt()}{shown(mask_secrets(clean(line.strip())))}")
        outcome = execute(session, line)
        session.say("")
        failed += not outcome.ok
        if outcome.exit:
            break
    return failed


def run_stream(home: Home, stream: Iterable[str], out: TextIO, count: bool = False) -> int:
    """The commands of ``stream``: 1 if any failed (``count``: how many, at most 255)."""
    lines = iter(stream)
    failed = run_lines(stream_session(home, lines, out), lines)
    return min(failed, 255) if count else min(failed, 1)


def run_commands(
    home: Home,
    commands: list[str],
    out: TextIO,
    stdin: Iterable[str],
    secret: LineReader | None = None,
) -> int:
    """Run the commands given as arguments; questions read standard input."""
    session = stream_session(home, iter(stdin), out, secret)
    session.single_blank = True
    return min(run_lines(session, iter(commands), echo=False), 1)


def run_obey_file(home: Home, path: Path, out: TextIO, stdin: Iterable[str]) -> int:
    session = stream_session(home, iter(stdin), out)
    return min(run_lines(session, iter([f'OBEY "{path}"']), echo=False), 1)


def syntax_errors(path: Path) -> list[str]:
    """``file:line:col: message`` for each line of ``path`` that does not parse."""
    errors: list[str] = []
    for number, line in enumerate(read_text(path).splitlines(), 1):
        if is_blank_or_comment(line):
            continue
        try:
            parse_command(clean(line.strip()))
        except CommandError as exc:
            col = exc.column + 1 + (len(line) - len(line.lstrip()))
            errors.append(f"{path}:{number}:{col}: {exc.message}")
    return errors
