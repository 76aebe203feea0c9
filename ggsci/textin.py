"""How GGSCI reads text it did not write: typed lines, standard input, arguments and files.

The rules (``docs/ggsci.md``, "What GGSCI accepts as input"):

- Text is UTF-8. A byte that is not valid UTF-8 reads as U+FFFD (``�``): from a file (obey
  files, VIEW PARAMS / REPORT / GGSEVT), from standard input, and from the terminal or the
  arguments, where Python hands such bytes over as surrogate escapes (``\\udcff``). A control
  character other than a tab reads as U+FFFD too. A command holding one is then simply not a
  valid command: one ``ERROR`` line, and the next command runs.
- A command line is at most :data:`MAX_COMMAND_LENGTH` characters; a longer one is refused with
  one line, before it is parsed, kept in the history or logged.

Nothing here imports more than the standard library: the launcher uses it before anything else.
"""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

from params import textfile

MAX_COMMAND_LENGTH = 4096
"""Characters in one command line. GGSCI documents no limit of its own; 4096 is what a Linux
terminal accepts as one line in canonical mode (``N_TTY_BUF_SIZE``), far above the longest real
command (an ADD/ALTER with every option is a few hundred characters)."""

REPLACEMENT = "\ufffd"
_UNREADABLE = re.compile(r"[\ud800-\udfff\x00-\x08\x0a-\x1f\x7f-\x9f]")


def decode(data: bytes) -> str:
    """``data`` as UTF-8, each undecodable byte as U+FFFD."""
    return data.decode("utf-8", errors="replace")


def read_text(path: Path) -> str:
    """A text file whatever bytes it holds, at most
    :data:`params.textfile.MAX_TEXT_FILE_BYTES` (raises ``OSError`` only)."""
    return textfile.read_text(path)


def clean(text: str) -> str:
    """``text`` with surrogate escapes and control characters (but tab) as U+FFFD."""
    return _UNREADABLE.sub(REPLACEMENT, text)


def too_long(text: str) -> str | None:
    """Why a command longer than the limit is refused (one line), else ``None``."""
    if len(text) <= MAX_COMMAND_LENGTH:
        return None
    return f"Command too long: {len(text)} characters, at most {MAX_COMMAND_LENGTH} are accepted."


def shown(text: str, width: int = 80) -> str:
    """How a command is echoed: in full, unless it is too long to run (then its start)."""
    if len(text) <= MAX_COMMAND_LENGTH:
        return text
    return text[:width] + f"... ({len(text)} characters)"


def tolerant_streams() -> None:
    """Make the process's standard streams follow the rules: reading standard input never
    fails on a bad byte (U+FFFD), and writing never fails on an undecodable character that
    came in through the arguments (written as ``\\udcff``)."""
    for stream, errors in (
        (sys.stdin, "replace"),
        (sys.stdout, "backslashreplace"),
        (sys.stderr, "backslashreplace"),
    ):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors=errors)
