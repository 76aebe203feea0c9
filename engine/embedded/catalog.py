"""Where the Extract finds redo, and whether it is whole: online logs, archived copies, gaps.

A :class:`RedoCatalog` lists the logs of every thread from two kinds of place:

- the database's *online* redo directory (``<db>/redo``), when the Extract can see it: the
  current log of each thread and the archived logs not copied out yet;
- *archive destinations* (any :mod:`engine.storage` location): TRANLOGOPTIONS
  ALTARCHIVELOGDEST, else the database's own archive destination (LOG_ARCHIVE_DEST,
  :mod:`engine.embedded.archiver`). The logs there are the files whose names the archive
  format gives (TRANLOGOPTIONS ALTARCHIVEDLOGFORMAT, else the database's LOG_ARCHIVE_FORMAT;
  :mod:`engine.redo.archnames`), and each is what its header says (thread, sequence, SCNs),
  whatever its name. An archived log found there is read there, by the Spark tasks; an
  online log is then read by the Extract's driver (``LogInfo.local``), since the tasks may
  run where that directory is not. Without an archive destination everything is read from
  the online directory, by the tasks (one machine, or a redo directory every node mounts
  at the same path). TRANLOGOPTIONS ARCHIVEDLOGONLY: archives only, never online logs.

:meth:`RedoCatalog.for_reading` lists what a reader at ``positions`` still needs and checks
that it is whole (:func:`check_continuity`): no sequence missing in a thread (a header names
its predecessor: a switch may skip numbers on purpose), each log's SCN range starting where
the previous one's ended, no log shorter than its writer recorded, no read position past
the end of its log. A break is a :class:`RedoGapError` (OGG-00446) naming the thread, the
sequences and the positions; the Extract abends with it instead of skipping the lost redo.
"""

from __future__ import annotations

import itertools
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

from engine import storage
from engine.embedded.archiver import archive_params
from engine.embedded.errors import RedoFormatError
from engine.embedded.logfile import HEADER_BYTES, FileHeader, logical_floor
from engine.embedded.logs import LogInfo, list_logs
from engine.redo.archnames import DEFAULT_FORMAT, format_regex
from engine.redo.scan import Scan, record_scn
from engine.storage import PathMap


class RedoGapError(RedoFormatError):
    """Redo the Extract needs is missing, cut short, out of order or unreadable."""

    default_code = "OGG-00446"


class _Position(Protocol):
    @property
    def sequence(self) -> int: ...

    @property
    def offset(self) -> int: ...


class _Tranlog(Protocol):
    """What the catalog takes from TRANLOGOPTIONS (params.models.TranlogOptions)."""

    @property
    def archived_log_only(self) -> bool: ...

    @property
    def alt_archive_log_dests(self) -> tuple[str, ...]: ...

    @property
    def alt_archived_log_format(self) -> str | None: ...

    @property
    def path_map(self) -> tuple[tuple[str, str], ...]: ...


@dataclass
class RedoCatalog:
    online: Path | None
    archives: tuple[str, ...] = ()
    path_map: PathMap = field(default_factory=PathMap)
    archive_format: str = DEFAULT_FORMAT  # the names of the archived logs in ``archives``
    # headers of archived copies (they never change), by location
    _headers: dict[str, FileHeader] = field(default_factory=dict, repr=False)

    @classmethod
    def for_extract(cls, source_root: Path, tranlog: _Tranlog | None = None) -> RedoCatalog:
        """The catalog an Extract reads through, from its TRANLOGOPTIONS."""
        if tranlog is None:
            return cls(source_root / "redo")
        params = archive_params(source_root)
        dests = tuple(tranlog.alt_archive_log_dests)
        if not dests:
            dests = (params.dest,) if params.dest else ()
        if tranlog.archived_log_only and not dests:
            raise RedoGapError(
                "TRANLOGOPTIONS ARCHIVEDLOGONLY needs an archive destination: "
                "ALTARCHIVELOGDEST, or the database's (ggsci db archive-dest)"
            )
        online = None if tranlog.archived_log_only else source_root / "redo"
        fmt = tranlog.alt_archived_log_format or params.format
        return cls(online, dests, PathMap(tuple(tranlog.path_map)), fmt)

    # -- listing ------------------------------------------------------------------------
    def logs(self, thread: int | None = None) -> list[LogInfo]:
        """Every log found, one per (thread, sequence), sorted: an archived copy where
        there is a whole one, else the online log."""
        found: dict[tuple[int, int], LogInfo] = {}
        if self.online is not None:
            for info in list_logs(self.online, thread):
                found[(info.thread, info.sequence)] = (
                    replace(info, local=True) if self.archives else info
                )
        taken: set[tuple[int, int]] = set()  # the first destination that has a log wins
        for dest in self.archives:
            for info in self._archived(dest, thread):
                key = (info.thread, info.sequence)
                mine = found.get(key)
                if key in taken or (mine is not None and _short(info) and not _short(mine)):
                    continue  # a copy cut short, where the online log is whole
                found[key] = info
                taken.add(key)
        out = []
        for k in sorted(found):
            info = found[k]
            where = info.location or str(info.path)
            task = self.path_map.for_task(where)
            out.append(replace(info, task_location=task) if task != where else info)
        return out

    def _archived(self, dest: str, thread: int | None) -> list[LogInfo]:
        out = []
        named = format_regex(self.archive_format)
        for entry in storage.list_files(dest):
            local = storage.is_local(entry.location)
            name = (entry.location if local else urlsplit(entry.location).path).rsplit("/", 1)[-1]
            if not named.match(name) or entry.location != storage.join(dest, name):
                continue  # not an archived log's name, or in a directory below
            h = self._headers.get(entry.location)
            shown = storage.describe(entry.location)
            if h is None:
                try:
                    h = FileHeader.unpack(
                        storage.read_range(entry.location, 0, HEADER_BYTES), shown
                    )
                except (RedoFormatError, storage.StorageError) as exc:
                    raise RedoGapError(f"archived log unreadable: {exc}") from None
                self._headers[entry.location] = h
            if thread is not None and h.thread != thread:
                continue
            out.append(
                LogInfo(
                    h.thread,
                    h.sequence,
                    storage.local_path(entry.location) if local else Path(shown),
                    h.first_scn,
                    h.next_scn,
                    h.archived,
                    entry.size,
                    h.end,
                    h.prev_sequence,
                    location=entry.location,
                )
            )
        return out

    def for_reading(self, positions: Mapping[int, _Position]) -> list[LogInfo]:
        """The logs, checked whole from ``positions`` (thread → next record) on."""
        logs = self.logs()
        check_continuity(logs, positions)
        return logs


