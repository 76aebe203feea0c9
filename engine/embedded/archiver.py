"""The database's archiver (Oracle's ARCn): archived logs copied out to an archive destination.

The log writer stays local (``<db>/redo/t<thread>/<sequence>.log``); at each log switch the
log just archived is copied whole to the database's *archive destination*, any location of
:mod:`engine.storage` (a path, a shared mount, ``s3://...``), as
``<dest>/t<thread>/<sequence:09d>.log``: the same bytes, header included (status archived,
next SCN, recorded end). A copy appears under its name only once complete (the storage
layer's rename or completed upload), so a reader never sees a part of one. After a copy, an
empty marker ``<sequence:09d>.arc`` beside the local log says it is done; a copy that fails
(the store unreachable) is retried at the next switch and by ``ggsci db archive``.

The destination is a database parameter kept in ``<db>/archive.json``
(``{"log_archive_dest": "..."}``), set by ``ggsci db create --archive-dest`` or
``ggsci db archive-dest``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from engine import storage
from engine.embedded.errors import DatabaseError, RedoFormatError
from engine.embedded.logfile import read_header
from engine.home.jsonfile import read_json, write_json

PARAMS: Final = "archive.json"
_KEY: Final = "log_archive_dest"
_NAME: Final = re.compile(r"^(\d{9})\.log$")
MARKER: Final = ".arc"


def archive_dest(root: Path) -> str | None:
    """The archive destination of the database at ``root`` (None: none set)."""
    path = root / PARAMS
    if not path.exists():
        return None
    try:
        data = read_json(path)
        dest = data.get(_KEY) if isinstance(data, dict) else None
    except (OSError, ValueError) as exc:
        raise DatabaseError(f"{path}: unreadable archive parameters: {exc}", "GGS-SRC-0109") from (
            exc
        )
    return str(dest) if dest else None


def set_archive_dest(root: Path, dest: str | None) -> None:
    write_json(root / PARAMS, {_KEY: dest or ""})


def archived_location(dest: str, thread: int, sequence: int) -> str:
    return storage.join(dest, f"t{thread}", f"{sequence:09d}.log")


@dataclass
class Archiver:
    """Copies archived logs of ``redo_dir`` to ``dest``; called with a thread at each log
    switch (:attr:`engine.embedded.logs.LogSet.on_archived`). Failures are kept in
    ``errors`` (the database goes on; the next call retries)."""

    redo_dir: Path
    dest: str
    fsync: bool = False
    errors: list[str] = field(default_factory=list)

    @classmethod
    def for_database(cls, root: Path, *, fsync: bool = False) -> Archiver | None:
        dest = archive_dest(root)
        return cls(root / "redo", dest, fsync) if dest else None

    def __call__(self, thread: int | None = None) -> list[str]:
        """Copy every archived log not copied yet (of ``thread``, or all); the locations
        written. A failure stops the pass and is recorded in ``errors``."""
        done: list[str] = []
        for path, t, seq in self.pending(thread):
            target = archived_location(self.dest, t, seq)
            try:
                storage.put_file(path, target, fsync=self.fsync)
            except storage.StorageError as exc:
                self.errors.append(str(exc))
                break
            path.with_suffix(MARKER).touch()
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
