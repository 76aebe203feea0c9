"""The embedded database's redo log files, in Oracle's format (docs/redo_format.md, part 2).

A log file is one thread's log sequence, written by :class:`~engine.redo.onlinelog.OnlineLog`
(block 0 file header, block 1 redo log header, then LWNs of records in 512-byte blocks with
their headers and checksums), each record's change vectors packed by
:mod:`engine.redo.payloads`. Beside each online log, its side file holds the recorded end and
the progress mark (:class:`Progress`), which Oracle's format does not carry.

This module keeps the database's view of its logs: :class:`FileHeader` (thread, sequence,
SCN range, archived, recorded end), :class:`LogWriter` (append model records, flush, mark
progress, switch), :func:`read_records` (the model records whose first byte lies in a byte
range), :func:`read_frames` (their bytes undecoded, for a caller that decodes elsewhere).

A log written before this format (``GGREDO01``) is refused with one line
(:data:`OLD_FORMAT`): such a database is to be recreated.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Final

from engine.embedded.errors import RedoCorruptError, RedoFormatError, RedoTruncatedError
from engine.redo import framing as F
from engine.redo import layout as L
from engine.redo import onlinelog as O
from engine.redo import payloads as P
from engine.redo.errors import RedoError
from engine.redo.model import LocatedRecord, RedoRecord
from engine.redo.scan import record_scn, scan

BLOCK: Final = 512
BLOCK_HEAD: Final = L.BLOCK_HEADER.size
PAYLOAD: Final = BLOCK - BLOCK_HEAD
HEADER_BYTES: Final = 2 * BLOCK  # blocks 0 and 1
LWN_LIMIT: Final = 1 << 20  # an LWN ends after a commit, or when it reaches this size
ORDER: Final[L.Order] = "<"
LAYOUT: Final = "12c"
STATUS_CURRENT: Final = 0
STATUS_ARCHIVED: Final = 1
OLD_MAGIC: Final = b"GGREDO01"
OLD_FORMAT_CODE: Final = "GGS-SRC-0120"
OLD_FORMAT: Final = (
    "it was made before the embedded database wrote Oracle's redo format and its logs "
    "are no longer read: recreate the database (ggsci db drop NAME, then ggsci db create NAME)"
)
_EPOCH: Final = datetime(1970, 1, 1)
#: In-memory prefix of a frame :func:`read_frames` yields: thread, LWN time (redo time).
_FRAME_HEAD: Final = struct.Struct("<HI")


def micros_of_redo_time(value: int) -> int:
    return int((P.datetime_of(value) - _EPOCH) // timedelta(microseconds=1))


def redo_time_of_micros(us: int) -> int:
    return P.redo_time_of(_EPOCH + timedelta(microseconds=us))


# ---------------------------------------------------------------------------- headers


@dataclass(frozen=True, slots=True)
class FileHeader:
    thread: int
    sequence: int
    first_scn: int
    next_scn: int  # 0 while current
    status: int
    created_us: int
    #: The sequence of the thread's log before this one (a switch may skip numbers: an
    #: import keeps Oracle's); -1 unknown (no side file: a log copied without it).
    prev_sequence: int = -1
    #: Bytes of the file written and flushed by its writer (the side file's recorded end;
    #: the blocks the header counts once archived); 0 unknown.
    end: int = 0

    @property
    def archived(self) -> bool:
        return self.status == STATUS_ARCHIVED

    @classmethod
    def unpack(cls, data: bytes, path: Path | str = "", side: O.Side | None = None) -> FileHeader:
        """The header of a log from its first two blocks (and its side file, if any)."""
        if data[:8] == OLD_MAGIC:
            raise RedoFormatError(f"{path}: {OLD_FORMAT}", OLD_FORMAT_CODE)
        try:
            h = F.read_header(data)
        except RedoError as exc:
            kind = RedoTruncatedError if len(data) < HEADER_BYTES else RedoCorruptError
            raise kind(f"{path}: not a redo log file ({exc.message})") from None
        archived = h.next_scn != L.OPEN_SCN or (side is not None and side.archived)
        end = h.blocks * h.block_size if h.next_scn != L.OPEN_SCN else 0
        if side is not None:
            end = max(end, side.end)
        return cls(
            thread=h.thread,
            sequence=h.sequence,
            first_scn=h.first_scn,
            next_scn=0 if h.next_scn == L.OPEN_SCN else h.next_scn,
            status=STATUS_ARCHIVED if archived else STATUS_CURRENT,
            created_us=micros_of_redo_time(h.first_time),
            # without a side file (an archived copy): the thread's previous log is the one
            # numbered before it, as Oracle numbers them (its first log, 1, has none)
            prev_sequence=side.prev_sequence if side is not None else h.sequence - 1 or -1,
            end=end,
        )


def read_header(path: Path | str) -> FileHeader:
    with open(path, "rb") as fh:
        data = fh.read(HEADER_BYTES)
    return FileHeader.unpack(data, path, O.read_side(path))


@dataclass(frozen=True, slots=True)
class Progress:
    """A current log's progress mark (in its side file): every record of the thread with an
    SCN at or below ``scn`` lies before file offset ``offset`` of this log (or in an earlier
    log), and a record written later has a higher SCN. The database rewrites it whenever it
    flushes redo (for every open thread, idle ones too), so that a reader merging threads
    knows how far an idle thread has got. ``closed``: the thread is closed (its instance
    crashed); it writes nothing until it is opened again, which clears the flag first."""

    scn: int
    offset: int
    closed: bool = False


def _progress(side: O.Side | None) -> Progress | None:
    if side is None or side.archived or not side.progress_offset:
        return None
    return Progress(side.progress_scn, side.progress_offset, side.closed)


def read_head(path: Path | str) -> tuple[FileHeader, Progress | None]:
    """A log's header and progress mark."""
    side = O.read_side(path)
    with open(path, "rb") as fh:
        data = fh.read(HEADER_BYTES)
    return FileHeader.unpack(data, path, side), _progress(side)