def log_header(info: LogInfo) -> FileHeader:
    """The file header of ``info``, read where the log is (online, or an archived copy)."""
    where = info.location or str(info.path)
    try:
        return FileHeader.unpack(
            storage.read_range(where, 0, HEADER_BYTES), storage.describe(where)
        )
    except (RedoFormatError, storage.StorageError) as exc:
        raise RedoGapError(f"redo log unreadable: {exc}") from None


def record_heads(info: LogInfo) -> Generator[tuple[int, int, int]]:
    """``(offset, scn, timestamp_us)`` of each record of ``info``, in log order, read where
    the log is (the online directory, or an archived copy: any :mod:`engine.storage`
    location); a torn tail of a current log ends it."""
    sc = Scan(info.location or info.path)
    for offset, _end, buf, lo, _length, _lwn_scn, lwn_time in sc:
        assert sc.header is not None
        yield offset, record_scn(buf, lo, sc.header.order), sc.micros(lwn_time)


def check_continuity(logs: list[LogInfo], positions: Mapping[int, _Position]) -> None:
    """Raise :class:`RedoGapError` for the first break in what a reader at ``positions``
    still has to read (``logs`` sorted by thread and sequence)."""
    by_thread: dict[int, list[LogInfo]] = {}
    for info in logs:
        by_thread.setdefault(info.thread, []).append(info)
    for t, infos in sorted(by_thread.items()):
        pos = positions.get(t)
        needed = [i for i in infos if pos is None or i.sequence >= pos.sequence]
        if pos is not None and needed:
            _check_position(t, pos, needed[0])
        for a, b in itertools.pairwise(needed):
            _check_pair(t, a, b)
        for i in needed:
            _check_whole(t, i)


def _prev(info: LogInfo) -> int:
    return info.prev_sequence if info.prev_sequence >= 0 else info.sequence - 1


def _check_position(t: int, pos: _Position, first: LogInfo) -> None:
    if first.sequence == pos.sequence:
        # a record that ends its block's payload resumes in the next block, 16 bytes past a
        # file that ends at that block boundary: compare stream positions, not offsets
        if logical_floor(pos.offset) > logical_floor(first.size):
            raise RedoGapError(
                f"Redo thread {t} sequence {first.sequence}: the read position, RBA "
                f"{pos.offset}, is past the end of the log ({first.size} bytes): redo was "
                f"lost from {storage.describe(first.path)}"
            )
        return
    if pos.offset > 0 or _prev(first) >= pos.sequence:
        raise RedoGapError(
            f"Redo thread {t}: log sequence {pos.sequence} (read position RBA {pos.offset}) "
            f"is missing; the next log found is sequence {first.sequence}"
        )


def _check_pair(t: int, a: LogInfo, b: LogInfo) -> None:
    prev = _prev(b)
    if prev != a.sequence:
        lo, hi = a.sequence + 1, max(prev, a.sequence + 1)
        missing = f"sequence {lo}" if lo == hi else f"sequences {lo} to {hi}"
        raise RedoGapError(
            f"Redo thread {t}: log {missing} missing between sequence {a.sequence} (next SCN "
            f"{a.next_scn}) and sequence {b.sequence} (first SCN {b.first_scn})"
        )
    if a.archived and b.first_scn < a.next_scn:
        raise RedoGapError(
            f"Redo thread {t}: sequence {b.sequence} starts at SCN {b.first_scn}, below the "
            f"next SCN {a.next_scn} of sequence {a.sequence}"
        )


def _short(info: LogInfo) -> bool:
    return bool(info.end) and info.size < info.end


def _check_whole(t: int, info: LogInfo) -> None:
    if _short(info):
        kind = "archived log" if info.archived else "online log"
        raise RedoGapError(
            f"Redo thread {t} sequence {info.sequence}: the {kind} ends at RBA {info.size}, "
            f"{info.end - info.size} bytes short of the RBA {info.end} its writer recorded "
            f"({storage.describe(info.path)}): redo was lost"
        )
