"""The database's archiver (Oracle's ARCn): archived logs copied out to an archive destination.

The log writer stays local (``<db>/redo/t<thread>/<sequence>.log``); at each log switch the
log just archived is copied whole to the database's *archive destination* (LOG_ARCHIVE_DEST),
any location of :mod:`engine.storage` (a path, a shared mount, ``s3://...``), under the name
its LOG_ARCHIVE_FORMAT gives (:mod:`engine.redo.archnames`; Oracle's Unix default
``%t_%s_%r.dbf``: ``1_7_1.dbf`` is thread 1's sequence 7 of incarnation 1): the same bytes,
header included, so that the directory is an Oracle archive location as it is and
``ggsci db attach X --archive DEST --format FMT`` reads it. The thread, resetlogs id and
database id of a name are the log's own header's. A copy appears under its name only once
complete (the storage layer's rename or completed upload), so a reader never sees a part of
one. After a copy, an empty marker ``<sequence:09d>.arc`` beside the local log says it is
done; a copy that fails (the store unreachable) is retried at the next switch and by
``ggsci db archive``.

Both are database parameters kept in ``<db>/archive.json``
(``{"log_archive_dest": "...", "log_archive_format": "%t_%s_%r.dbf"}``): the destination set
by ``ggsci db create --archive-dest`` or ``ggsci db archive-dest``, the format by
``ggsci db create --archive-format`` only (Oracle's is not modifiable either: a new format
would hide the archives named by the old one from every reader). A destination's secret
(``s3://KEY:SECRET@...``) is not written there: it is kept in the home's credential store
(:mod:`engine.home.storagecreds`, alias ``ARCHIVEDEST_NAME``) and put back when read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from engine import storage
from engine.embedded.errors import DatabaseError, RedoFormatError
from engine.embedded.logfile import read_header
from engine.embedded.logs import database_identity
from engine.home import storagecreds
from engine.home.jsonfile import read_json, write_json
from engine.home.layout import Home
from engine.redo.archnames import DEFAULT_FORMAT, archive_name, format_problem
from engine.redo.catalog import read_log_header
from engine.redo.errors import RedoError

PARAMS: Final = "archive.json"
_DEST: Final = "log_archive_dest"
_FORMAT: Final = "log_archive_format"
_NAME: Final = re.compile(r"^(\d{9})\.log$")
MARKER: Final = ".arc"


@dataclass(frozen=True, slots=True)
class ArchiveParams:
    """LOG_ARCHIVE_DEST (None: no archiving) and LOG_ARCHIVE_FORMAT of one database."""

    dest: str | None = None
    format: str = DEFAULT_FORMAT


def archive_params(root: Path) -> ArchiveParams:
    """The archive parameters of the database at ``root`` (a database made before the
    format was a parameter: the default format)."""
    path = root / PARAMS
    if not path.exists():
        return ArchiveParams()
    try:
        data = read_json(path)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        dest, fmt = data.get(_DEST), data.get(_FORMAT)
    except (OSError, ValueError) as exc:
        raise DatabaseError(f"{path}: unreadable archive parameters: {exc}", "GGS-SRC-0109") from (
            exc
        )
    dest = storagecreds.restore(_home(root), str(dest), _alias(root)) if dest else None
    return ArchiveParams(dest, str(fmt) if fmt else DEFAULT_FORMAT)


def _home(root: Path) -> Home:
    return Home(root.parent.parent)  # a database's root is its home's dirdb/NAME


def _alias(root: Path) -> str:
    """The credential store alias of the destination's secret."""
    return f"ARCHIVEDEST_{root.name}"


def forget_dest_secret(root: Path) -> None:
    """The destination's secret out of the credential store (the database is dropped)."""
    storagecreds.forget(_home(root), _alias(root))


def archive_dest(root: Path) -> str | None:
    """The archive destination of the database at ``root`` (None: none set)."""
    return archive_params(root).dest


