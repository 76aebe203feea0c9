"""The log catalogue of one database: redo threads, their sequences, switches, archives.

Layout: ``<db>/redo/t<thread>/<sequence:09d>.log``. Each thread has exactly one *current*
log (the highest sequence, status current); a log switch marks it archived (its header gets
the next SCN) and starts sequence + 1. Archived logs are kept in place, never reused.

:func:`list_logs` is what a reader (the Extract) needs: every log with thread, sequence,
first SCN, next SCN (0 for a current log) and size, cheaply (headers only).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine.source.errors import RedoFormatError
from engine.source.logfile import LogWriter, read_header

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
            except RedoFormatError:
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
                )
            )
    out.sort(key=lambda i: (i.thread, i.sequence))
    return out


@dataclass(frozen=True, slots=True)
class Split:
    """A byte range of one log for one reader task: ``read_records(path, start, end)``."""

    path: Path
    thread: int
    sequence: int
    start: int
    end: int | None  # None: to the end of the file (a current log keeps growing)


def plan_splits(logs: list[LogInfo], split_bytes: int) -> list[Split]:
    """Cut logs into ranges of about ``split_bytes`` (never across files). Each record is in
    exactly one split (``read_records`` takes records *starting* in its range)."""
    if split_bytes <= 0:
        raise ValueError("split_bytes must be positive")
    out: list[Split] = []
    for info in logs:
        start = 0
        while start + split_bytes < info.size:
            out.append(Split(info.path, info.thread, info.sequence, start, start + split_bytes))
            start += split_bytes
        out.append(Split(info.path, info.thread, info.sequence, start, None))
    return out


class LogSet:
    """The current log writer of each thread, with switch-by-size and switch-on-request."""

    def __init__(
        self,
        redo_dir: Path,
        max_bytes: int,
        micros: Callable[[], int],
        *,
        fsync: bool = False,
    ) -> None:
        self.redo_dir = redo_dir
        self.max_bytes = max_bytes
        self.micros = micros
        self.fsync = fsync
        self.writers: dict[int, LogWriter] = {}

    def writer(self, thread: int, scn: int) -> LogWriter:
        w = self.writers.get(thread)
        if w is not None:
            return w
        logs = list_logs(self.redo_dir, thread)
        if logs and not logs[-1].archived:
            last = logs[-1]
            w = LogWriter(last.path, thread, last.sequence, last.first_scn, 0, fsync=self.fsync)
        else:
            seq = logs[-1].sequence + 1 if logs else 1
            w = LogWriter(
                log_path(self.redo_dir, thread, seq),
                thread,
                seq,
                scn,
                self.micros(),
                fsync=self.fsync,
            )
        self.writers[thread] = w
        return w

    def switch(self, thread: int, next_scn: int, *, to_sequence: int | None = None) -> LogWriter:
        """Archive the current log of ``thread`` and start the next sequence (or
        ``to_sequence`` when higher: imports keep Oracle's sequence numbers)."""
        w = self.writer(thread, next_scn)
        seq = w.sequence + 1
        if to_sequence is not None and to_sequence > seq:
            seq = to_sequence
        if w.records == 0 and to_sequence is not None:
            w.close()
            w.path.unlink()  # an empty log nobody can have read: an import renumbers it
        else:
            w.close(archive=True, next_scn=next_scn)
        nw = LogWriter(
            log_path(self.redo_dir, thread, seq),
            thread,
            seq,
            next_scn,
            self.micros(),
            fsync=self.fsync,
        )
        self.writers[thread] = nw
        return nw

    def after_append(self, thread: int, next_scn: int) -> None:
        w = self.writers[thread]
        if w.size >= self.max_bytes:
            self.switch(thread, next_scn)

    def flush(self) -> None:
        for w in self.writers.values():
            w.flush()

    def close(self) -> None:
        for w in self.writers.values():
            w.flush()
            w.fh.close()
        self.writers.clear()
