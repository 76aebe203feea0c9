"""Lock files of a home: the owner's alone, and a holder that is not ours named as such.

Every lock file of a home (``dirpcs/<file>.lck`` instance locks, ``dirdb/<DB>/lock``, a
trail's ``<prefix>.lock``) is opened through :func:`open_lock_file`: created mode 0600 (no other
user may open it at all, so none can take a lock on it), never through a symbolic link, and
refused when another user owns it; a file left wider by an older version is set to 0600 when
it is opened.

A lock another user took before that (on a file still readable by others) must not pass for
a running group of ours: :func:`foreign_holder` finds who holds a lock on a file from
``/proc/locks`` (``flock`` locks carry the holder's pid) and ``/proc/<pid>/fdinfo`` (open-file-
description locks do not), and names the holder when it is a process of another user.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from engine.home.trust import user_name

MODE = 0o600


class ForeignLockFile(PermissionError):
    """A lock file owned by another user (never opened for locking); one line."""


def open_lock_file(path: Path, flags: int = os.O_RDWR) -> int:
    """An fd on lock file ``path`` (created 0600 when missing, its mode made 0600)."""
    fd = os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, MODE)
    try:
        st = os.fstat(fd)
        if st.st_uid != os.geteuid():
            raise ForeignLockFile(
                f"Lock file {path} belongs to user {user_name(st.st_uid)}, not to "
                f"{user_name(os.geteuid())}; remove it."
            )
        if stat.S_IMODE(st.st_mode) != MODE:
            os.fchmod(fd, MODE)  # an older version's 0644: no other user opens it again
    except BaseException:
        os.close(fd)
        raise
    return fd


def _file_id(path: Path) -> tuple[str, int] | None:
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}", st.st_ino


def _matches(line: str, ident: tuple[str, int]) -> bool:
    return f"{ident[0]}:{ident[1]} " in line


def _holder_pids(ident: tuple[str, int]) -> set[int]:
    """Pids holding a lock on the file ``ident`` (device, inode): ``flock`` / POSIX locks
    name theirs in /proc/locks; an OFD lock (pid -1 there) is found in the fdinfo of the
    processes whose fds this user may read."""
    pids: set[int] = set()
    ofd = False
    with contextlib.suppress(OSError):
        for line in Path("/proc/locks").read_text().splitlines():
            if _matches(line, ident):
                fields = line.split()
                pid = int(fields[4]) if fields[4].lstrip("-").isdigit() else -1
                if pid > 0:
                    pids.add(pid)
                else:
                    ofd = True
    if ofd:
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit() and _holds_ofd(proc, ident):
                pids.add(int(proc.name))
    return pids


def _holds_ofd(proc: Path, ident: tuple[str, int]) -> bool:
    try:
        for info in (proc / "fdinfo").iterdir():
            with contextlib.suppress(OSError):
                text = info.read_text()
                if "lock:" in text and any(
                    _matches(line, ident) for line in text.splitlines() if "lock:" in line
                ):
                    return True
    except OSError:
        return False  # another user's process: its fds are not ours to read
    return False


def _uid_of(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def foreign_holder(path: Path) -> str | None:
    """``process <pid> of user <name>`` when a process of another user holds a lock on
    ``path``; ``a process of another user`` when the holder cannot be seen but none of ours
    holds it; None when the holder is one of ours (or nobody)."""
    ident = _file_id(path)
    if ident is None:
        return None
    pids = _holder_pids(ident)
    me = os.geteuid()
    for pid in sorted(pids):
        uid = _uid_of(pid)
        if uid is not None and uid != me:
            return f"process {pid} of user {user_name(uid)}"
    if pids:
        return None
    return "a process of another user"