def write_progress(path: Path | str, mark: Progress, *, fsync: bool = False) -> None:
    """Rewrite the progress mark of a log that no writer of this process has open."""
    side = O.read_side(path)
    if side is None:
        side = O.Side(end=os.path.getsize(path), first_scn=read_header(path).first_scn)
    new = replace(side, progress_scn=mark.scn, progress_offset=mark.offset, closed=mark.closed)
    O.write_side(path, new, fsync=fsync)


# ---------------------------------------------------------------------------- reading


def _extent(data: bytes, path: Path | str) -> tuple[F.LogHeader, int, bool]:
    """A log's header, where its whole LWNs end, and whether it is archived."""
    fh = FileHeader.unpack(data[:HEADER_BYTES], path, None)
    h = F.read_header(data)
    if fh.archived:
        end = h.blocks * h.block_size
        if end > len(data):
            raise RedoCorruptError(f"{path}: archived log cut short at {len(data)} of {end} bytes")
        return h, end, True
    side = O.read_side(path) if path else None
    start = side.end if side is not None and side.end <= len(data) else 2 * h.block_size
    return h, _whole_end(data, h, start), False


def _whole_end(data: bytes, h: F.LogHeader, start: int) -> int:
    b = max(2, start // h.block_size)
    while True:
        n = O._lwn_at(data, b, h)
        if not n:
            return b * h.block_size
        b += n


def _located(
    data: bytes, path: Path | str, start: int, end: int | None, after_scn: int = -1
) -> Iterator[tuple[F.Record, int, int]]:
    """Records whose first byte lies in ``[start, end)`` (and whose SCN is above
    ``after_scn``), with their LWN time, checked."""
    h, limit, _archived = _extent(data, path)
    counted = replace(h, blocks=limit // h.block_size)
    bs = h.block_size
    time = 0
    try:
        for rec in F.iter_records(memoryview(data)[:limit], counted, after_scn=after_scn):
            if rec.lwn is not None:
                time = rec.lwn.time
            off = rec.rba.block * bs + rec.rba.offset
            if end is not None and off >= end:
                return
            if off >= start:
                yield rec, off, time
    except RedoError as exc:
        raise RedoCorruptError(f"{path}: {exc.message}") from None


def _end_of(rec: F.Record, off: int) -> int:
    """File offset just past a record starting at ``off`` (block headers in between)."""
    blk, within = divmod(off, BLOCK)
    pos = (blk - 1) * PAYLOAD + within - BLOCK_HEAD + rec.size
    b2, w2 = divmod(pos, PAYLOAD)
    return (b2 + 1) * BLOCK + BLOCK_HEAD + w2


def read_records(
    path: Path | str,
    start_offset: int = 0,
    end_offset: int | None = None,
    *,
    strict: bool = False,
) -> Iterator[LocatedRecord]:
    """Records of one log file whose first byte lies in ``[start_offset, end_offset)``, as
    the redo model. A current log is read to its recorded end (an LWN after it that is not
    whole and valid is a torn tail: ``strict`` raises ``RedoTruncatedError`` for it);
    corruption raises ``RedoCorruptError``. Resume after a record from its ``end``."""
    data = Path(path).read_bytes()
    hdr = read_header(path)
    if strict:
        _h, limit, archived = _extent(data, path)
        if not archived and limit < len(data):
            raise RedoTruncatedError(f"{path}: torn tail at offset {limit}")
    for rec, off, time in _located(data, path, start_offset, end_offset):
        model = P.decode_record(rec, P.datetime_of(time), hdr.thread)
        yield LocatedRecord(model, hdr.sequence, off, _end_of(rec, off))


def read_raw(path: Path | str, after_scn: int = -1) -> Iterator[F.Record]:
    """The records of one log file as the framing reader gives them (undecoded vectors, for
    the redo room's miner), to its recorded end, those with an SCN above ``after_scn``
    only (the others are stepped over unread); corruption raises ``RedoCorruptError``."""
    data = Path(path).read_bytes()
    for rec, _off, _time in _located(data, path, 0, None, after_scn):
        yield rec


def read_frames(
    path: Path | str,
    start_offset: int = 0,
    end_offset: int | None = None,
    *,
    strict: bool = False,
) -> Iterator[tuple[int, int, bytes]]:
    """Like :func:`read_records` but yields ``(offset, end, frame)`` undecoded: ``frame`` is
    the record's bytes (block headers removed) after a 6-byte in-memory prefix (thread, its
    LWN's time); :func:`peek` reads it, :func:`decode_frame` decodes it."""
    data = Path(path).read_bytes()
    hdr = read_header(path)
    bs = BLOCK
    for rec, off, time in _located(data, path, start_offset, end_offset):
        end = _end_of(rec, off)
        raw = bytearray()
        pos = off
        while pos < end:
            nxt = min(end, (pos // bs + 1) * bs)
            raw += data[pos:nxt]
            pos = nxt + BLOCK_HEAD if nxt < end else nxt
        yield off, end, _FRAME_HEAD.pack(hdr.thread, time) + bytes(raw)


def peek(frame: bytes) -> tuple[int, int, int, int]:
    """``(thread, scn, timestamp_us, 0)`` of a frame, without decoding its vectors."""
    thread, time = _FRAME_HEAD.unpack_from(frame)
    h = L.RECORD_HEADER.unpack(frame, _FRAME_HEAD.size, ORDER)
    return thread, h["scn"] | (h["scn_wrap"] << 32), micros_of_redo_time(time), 0


def decode_frame(frame: bytes, sequence: int = 0, offset: int = 0) -> RedoRecord:
    thread, time = _FRAME_HEAD.unpack_from(frame)
    blk, within = divmod(offset, BLOCK)
    rec = F.parse_record(
        frame[_FRAME_HEAD.size :], ORDER, LAYOUT, F.Rba(sequence, blk, within), thread
    )
    return P.decode_record(rec, P.datetime_of(time), thread)


def first_scn_at(path: Path | str, offset: int) -> int | None:
    """SCN of the first whole record that starts at or after file offset ``offset`` (None:
    there is none yet)."""
    for _start, _end, frame in read_frames(path, offset, None):
        return peek(frame)[1]
    return None


def logical_floor(offset: int) -> int:
    """Stream position (block headers left out) of the first payload byte at or after
    file offset ``offset``."""
    if offset <= BLOCK:
        return 0
    blk, within = divmod(offset, BLOCK)
    return (blk - 1) * PAYLOAD + max(0, within - BLOCK_HEAD)


# ---------------------------------------------------------------------------- writing


@dataclass(frozen=True, slots=True)
class Identity:
    """What every log header of a database says about it."""

    db_name: str = "GGSCI"
    dbid: int = 0
    resetlogs_id: int = 1
    resetlogs_scn: int = 0


class LogWriter:
    """Appends records to one log file (the current log of a thread).

    Not thread-safe; one writer per file per process (the database holds a lock file).
    A record is encoded and gathered into the log's pending LWN; an LWN ends after a
    commit or rollback record (its SCN and time are that record's, as Oracle's log writer
    does) and the ended LWNs reach the OS on :meth:`flush` (called at commits, see
    ``Database.end_transaction``) or when ``buffer_limit`` bytes are gathered. Until then a
    crash of the process loses them (the file then ends at an earlier LWN, or in a torn
    tail that readers and the next writer drop); ``fsync`` makes each flush durable against
    a crash of the machine too."""

    def __init__(
        self,
        path: Path,
        thread: int,
        sequence: int,
        first_scn: int,
        created_us: int,
        *,
        fsync: bool = False,
        buffer_limit: int = 1 << 20,
        marks: bool = False,
        prev_sequence: int = -1,
        identity: Identity = Identity(),
    ) -> None:
        self.path = path
        self.buffer_limit = buffer_limit
        self.records = 0
        self.last_scn: int | None = None
        self._last_time = 0
        self._second = -1  # the last second add_vectors turned into redo time, and that time
        self._second_time = 0
        if path.exists():
            head = read_header(path)  # refuses an old-format log by name
            self.log = O.OnlineLog.reopen(path, fsync=fsync)
            sc = scan(path)  # record headers only (the C block walk when built)
            for _o, _s, buf, lo, _n, _ls, _lt in sc:
                self.records += 1
                self.last_scn = record_scn(buf, lo, ORDER)
            self.lost = self.log.lost
            self._prev = head.prev_sequence
        else:
            header = O.new_header(
                thread=thread,
                sequence=sequence,
                first_scn=first_scn,
                first_time=redo_time_of_micros(created_us),
                dbid=identity.dbid,
                db_name=identity.db_name,
                resetlogs_id=identity.resetlogs_id,
                resetlogs_scn=identity.resetlogs_scn,
                order=ORDER,
                block_size=BLOCK,
            )
            self.log = O.OnlineLog.create(path, header, prev_sequence=prev_sequence, fsync=fsync)
            self.lost = 0
            self._prev = prev_sequence
        if marks:  # the thread is open: a mark that says so, before any record is added
            side = O.read_side(path)
            if side is None or not side.progress_offset or side.closed:
                self.mark(side.progress_scn if side else 0, offset=self.log.written)

    @property
    def header(self) -> FileHeader:
        h = self.log.header
        archived = h.next_scn != L.OPEN_SCN
        return FileHeader(
            h.thread,
            h.sequence,
            h.first_scn,
            h.next_scn if archived else 0,
            STATUS_ARCHIVED if archived else STATUS_CURRENT,
            micros_of_redo_time(h.first_time),
            self._prev,
            max(self.log.written, self.log.end if archived else 0) + self.lost,
        )

    @property
    def sequence(self) -> int:
        return self.log.sequence

    @property
    def size(self) -> int:
        """Bytes in the file once pending records are flushed."""
        return self.log.size

    @property
    def buffered(self) -> int:
        """Bytes of records appended but not yet handed to the OS."""
        return self.log.size - self.log.written

    def next_rba(self) -> F.Rba:
        return self.log.next_rba()

    def append(self, record: RedoRecord) -> tuple[int, int]:
        """Append one record; returns its ``(offset, end)`` in the file."""
        vectors = b"".join(P.encode_vector(cv, ORDER, LAYOUT) for cv in record.changes)
        time = P.redo_time_of(record.timestamp)
        if record.lwn is not None or (self.log.pending and time != self._last_time):
            # an imported record that started a log write; or the clock has moved on: the
            # records of one LWN share its time (whole seconds), each record keeps its own
            self.log.end_lwn()
        self._last_time = time
        at = self.log.add(record.scn, record.subscn, vectors, self._last_time, record.vld)
        self.last_scn = record.scn
        self.records += 1
        if self.log.pending >= LWN_LIMIT or any(
            cv.layer == 5 and cv.code == 4 for cv in record.changes
        ):
            self.log.end_lwn()  # a commit or rollback ends the log write
        if self.buffered >= self.buffer_limit:
            self.flush(everything=False)
        return at

    def add_vectors(self, scn: int, micros: int, vectors: bytes, *, ends: bool = False) -> int:
        """Append a record of change vectors already in Oracle's format (the fast path's
        kernel packs them: engine/embedded/redopack.py), timestamped ``micros``, as
        :meth:`append` appends a model record (subscn 1); ``ends``: it holds a 5.4, which
        ends the log write. Returns the new :attr:`size`."""
        if micros // 1_000_000 == self._second:
            time = self._second_time
        else:
            time = redo_time_of_micros(micros)
            self._second, self._second_time = micros // 1_000_000, time
        log = self.log
        if log.pending and time != self._last_time:
            log.end_lwn()  # the clock has moved on (see append)
        self._last_time = time
        log.gather(scn, 1, vectors, time)
        self.last_scn = scn
        self.records += 1
        if ends or log.pending >= LWN_LIMIT:
            log.end_lwn()
        size = log.size
        if size - log.written >= self.buffer_limit:
            self.flush(everything=False)
        return size

    def flush(self, *, everything: bool = True) -> None:
        """Hand all redo so far to the OS (the LWN being gathered ended here). Not
        ``everything``: the ended LWNs only, the records of the LWN being gathered (no
        commit yet, less than ``LWN_LIMIT`` bytes) stay: what the database's periodic flush
        after a commit does, so that where an LWN ends does not depend on when it ran (nor
        on another thread's commits: each thread has its own log writer)."""
        if self.log.end != self.log.written or (everything and self.log.pending):
            self.log.flush(end=everything)

    def mark(self, scn: int, *, closed: bool = False, offset: int | None = None) -> None:
        """Rewrite the progress mark (:class:`Progress`) after a flush: every record of this
        thread with an SCN at or below ``scn`` is in the file, before its end (``offset``)."""
        if self.log.pending:  # records of the LWN being gathered are not in the file yet
            scn = min(scn, self.log.pending_scn - 1)
        self.log.mark(scn, offset, closed=closed)

    def close(self, *, archive: bool = False, next_scn: int = 0) -> None:
        """Flush and close; ``archive``: the log switch (the header gets the blocks in use,
        the next SCN and time; an archived log has no progress mark)."""
        self.log.close(archive=archive, next_scn=next_scn, next_time=self._last_time or (
            self.log.header.first_time))  # fmt: skip
