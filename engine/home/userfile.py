"""Files a user names on the command line (a dictionary, a log to dump, hex or dump text):
read within bounds, and only when they are regular files.

A path given by a user may name anything: a FIFO (reading it waits for a writer that never
comes), a device (``/dev/zero`` never ends), a directory, or a sparse file of a terabyte.
:func:`open_regular` opens without blocking and refuses all but a regular file, and
:func:`read_user_file` reads at most ``max_bytes``, so each of them is one
:class:`UserFileError` line naming the file, never a hang or a process out of memory.
A file another user owns is read when we may read it (a world-readable dictionary is
fine): this is not the home's own state (:mod:`engine.home.trust` is for that).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

#: What a file that is not a regular one is, by its type bits.
_KINDS: Final = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class UserFileError(OSError):
    """A named file that cannot be used; ``str()`` is one line naming it."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


def kind(mode: int) -> str:
    """What a file of ``mode`` is, when it is not a regular file."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_regular(path: Path | str) -> int:
    """A descriptor of ``path`` open for reading; :class:`UserFileError` when it cannot be
    opened or is not a regular file (never waits: ``O_NONBLOCK``, which a regular file
    ignores)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise UserFileError(path, exc.strerror or type(exc).__name__) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise UserFileError(path, f"is {kind(st.st_mode)}, not a regular file")
    return fd


def read_user_file(path: Path | str, max_bytes: int) -> bytes:
    """The bytes of the regular file ``path``; :class:`UserFileError` when it is not one, or
    holds more than ``max_bytes`` (by its size, and by what is read: it may grow)."""
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        if size > max_bytes:
            raise UserFileError(path, f"is larger than {max_bytes} bytes ({size} bytes)")
        chunks = []
        got = 0
        while got <= max_bytes:
            try:
                chunk = os.read(fd, min(1 << 20, max_bytes + 1 - got))
            except OSError as exc:
                raise UserFileError(path, exc.strerror or type(exc).__name__) from None
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > max_bytes:
            raise UserFileError(path, f"is larger than {max_bytes} bytes (it grew)")
        return b"".join(chunks)
    finally:
        os.close(fd)
