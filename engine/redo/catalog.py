"""Archived logs in a location (a directory, a shared mount, ``s3://``: engine.storage),
known by their headers: thread, sequence, SCN range, resetlogs id, version. And the chain an
Extract reads: one thread's logs from a sequence on, with no gap and no other incarnation.

Names are filtered by a LOG_ARCHIVE_FORMAT (``%t_%s_%r.dbf``; its variables:
:mod:`engine.redo.archnames`); the header, not the name, says what a log is.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from engine import storage
from engine.redo.archnames import DEFAULT_FORMAT, format_problem, format_regex
from engine.redo.errors import RedoError
from engine.redo.framing import LogHeader, read_header

HEADER_BYTES = 2 * 4096  # blocks 0 and 1 at the largest block size


class MissingLogError(RedoError):
    """OGG-00446: the next sequence of a thread is not in the archive location."""

    default_code = "OGG-00446"


class IncarnationError(RedoError):
    default_code = "OGG-02028"


@dataclass(frozen=True)
class LogFile:
    location: str
    size: int
    header: LogHeader

    @property
    def thread(self) -> int:
        return self.header.thread

    @property
    def sequence(self) -> int:
        return self.header.sequence


def read_log_header(location: str) -> LogHeader:
    data = storage.read_range(location, 0, HEADER_BYTES)
    try:
        return read_header(data)
    except RedoError as exc:
        raise type(exc)(f"{storage.describe(location)}: {exc.message}", exc.offset) from exc


def list_logs(
    location: str,
    fmt: str | None = DEFAULT_FORMAT,
    known: dict[tuple[str, int], LogHeader] | None = None,
) -> list[LogFile]:
    """Every archived log under ``location`` whose name matches ``fmt``, by (thread,
    sequence). A matching file that is not a redo log is an error naming it; with no format
    (None), every file that is a redo log by its header. ``known``: headers read before, by
    (location, size) (an archived log does not change), read again for no file. A format
    without %s (it cannot tell sequences apart) is a RedoError, a local location that is not
    a directory a StorageError: neither lists nothing as if the logs were not archived yet."""
    problem = format_problem(fmt, writing=False) if fmt is not None else None
    if problem:
        raise RedoError(problem)
    if storage.is_local(location) and not storage.local_path(location).is_dir():
        raise storage.StorageError(f"{location} is not a directory", missing=True)
    pattern = format_regex(fmt) if fmt else None
    logs = []
    for e in storage.list_files(location):
        path = urlsplit(e.location).path if "://" in e.location else e.location
        name = path.rstrip("/").rsplit("/", 1)[-1]
        if pattern and not pattern.match(name):
            continue
        seen = known.get((e.location, e.size)) if known is not None else None
        if seen is not None:
            logs.append(LogFile(e.location, e.size, seen))
            continue
        try:
            header = read_log_header(e.location)
            if known is not None:
                known[(e.location, e.size)] = header
        except RedoError:
            if pattern:
                raise
            continue  # no format given: files that are not redo logs are not listed
        logs.append(LogFile(e.location, e.size, header))
    return sorted(logs, key=lambda f: (f.thread, f.sequence, f.header.resetlogs_id))


def chain(
    logs: list[LogFile], thread: int, start_sequence: int, resetlogs_id: int | None, where: str
) -> list[LogFile]:
    """``thread``'s logs from ``start_sequence`` on, in order, consecutive. A gap is OGG-00446
    naming the sequence; a log of another incarnation is refused by name."""
    mine = [f for f in logs if f.thread == thread and f.sequence >= start_sequence]
    if resetlogs_id is None and mine:
        resetlogs_id = min(mine, key=lambda f: f.sequence).header.resetlogs_id
    out: list[LogFile] = []
    expect = start_sequence
    for f in mine:
        if f.header.resetlogs_id != resetlogs_id:
            raise IncarnationError(
                f"{storage.describe(f.location)} belongs to incarnation {f.header.resetlogs_id}, "
                f"not {resetlogs_id}: refused"
            )
        if f.sequence != expect:
            break
        out.append(f)
        expect += 1
    if not out:
        raise MissingLogError(
            f"Could not find archived log for sequence {expect} thread {thread} under {where}"
        )
    later = [f.sequence for f in mine if f.sequence > expect]
    if later:
        raise MissingLogError(
            f"Could not find archived log for sequence {expect} thread {thread} under {where}"
        )
    return out