def checked_format(fmt: str) -> str:
    """``fmt`` as a LOG_ARCHIVE_FORMAT the database writes with; one line when it cannot be."""
    problem = format_problem(fmt, writing=True)
    if problem is not None:
        raise DatabaseError(problem, "GGS-SRC-0110")
    return fmt


def set_archive_params(root: Path, params: ArchiveParams) -> None:
    checked_format(params.format)
    try:
        dest = storagecreds.keep(_home(root), params.dest or "", _alias(root))
    except storagecreds.StorageCredentialError as exc:
        raise DatabaseError(str(exc), "GGS-SRC-0109") from None
    write_json(root / PARAMS, {_DEST: dest, _FORMAT: params.format})


def set_archive_dest(root: Path, dest: str | None) -> None:
    """A new destination (None: stop archiving); the format stays."""
    set_archive_params(root, ArchiveParams(dest, archive_params(root).format))


def archived_location(dest: str, fmt: str, log: Path | str) -> str:
    """Where the archived log ``log`` (a local log file, or an archived copy anywhere) is
    copied under ``dest`` with the name ``fmt`` gives it from its header."""
    try:
        h = read_log_header(str(log))
    except RedoError as exc:
        raise RedoFormatError(exc.message, exc.code) from None
    name = archive_name(
        fmt,
        thread=h.thread,
        sequence=h.sequence,
        resetlogs_id=h.resetlogs_id,
        dbid=h.dbid,
        activation=h.activation,
    )
    return storage.join(dest, name)


def archived_copy(root: Path, thread: int, sequence: int) -> str | None:
    """The location of the archived copy of ``thread``'s log ``sequence`` of the database
    at ``root`` (None: no destination), named from the database's identity (what its log
    headers say: :func:`engine.embedded.logs.database_identity`)."""
    params = archive_params(root)
    if params.dest is None:
        return None
    ident = database_identity(root / "redo")
    name = archive_name(
        params.format,
        thread=thread,
        sequence=sequence,
        resetlogs_id=ident.resetlogs_id,
        dbid=ident.dbid,
    )
    return storage.join(params.dest, name)


@dataclass
class Archiver:
    """Copies archived logs of ``redo_dir`` to ``dest`` named by ``fmt``; called with a
    thread at each log switch (:attr:`engine.embedded.logs.LogSet.on_archived`). Failures
    are kept in ``errors`` (the database goes on; the next call retries)."""

    redo_dir: Path
    dest: str
    fmt: str = DEFAULT_FORMAT
    fsync: bool = False
    errors: list[str] = field(default_factory=list)

    @classmethod
    def for_database(cls, root: Path, *, fsync: bool = False) -> Archiver | None:
        params = archive_params(root)
        if not params.dest:
            return None
        return cls(root / "redo", params.dest, params.format, fsync)

    def __call__(self, thread: int | None = None) -> list[str]:
        """Copy every archived log not copied yet (of ``thread``, or all); the locations
        written. A failure stops the pass and is recorded in ``errors``."""
        done: list[str] = []
        for path, _t, _seq in self.pending(thread):
            try:
                target = archived_location(self.dest, self.fmt, path)
                storage.put_file(path, target, fsync=self.fsync)
            except (storage.StorageError, RedoFormatError) as exc:
                self.errors.append(str(exc))
                break
            path.with_suffix(MARKER).touch(mode=0o600)
            done.append(target)
        return done

    def pending(self, thread: int | None = None) -> list[tuple[Path, int, int]]:
        """``(path, thread, sequence)`` of the archived logs without a copy, in order."""
        out: list[tuple[Path, int, int]] = []
        if not self.redo_dir.is_dir():
            return out
        for tdir in sorted(self.redo_dir.glob("t*")):
            if not tdir.name[1:].isdigit() or (thread is not None and int(tdir.name[1:]) != thread):
                continue
            for path in sorted(tdir.iterdir()):
                m = _NAME.match(path.name)
                if m is None or path.with_suffix(MARKER).exists():
                    continue
                try:
                    if not read_header(path).archived:
                        continue  # the current log
                except RedoFormatError:
                    continue
                out.append((path, int(tdir.name[1:]), int(m.group(1))))
        return out
