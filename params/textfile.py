"""Reading a text file a user named: parameter files, obey files, INCLUDE and OBEY libraries.

A user may name anything: a name longer than the system allows, a directory, a FIFO nobody
writes to, ``/dev/zero``. None of these may raise anything but ``OSError`` or wait forever:

- at most :data:`MAX_TEXT_FILE_BYTES` are read; a longer file (or an endless device) raises
  ``OSError(EFBIG)`` with a readable reason, before anything is parsed;
- the file is opened without waiting for a writer (a FIFO with none reads as empty);
- :func:`is_file` and :func:`exists` answer ``False`` where :mod:`pathlib` raises
  (``ENAMETOOLONG``, ``EACCES`` on the way).

Only the standard library: :mod:`ggsci.textin` uses it on the launcher's start path.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from pathlib import Path

MAX_TEXT_FILE_BYTES = 16 * 1024 * 1024
"""Bytes read from one parameter or obey file. GoldenGate documents no limit; the largest real
parameter files (thousands of MAP statements) are a few megabytes, so 16 MiB refuses nothing
real and bounds what a mistaken name (``/dev/zero``, a trail file) costs: well under a second."""


def too_large(limit: int = MAX_TEXT_FILE_BYTES) -> OSError:
    return OSError(errno.EFBIG, f"larger than {limit} bytes, the most read from a text file")


def read_bytes(path: Path, limit: int = MAX_TEXT_FILE_BYTES) -> bytes:
    """The file's bytes, at most ``limit`` (``OSError`` when there are more, or it cannot be
    read)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)  # a writer there: wait for it
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise too_large(limit)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path: Path, limit: int = MAX_TEXT_FILE_BYTES) -> str:
    """The file as UTF-8, each undecodable byte as U+FFFD (``OSError`` only)."""
    return read_bytes(path, limit).decode("utf-8", errors="replace")


def is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False


def exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return False
