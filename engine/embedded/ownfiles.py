"""An embedded database's files are used only when the home's owner keeps them.

``dirdb/NAME/`` itself is checked where a name is resolved (:mod:`engine.redo.attached`); this
module checks what is inside, one by one, when a database is opened (``ggsci db ...``, the
Manager's jobs, an Extract's ``SOURCEDB``):

- the directories ``redo/`` and ``redo/tN/``: owned by the home's owner, writable by nobody
  else (a symbolic link only when the owner made it, as for ``dirdb/NAME``);
- any other directory in ``dirdb/NAME/`` as those (its content is not the database's and
  is not read; every directory in ``redo/`` is a thread's, its files checked as below);
- every other entry of ``dirdb/NAME/``, ``redo/`` and ``redo/tN/`` (``data.sqlite`` and its
  ``-wal``/``-shm``, ``dictionary.json``, ``archive.json``, the logs ``*.log``, their side
  files ``*.side``, the archived marks ``*.arc``, anything else found there): a regular
  file (never a symbolic link: the engine makes none, and a link would be written through)
  owned by the home's owner and writable by nobody else.

Another user's file, a link, or a file or directory others may write stops the open with one
line naming it (``GGS-SRC-0111``), before a byte of it is read. A directory others may write
is refused although nothing in it is wrong yet: anyone could plant a log there next. The
lock file ``lock`` is :mod:`engine.home.lockfile`'s (it refuses another user's and narrows
an older 0644 one). The files are made 0600 and the directories 0700 whatever the umask
(:func:`private_dir`, :func:`create_private`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

from engine.embedded.errors import DatabaseError
from engine.home.layout import Home
from engine.home.trust import BadFile, check_trusted_dir, home_owner, user_name

CODE: Final = "GGS-SRC-0111"
#: Entries the lock module looks after, not this one.
_LOCK: Final = "lock"


def _home(root: Path) -> Home:
    return Home(root.parent.parent)  # a database's root is its home's dirdb/NAME


def check_database_files(root: Path) -> None:
    """:class:`DatabaseError` (one line naming the file) unless every file and directory of
    the database at ``root`` is the home's owner's alone."""
    home = _home(root)
    owner = home_owner(home)
    try:
        _check_entries(root, home, owner, skip={_LOCK, "redo"}, dirs=True)
        redo = root / "redo"
        if os.path.lexists(redo):
            check_trusted_dir(redo, home, "Database directory")
            _check_entries(redo, home, owner, dirs=True)
            for entry in sorted(os.scandir(redo), key=lambda e: e.name):
                if entry.is_dir():
                    _check_entries(Path(entry.path), home, owner)
    except BadFile as exc:
        raise DatabaseError(str(exc), CODE) from None
    except OSError as exc:
        raise DatabaseError(
            f"Database {root.name} cannot be examined ({exc.strerror}: {exc.filename})", CODE
        ) from None


def _check_entries(
    where: Path, home: Home, owner: int | None, *, skip: set[str] | None = None, dirs: bool = False
) -> None:
    """Every entry of ``where`` (but ``skip``): a file of the owner's (``dirs``: a directory
    of the owner's is one too)."""
    with os.scandir(where) as it:
        entries = sorted(it, key=lambda e: e.name)
    for entry in entries:
        if skip and entry.name in skip:
            continue
        path = Path(entry.path)
        if dirs and entry.is_dir():  # follows an owner's link, checks it
            check_trusted_dir(path, home, "Database directory")
            continue
        st = entry.stat(follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            raise BadFile(
                path, home, f"is a symbolic link of {user_name(st.st_uid)}; it is not followed",
                "Database file",
            )  # fmt: skip
        if not stat.S_ISREG(st.st_mode):
            raise BadFile(path, home, "is not a regular file; it is not used", "Database file")
        if owner is not None and st.st_uid != owner:
            raise BadFile(
                path,
                home,
                f"is owned by {user_name(st.st_uid)}, not by the home's owner "
                f"{user_name(owner)}; it is not used",
                "Database file",
            )
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise BadFile(
                path,
                home,
                f"is writable by others (mode {stat.S_IMODE(st.st_mode):04o}); it is not used",
                "Database file",
            )


def private_dir(path: Path) -> None:
    """``path`` made a directory of mode 0700 (the umask cannot widen it; one that exists is
    left as it is: the open checks it)."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        return
    os.chmod(path, 0o700)


def create_private(path: Path) -> int:
    """A new file at ``path``, mode 0600 whatever the umask, never through a link; its fd."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    os.fchmod(fd, 0o600)
    return fd
