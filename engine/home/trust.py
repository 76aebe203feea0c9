"""Who may act on a home, and which of its files a process may believe.

- Only the home's owner acts on it: :func:`check_home_owner` compares the effective uid with
  the owner of the home directory. Root is no exception (a root GGSCI on a user's home would
  leave root-owned files the owner's processes cannot replace); run as the owner instead.
- A group or checkpoint file is believed only if the home's owner wrote it: it must be a
  regular file (not a symbolic link), owned by the home's owner, and writable by nobody else.
  Paths it names (PARAMS, REPORT, trails) are then followed as the owner's own choice.
- A file that cannot be read or parsed is reported by name (:class:`BadFile`, one line), so
  one corrupt file affects its own group only.
"""

from __future__ import annotations

import json
import os
import pwd
import stat
from pathlib import Path
from typing import Any

from engine.home import jsonfile
from engine.home.layout import Home


class BadFile(ValueError):
    """A file a process cannot use; ``str()`` is one line naming the file."""

    def __init__(self, path: Path, home: Home, reason: str, what: str = "File") -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{what} {display(path, home)} {reason}.")


class NotHomeOwner(PermissionError):
    """The effective user does not own the home; the message is one line."""


def display(path: Path, home: Home) -> str:
    """``path`` relative to the home when inside it (``dirchk/EXT1.grp``), else as given."""
    try:
        return str(path.relative_to(home.root))
    except ValueError:
        return str(path)


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def home_owner(home: Home) -> int | None:
    """The uid owning the home directory; ``None`` when it does not exist yet."""
    try:
        return home.root.stat().st_uid
    except FileNotFoundError:
        return None


def check_home_owner(home: Home, euid: int | None = None) -> None:
    """Raise :class:`NotHomeOwner` unless ``euid`` (default: ours) owns the home directory.

    A home that does not exist yet is not refused: whoever creates it owns it. A home that
    cannot be examined (a directory on the way is not searchable) is refused."""
    uid = os.geteuid() if euid is None else euid
    try:
        owner = home.root.stat().st_uid
    except FileNotFoundError:
        return
    except PermissionError:
        raise NotHomeOwner(
            f"ERROR: Home {home.root} cannot be examined by user {user_name(uid)}; "
            "only its owner may act on it."
        ) from None
    if owner != uid:
        raise NotHomeOwner(
            f"ERROR: Home {home.root} belongs to user {user_name(owner)}, not to "
            f"{user_name(uid)}; only the home's owner may act on it."
        )


def read_trusted(
    path: Path, home: Home, what: str = "File", max_bytes: int = jsonfile.MAX_BYTES
) -> bytes:
    """The bytes of ``path`` if the home's owner wrote it (at most ``max_bytes``);
    :class:`BadFile` otherwise.

    ``FileNotFoundError`` passes through (a missing file is not a bad one)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == 40:  # ELOOP: a symbolic link
            raise BadFile(path, home, "is a symbolic link; it is not used", what) from None
        raise BadFile(path, home, f"cannot be read ({exc.strerror})", what) from None
    try:
        st = os.fstat(fd)
        owner = home_owner(home)
        if not stat.S_ISREG(st.st_mode):
            raise BadFile(path, home, "is not a regular file; it is not used", what)
        problem = _not_owners(st, owner)
        if problem:
            raise BadFile(path, home, problem, what)
        if st.st_size > max_bytes:
            raise BadFile(path, home, f"is too large ({st.st_size} bytes); it is not used", what)
        chunks = []
        size = 0
        while size <= max_bytes and (chunk := os.read(fd, 1 << 20)):
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            raise BadFile(
                path, home, f"is too large (over {max_bytes} bytes); it is not used", what
            )
        return b"".join(chunks)
    finally:
        os.close(fd)


def check_trusted_dir(path: Path, home: Home, what: str = "Directory") -> None:
    """:class:`BadFile` unless ``path`` is a directory the home's owner keeps: owned by the
    owner and writable by nobody else. A symbolic link is followed only when the owner made
    it (a link another user planted is never followed). ``FileNotFoundError`` passes
    through."""
    try:
        link = os.lstat(path)
        st = os.stat(path)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise BadFile(path, home, f"cannot be examined ({exc.strerror})", what) from None
    owner = home_owner(home)
    if stat.S_ISLNK(link.st_mode) and owner is not None and link.st_uid != owner:
        raise BadFile(
            path,
            home,
            f"is a symbolic link of {user_name(link.st_uid)}, not of the home's owner "
            f"{user_name(owner)}; it is not followed",
            what,
        )
    if not stat.S_ISDIR(st.st_mode):
        raise BadFile(path, home, "is not a directory; it is not used", what)
    problem = _not_owners(st, owner)
    if problem:
        raise BadFile(path, home, problem, what)


def _not_owners(st: os.stat_result, owner: int | None) -> str | None:
    """Why a file or directory of status ``st`` is not the home owner's alone (None: it
    is)."""
    if owner is not None and st.st_uid != owner:
        return (
            f"is owned by {user_name(st.st_uid)}, not by the home's owner "
            f"{user_name(owner)}; it is not used"
        )
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"is writable by others (mode {stat.S_IMODE(st.st_mode):04o}); it is not used"
    return None


def read_trusted_json(path: Path, home: Home, what: str = "File", *, sealed: bool = True) -> Any:
    """The JSON content of a trusted file, parsed within bounds (:mod:`engine.home.jsonfile`) and
    its checksum checked (required when ``sealed``); :class:`BadFile` naming it when
    unusable."""
    raw = read_trusted(path, home, what)
    try:
        data = jsonfile.loads_bounded(raw)
        if sealed or (isinstance(data, dict) and jsonfile.CHECKSUM_KEY in data):
            return jsonfile.unseal(data, required=sealed)
        return data
    except jsonfile.JsonRefused as exc:
        raise BadFile(path, home, f"is corrupt ({exc})", what) from None


def json_reason(exc: Exception) -> str:
    """A short reason for a JSON parse failure (message, line, column)."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
    return str(exc) or type(exc).__name__


def shape_error(path: Path, home: Home, exc: Exception, what: str = "File") -> BadFile:
    """A :class:`BadFile` for JSON that parsed but has the wrong shape (a missing key...)."""
    if isinstance(exc, KeyError):
        reason = f"is corrupt (missing {exc.args[0]!r})"
    elif isinstance(exc, json.JSONDecodeError | UnicodeDecodeError):
        reason = f"is corrupt ({json_reason(exc)})"
    else:
        reason = f"is corrupt ({type(exc).__name__}: {exc})"
    return BadFile(path, home, reason, what)


UMASK_ENV = "GGSCI_UMASK"
PRIVATE_UMASK = 0o077


def private_umask(environ: dict[str, str] | None = None) -> int:
    """Set this process's umask for the files and directories it makes in a home and return
    it: 077 (the owner's alone: directories 0700, files 0600) unless ``GGSCI_UMASK`` (octal,
    e.g. ``027``) opens them on purpose; write access for others is never granted (``022``
    is always part of it). Every entry point calls this first (ggsci, the Manager, group
    processes), so a home is private whatever umask the user's shell has. Children
    (Spark's JVM, group processes) inherit it."""
    env = os.environ if environ is None else environ
    mask = PRIVATE_UMASK
    text = env.get(UMASK_ENV, "").strip()
    if text:
        try:
            mask = int(text, 8) & 0o777
        except ValueError:
            mask = PRIVATE_UMASK  # not octal: the private default
    mask |= 0o022
    os.umask(mask)
    return mask
