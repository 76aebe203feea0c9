"""The log catalogue of one database: redo threads, their sequences, switches, archives.

Layout: ``<db>/redo/t<thread>/<sequence:09d>.log``. Each thread has exactly one *current*
log (the highest sequence, status current); a log switch marks it archived (its header gets
the next SCN) and starts sequence + 1. Archived logs are kept in place, never reused.

:func:`list_logs` is what a reader (the Extract) needs: every log with thread, sequence,
first SCN, next SCN (0 for a current log) and size, cheaply (headers only).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from engine.embedded.errors import RedoFormatError
from engine.embedded.logfile import (
    OLD_FORMAT,
    OLD_FORMAT_CODE,
    OLD_MAGIC,
    Identity,
    LogWriter,
    Progress,
    read_head,
    read_header,
    write_progress,
)

_NAME = re.compile(r"^(\d{9})\.log$")


@dataclass(frozen=True, slots=True)
class LogInfo:
    thread: int
    sequence: int
    path: Path
    first_scn: int
    next_scn: int  # 0 while current
    archived: bool
    size: int
    end: int = 0  # bytes its writer recorded as written (0: unknown); archived: its size
    prev_sequence: int = -1  # the thread's log before it (-1: unknown, take sequence - 1)
    local: bool = False  # an online log read by the Extract's driver (RedoCatalog)
    location: str = ""  # where it is read when not at ``path`` (an archived copy's URI)
    task_location: str = ""  # where a Spark task reads it, if elsewhere (PATHMAP)


def thread_dir(redo_dir: Path, thread: int) -> Path:
    return redo_dir / f"t{thread}"


def log_path(redo_dir: Path, thread: int, sequence: int) -> Path:
    return thread_dir(redo_dir, thread) / f"{sequence:09d}.log"


def list_logs(redo_dir: Path, thread: int | None = None) -> list[LogInfo]:
    """All log files (optionally of one thread), sorted by thread then sequence."""
    out: list[LogInfo] = []
    if not redo_dir.is_dir():
        return out
    for tdir in sorted(redo_dir.glob("t*")):
        if not tdir.name[1:].isdigit():
            continue
        t = int(tdir.name[1:])
        if thread is not None and t != thread:
            continue
        for path in sorted(tdir.iterdir()):
            if not _NAME.match(path.name):
                continue
            try:
                h = read_header(path)
            except RedoFormatError as exc:
                if exc.code == OLD_FORMAT_CODE:
                    raise
                continue  # a file being created; its header is not written yet
            out.append(
                LogInfo(
                    h.thread,
                    h.sequence,
                    path,
                    h.first_scn,
                    h.next_scn,
                    h.archived,
                    path.stat().st_size,
                    h.end,
                    h.prev_sequence,
                )
            )
    out.sort(key=lambda i: (i.thread, i.sequence))
    return out


def database_identity(redo_dir: Path) -> Identity:
    """What every log header of the database of ``redo_dir`` says about it: its name (the
    database directory's), an id from it (DBID), one incarnation (resetlogs id 1)."""
    name = redo_dir.resolve().parent.name.upper()
    return Identity(name[:8], zlib.crc32(name.encode()), 1, 0)


def check_format(redo_dir: Path) -> None:
    """Refuse, with one line, a database whose logs are in the format before Oracle's."""
    for tdir in sorted(redo_dir.glob("t*")):
        for path in sorted(tdir.glob("*.log"))[-1:]:
            with open(path, "rb") as fh:
                if fh.read(len(OLD_MAGIC)) == OLD_MAGIC:
                    raise RedoFormatError(
                        f"log {path.name} of thread {tdir.name[1:]}: {OLD_FORMAT}", OLD_FORMAT_CODE
                    )


class LogSet:
    """The current log writer of each thread, with switch-by-size and switch-on-request.

    Given ``progress`` (the database's current SCN) and ``threads`` (how many it has), every
    :meth:`flush` also rewrites the progress mark of each open thread's current log
    (:class:`~engine.embedded.logfile.Progress`), the idle ones' too, and :meth:`close_thread`
    marks a thread closed: what a reader merging threads by SCN waits on (docs/extract.md,
    "Merging redo threads")."""

    def __init__(
        self,
        redo_dir: Path,
        max_bytes: int,
        micros: Callable[[], int],
        *,
        fsync: bool = False,
        progress: Callable[[], int] | None = None,
        threads: Callable[[], int] | None = None,
    ) -> None:
        self.redo_dir = redo_dir
        self.max_bytes = max_bytes
        self.micros = micros
        self.fsync = fsync
        self.progress = progress
        self.threads = threads
        self.writers: dict[int, LogWriter] = {}
        self.identity = database_identity(redo_dir)
        #: Called with the thread after each log switch (the database's archiver).
        self.on_archived: Callable[[int], object] | None = None
        self.closed: set[int] = set()
        # threads with no writer here: the current log and where its records end (None: no log)
        self._idle: dict[int, tuple[Path, int] | None] = {}

    def writer(self, thread: int, scn: int) -> LogWriter:
        w = self.writers.get(thread)
        if w is not None:
            return w
        marks = self.progress is not None
        logs = list_logs(self.redo_dir, thread)
        w = None
        if logs and not logs[-1].archived:
            last = logs[-1]
            w = LogWriter(
                last.path,
                thread,
                last.sequence,
                last.first_scn,
                0,
                fsync=self.fsync,
                marks=marks,
                identity=self.identity,
            )
            if w.lost:  # redo was cut from it: archived as it is, its recorded end tells
                w.close(archive=True, next_scn=max(scn, (w.last_scn or last.first_scn) + 1))
                self._archived(thread)
                logs[-1] = replace(last, archived=True)
                scn = max(scn, w.header.next_scn)
                w = None
        if w is None:
            seq = logs[-1].sequence + 1 if logs else 1
            w = LogWriter(
                log_path(self.redo_dir, thread, seq),
                thread,
                seq,
                scn,
                self.micros(),
                fsync=self.fsync,
                marks=marks,
                prev_sequence=logs[-1].sequence if logs else -1,
                identity=self.identity,
            )
        self.writers[thread] = w
        self.closed.discard(thread)
        self._idle.pop(thread, None)
        return w

    def switch(self, thread: int, next_scn: int, *, to_sequence: int | None = None) -> LogWriter:
        """Archive the current log of ``thread`` and start the next sequence (or
        ``to_sequence`` when higher: imports keep Oracle's sequence numbers)."""
        was_closed = thread in self.closed
        w = self.writer(thread, next_scn)
        seq = w.sequence + 1
        if to_sequence is not None and to_sequence > seq:
            seq = to_sequence
        prev = w.sequence
        if w.records == 0 and to_sequence is not None:
            w.close()
            w.path.unlink()  # an empty log nobody can have read: an import renumbers it
            prev = w.header.prev_sequence
        else:
            w.close(archive=True, next_scn=next_scn)
            self._archived(thread)
        nw = LogWriter(
            log_path(self.redo_dir, thread, seq),
            thread,
            seq,
            next_scn,
            self.micros(),
            fsync=self.fsync,
            marks=self.progress is not None,
            prev_sequence=prev,
            identity=self.identity,
        )
        self.writers[thread] = nw
        if was_closed:
            self.close_thread(thread)
        return nw

    def _archived(self, thread: int) -> None:
        """A log of ``thread`` was just archived: copy it out (:attr:`on_archived`, the
        database's archiver, :mod:`engine.embedded.archiver`)."""
        if self.on_archived is not None:
            self.on_archived(thread)

    def after_append(self, thread: int, next_scn: int) -> None:
        w = self.writers[thread]
        if w.size >= self.max_bytes:
            self.switch(thread, next_scn)

    def flush(self, *, everything: bool = True) -> None:
        for w in self.writers.values():
            w.flush(everything=everything)
        if self.progress is not None:
            self._mark(self.progress())

    def _mark(self, scn: int) -> None:
        """Every record with an SCN at or below ``scn`` has been handed to the OS: say so in
        the current log of every open thread."""
        for w in self.writers.values():
            w.mark(scn)
        for t in range(1, (self.threads() if self.threads else 0) + 1):
            if t in self.writers or t in self.closed:
                continue
            if t not in self._idle:
                self._idle[t] = self._adopt(t, scn)
            idle = self._idle[t]
            if idle is not None:
                write_progress(idle[0], Progress(scn, idle[1]), fsync=self.fsync)

    def _adopt(self, thread: int, scn: int) -> tuple[Path, int] | None:
        """An open thread this process has not written: its current log, when its last mark
        covers the whole file (the common case: nothing to scan); otherwise the log is opened
        for writing (its torn tail, if any, cut) and marked as a written one."""
        logs = list_logs(self.redo_dir, thread)
        if not logs:
            return None  # never written: not a thread a reader waits on yet
        last = logs[-1]
        if not last.archived:
            _, mark = read_head(last.path)
            if mark is not None and mark.closed:
                self.closed.add(thread)
                return None
            if mark is not None and mark.offset == last.size:
                return last.path, mark.offset
        self.writer(thread, scn + 1).mark(scn)
        return None

    def close_thread(self, thread: int) -> None:
        """The instance of ``thread`` is gone: its redo flushed, the thread marked closed
        (a reader stops waiting on it) until a record is written to it again."""
        w = self.writers.get(thread)
        if w is None and self.progress is not None and list_logs(self.redo_dir, thread):
            w = self.writer(thread, self.progress() + 1)
        if w is None:
            return
        del self.writers[thread]
        w.flush()
        if self.progress is not None:
            w.mark(self.progress(), closed=True)
            self.closed.add(thread)
            self._idle.pop(thread, None)
        w.close()

    def close(self) -> None:
        for w in self.writers.values():
            w.close()
        self.writers.clear()
