"""One GGSCI session: its home, its I/O, and the state GGSCI keeps between commands.

All I/O is injected (output stream, how to read a line, how to read a password, how to run an
editor, the clock), so the same session runs under the prompt-toolkit shell, over a pipe, from
an obey file, and in tests without a terminal. State: the numbered history, ALLOWNESTED, the
obey nesting depth and the DBLOGIN identity (ARCHITECTURE.md: GGSCI is otherwise stateless).
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TextIO

from engine.home.layout import Home
from engine.runtime.events import Clock, current_user

LineReader = Callable[[str], "str | None"]


class CommandFailed(Exception):
    """A command that failed; ``str(exc)`` is the line to show (usually ``ERROR: ...``)."""


class AlreadyReported(CommandFailed):
    """A failure whose lines the handler has printed already; only the outcome is left."""


class ExitRequested(Exception):
    """EXIT / QUIT."""


@dataclass(frozen=True)
class Login:
    """The DBLOGIN identity shown in the prompt (``as user@db``) and the resolved database."""

    user: str
    database: str
    kind: str
    target: str
    password: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Outcome:
    ok: bool
    exit: bool = False


def _no_input(prompt: str) -> str | None:
    return None


def run_editor(argv: list[str]) -> int:
    return subprocess.call(argv)


@dataclass
class Session:
    home: Home
    out: TextIO
    read_line: LineReader = _no_input
    read_secret: LineReader = _no_input
    clock: Clock = datetime.now
    host: str = field(default_factory=socket.gethostname)
    user: str = field(default_factory=current_user)
    history: list[str] = field(default_factory=list)
    allow_nested: bool = False
    obey_depth: int = 0
    login: Login | None = None
    editor: Callable[[list[str]], int] = run_editor
    editor_name: str | None = None
    """SET EDITOR: the editor of EDIT PARAMS for this session (else $VISUAL, $EDITOR, vi)."""
    execute: Callable[[str], Outcome] | None = None
    single_blank: bool = False
    """``ggsci run``: never two blank lines in a row (a screen's last blank line and the one
    between commands)."""
    _blank: bool = field(default=True, repr=False)

    def say(self, *lines: str) -> None:
        for line in lines:
            if self.single_blank and not line and self._blank:
                continue
            self._blank = not line
            self.out.write(line + "\n")
        self.out.flush()

    def prompt(self) -> str:
        who = f" as {self.login.user}@{self.login.database}" if self.login else ""
        return f"GGSCI ({self.host}{who}) {len(self.history) + 1}> "

    def confirm(self, question: str) -> bool:
        """Ask ``question (y/n)?``; anything but y/yes (or end of input) is no."""
        answer = self.read_line(f"{question} ")
        return answer is not None and answer.strip().lower() in ("y", "yes")

    def run(self, line: str) -> Outcome:
        if self.execute is None:
            raise RuntimeError("session has no executor")
        return self.execute(line)
