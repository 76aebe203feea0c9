"""Our redo file format: 512-byte blocks, checksummed records, splittable by byte range.

A log file is one thread's log sequence ``seq``::

    block 0      file header (thread, sequence, first SCN, next SCN, status, CRC)
    block 1..n   16-byte block header + 496 bytes of the record stream

    block header := magic u16 (0x4752), first u16, block u32, sequence u32, crc32 u32
                    ``first`` = offset in this block of the first record boundary
                    (16..511), 0 when a record covers the whole block
    record frame := length u32, crc32 u32 (of the payload), payload (redo_codec)

Records are a continuous stream cut into the blocks' payload areas, so a record may span
blocks. A reader given any byte offset finds the first record boundary at or after it
from the block headers alone: this is what makes a big log splittable across Spark tasks
(:func:`read_records` yields the records that *start* in ``[start, end)``, reading past
``end`` to finish the last one). The RBA of a record is ``(sequence, block, offset)`` of its
frame's first byte; ``LocatedRecord.offset == block * 512 + offset``.

Appending writes whole frames; a crash can leave a partial frame at the tail (a *torn
tail*): readers of the current log stop before it (or raise
:class:`~engine.embedded.errors.RedoTruncatedError` when ``strict``), the writer truncates it
when it reopens the file, and in an archived log it is corruption.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO, Final

from engine import _native
from engine.embedded.errors import RedoCorruptError, RedoTruncatedError
from engine.embedded.ids import Rba
from engine.embedded.redo import LocatedRecord, RedoRecord
from engine.embedded.redo_codec import LAYOUT, decode_record, encode_record

BLOCK: Final = 512
BLOCK_HEAD: Final = 16
PAYLOAD: Final = BLOCK - BLOCK_HEAD
BLOCK_MAGIC: Final = 0x4752
FILE_MAGIC: Final = b"GGREDO01"
MAX_RECORD: Final = 256 * 1024 * 1024
_BHEAD: Final = struct.Struct("<HHII")
_FRAME: Final = struct.Struct("<II")
_FHEAD: Final = struct.Struct("<8sHHIIQQBq")
#: The header's extension (at :data:`_FEXT_AT`, after the header's CRC; absent in older
#: files): magic, the sequence of the thread's previous log (0xFFFFFFFF: none), how many
#: bytes of the file the writer has written (its recorded end), CRC of those.
_FEXT: Final = struct.Struct("<4sIQ")
_FEXT_AT: Final = 64
_FEXT_MAGIC: Final = b"GGX1"
_NO_SEQUENCE: Final = 0xFFFFFFFF
_U32: Final = struct.Struct("<I")
_REC_HEAD: Final = LAYOUT["REC_HEAD"]
_REC_IDS: Final = struct.Struct("<HBBI")  # REC_HEAD's first four fields
# REC_HEAD with those four as one packed run: block, offset, length, scn, subscn, ts, count
_NATIVE_HEAD: Final = struct.Struct("<8sIHIQHqH")
STATUS_CURRENT: Final = 0
STATUS_ARCHIVED: Final = 1
READ_CHUNK_BLOCKS: Final = 2048  # 1 MiB per read
_SCN_AT: Final = 18  # offset of the SCN in a record payload (redo_codec REC_HEAD)


def native_frame(
    rec_ids: bytes, logical: int, scn: int, micros: int, n_changes: int, changes: bytes
) -> bytes:
    """The frame of a native record made of encoded change vectors, at stream position
    ``logical``: its head is ``rec_ids`` (:attr:`LogWriter.rec_ids`), the RBA where it
    lands, SCN, subscn 1, timestamp (microseconds) and change count."""
    blk, within = divmod(logical, PAYLOAD)
    pos = blk * BLOCK + (BLOCK + BLOCK_HEAD) + within
    payload = (
        _NATIVE_HEAD.pack(rec_ids, pos >> 9, pos & 0x1FF, 0, scn, 1, micros, n_changes) + changes
    )
    return _FRAME.pack(len(payload), zlib.crc32(payload)) + payload


def cut_blocks(data: bytes, start: int, sequence: int) -> bytes:
    """The record stream ``data`` (whole frames, from stream position ``start`` on) cut into
    the blocks' payload areas, each block headed by its header. A block is opened (its
    header written) by the first byte that goes into it; its ``first`` field is the first
    record boundary inside it, and every boundary is known by then: the start of a frame in
    ``data``, or its end, where the next record will start. When ``start`` is inside a
    block, that block was opened before: ``data`` first fills its rest.

    Compiled in ``engine/_native/redopack.c`` (:data:`_CUT_BLOCKS`)."""
    out = bytearray()
    pos = start
    rest = 0
    within = pos % PAYLOAD
    if within:
        rest = PAYLOAD - within
        out += data[:rest]
        pos += rest
    view = memoryview(data)
    pack, crc, crc_bytes, length = _BHEAD.pack, zlib.crc32, _U32.pack, _U32.unpack_from
    bound = start  # the first frame boundary at or after pos
    blk = pos // PAYLOAD + 1
    for i in range(rest, len(data), PAYLOAD):
        while bound < pos:
            bound += _FRAME.size + length(data, bound - start)[0]
        gap = bound - pos
        head = pack(BLOCK_MAGIC, BLOCK_HEAD + gap if gap < PAYLOAD else 0, blk, sequence)
        out += head + crc_bytes(crc(head))
        out += view[i : i + PAYLOAD]
        pos += PAYLOAD
        blk += 1
    return bytes(out)


def physical(logical: int) -> int:
    """Byte offset in the file of logical stream position ``logical``."""
    blk, within = divmod(logical, PAYLOAD)
    return (blk + 1) * BLOCK + BLOCK_HEAD + within


def logical_of(offset: int) -> int:
    """Logical stream position of a file offset that lies in a block's payload area."""
    blk, within = divmod(offset, BLOCK)
    if blk < 1 or within < BLOCK_HEAD:
        raise RedoCorruptError(f"offset {offset} is not inside a block's payload")
    return (blk - 1) * PAYLOAD + within - BLOCK_HEAD


def rba_at(sequence: int, offset: int) -> Rba:
    return Rba(sequence, offset // BLOCK, offset % BLOCK)


#: Where the progress mark lies in block 0 (after the file header, which is zero-padded).
PROGRESS_AT: Final = 256
_PROGRESS: Final = struct.Struct("<4sQQB")
_PROGRESS_MAGIC: Final = b"GGPM"
_PROGRESS_CLOSED: Final = 1


@dataclass(frozen=True, slots=True)
class Progress:
    """A current log's progress mark: every record of the thread with an SCN at or below
    ``scn`` lies before file offset ``offset`` of this log (or in an earlier log), and a
    record written later has a higher SCN. The database rewrites it whenever it flushes
    redo (for every open thread, idle ones too), so that a reader merging threads knows
    how far an idle thread has got. ``closed``: the thread is closed (its instance
    crashed); it writes nothing until it is opened again, which clears the flag first."""

    scn: int
    offset: int
    closed: bool = False

    def pack(self) -> bytes:
        flags = _PROGRESS_CLOSED if self.closed else 0
        body = _PROGRESS.pack(_PROGRESS_MAGIC, self.scn, self.offset, flags)
        return body + _U32.pack(zlib.crc32(body))

    @classmethod
    def unpack(cls, block0: bytes) -> Progress | None:
        """The mark in a file's first block; None when there is none (a log written before
        marks existed, an archived log) or it is being rewritten (its checksum fails)."""
        end = PROGRESS_AT + _PROGRESS.size
        if len(block0) < end + 4 or block0[PROGRESS_AT : PROGRESS_AT + 4] != _PROGRESS_MAGIC:
            return None
        if zlib.crc32(block0[PROGRESS_AT:end]) != _U32.unpack_from(block0, end)[0]:
            return None
        _, scn, offset, flags = _PROGRESS.unpack_from(block0, PROGRESS_AT)
        return cls(scn, offset, bool(flags & _PROGRESS_CLOSED))


def read_head(path: Path | str) -> tuple[FileHeader, Progress | None]:
    """A log's header and progress mark, in one read of its first block."""
    with open(path, "rb") as fh:
        block0 = fh.read(BLOCK)
    return FileHeader.unpack(block0, path), Progress.unpack(block0)


def write_progress(path: Path | str, mark: Progress, *, fsync: bool = False) -> None:
    """Rewrite the progress mark of a log that no writer of this process has open."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, mark.pack(), PROGRESS_AT)
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)


def first_scn_at(path: Path | str, offset: int) -> int | None:
    """SCN of the first whole record that starts at or after file offset ``offset`` (None:
    there is none yet). Records of a thread come in SCN order, so every record before that
    one has an SCN at or below it, and every record after it one at or above it."""
    for _start, _end, payload in read_frames(path, offset, None):
        return peek(payload)[1]
    return None


@dataclass(frozen=True, slots=True)
class FileHeader:
    thread: int
    sequence: int
    first_scn: int
    next_scn: int  # 0 while current
    status: int
    created_us: int
    #: The sequence of the thread's log before this one (a switch may skip numbers: an
    #: import keeps Oracle's); -1 unknown (a file older than the header extension).
    prev_sequence: int = -1
    #: Bytes of the file written by its writer (flushed: a lower bound of what must be
    #: there; the whole file once archived); 0 unknown.
    end: int = 0

    @property
    def archived(self) -> bool:
        return self.status == STATUS_ARCHIVED

    def extension(self) -> bytes:
        prev = _NO_SEQUENCE if self.prev_sequence < 0 else self.prev_sequence
        body = _FEXT.pack(_FEXT_MAGIC, prev, self.end)
        return body + _U32.pack(zlib.crc32(body))

    def pack(self) -> bytes:
        body = _FHEAD.pack(
            FILE_MAGIC,
            1,
            self.thread,
            self.sequence,
            BLOCK,
            self.first_scn,
            self.next_scn,
            self.status,
            self.created_us,
        )
        body += struct.pack("<I", zlib.crc32(body))
        return (body.ljust(_FEXT_AT, b"\0") + self.extension()).ljust(BLOCK, b"\0")

    @classmethod
    def unpack(cls, data: bytes, path: Path | str = "") -> FileHeader:
        if len(data) < _FHEAD.size + 4:
            raise RedoTruncatedError(f"{path}: file header incomplete")
        fields = _FHEAD.unpack_from(data)
        (crc,) = struct.unpack_from("<I", data, _FHEAD.size)
        if fields[0] != FILE_MAGIC or zlib.crc32(data[: _FHEAD.size]) != crc:
            raise RedoCorruptError(f"{path}: not a redo log file (bad header)")
        _, _version, thread, seq, bsize, first, nxt, status, created = fields
        if bsize != BLOCK:
            raise RedoCorruptError(f"{path}: block size {bsize} unsupported")
        prev, end = -1, 0
        ext = _FEXT_AT + _FEXT.size
        if len(data) >= ext + 4 and data[_FEXT_AT : _FEXT_AT + 4] == _FEXT_MAGIC:
            if zlib.crc32(data[_FEXT_AT:ext]) != _U32.unpack_from(data, ext)[0]:
                raise RedoCorruptError(f"{path}: bad header extension")
            _, p, end = _FEXT.unpack_from(data, _FEXT_AT)
            prev = -1 if p == _NO_SEQUENCE else p
        return cls(thread, seq, first, nxt, status, created, prev, end)


def read_header(path: Path | str) -> FileHeader:
    with open(path, "rb") as fh:
        return FileHeader.unpack(fh.read(BLOCK), path)


class _Stream:
    """The logical record stream of one file, read block by block (headers verified)."""

    def __init__(self, fh: BinaryIO, header: FileHeader, path: Path | str, size: int) -> None:
        self.fh = fh
        self.header = header
        self.path = path
        self.size = size  # file size in bytes
        self.buf = bytearray()
        self.base = 0  # logical position of buf[0]
        self.next_block = 1

    @property
    def logical_eof(self) -> int:
        if self.size <= BLOCK:
            return 0
        blk, within = divmod(self.size, BLOCK)
        return (blk - 1) * PAYLOAD + max(0, within - BLOCK_HEAD)

    def block_first(self, blk: int) -> int | None:
        """The ``first`` field of block ``blk`` (None past EOF); verifies the header."""
        if blk * BLOCK + BLOCK_HEAD > self.size:
            return None
        self.fh.seek(blk * BLOCK)
        return self._check(self.fh.read(BLOCK_HEAD), blk)

    def _check(self, head: bytes, blk: int) -> int:
        magic, first, number, seq = _BHEAD.unpack_from(head)
        (crc,) = struct.unpack_from("<I", head, 12)
        if magic != BLOCK_MAGIC or number != blk or zlib.crc32(head[:12]) != crc:
            raise RedoCorruptError(f"{self.path}: bad block header at block {blk}")
        if seq != self.header.sequence:
            raise RedoCorruptError(f"{self.path}: block {blk} belongs to sequence {seq}")
        return int(first)

    def seek(self, logical: int) -> None:
        blk = logical // PAYLOAD + 1
        self.next_block = blk
        self.base = (blk - 1) * PAYLOAD
        self.buf = bytearray()
        self.ensure(logical, 0)
        del self.buf[: logical - self.base]
        self.base = logical

    def ensure(self, pos: int, n: int) -> bool:
        """Make ``[pos, pos+n)`` available in ``buf``; False if the file ends first."""
        want = pos + n
        while self.base + len(self.buf) < want:
            if self.next_block * BLOCK + BLOCK_HEAD > self.size:
                return False
            self.fh.seek(self.next_block * BLOCK)
            blocks = max(READ_CHUNK_BLOCKS, (want - self.base - len(self.buf)) // PAYLOAD + 1)
            data = self.fh.read(blocks * BLOCK)
            for i in range(0, len(data), BLOCK):
                if i + BLOCK_HEAD > len(data):
                    break
                self._check(data[i : i + BLOCK_HEAD], self.next_block)
                self.buf += data[i + BLOCK_HEAD : i + BLOCK]
                self.next_block += 1
        return True

    def drop_before(self, pos: int) -> None:
        if pos - self.base > 4 * 1024 * 1024:
            del self.buf[: pos - self.base]
            self.base = pos


def _frames(
    stream: _Stream, start: int, end: int | None, strict: bool
) -> Iterator[tuple[int, int, int]]:
    """Yield ``(logical start, payload position in buf-relative logical, length)``."""
    pos = start
    eof = stream.logical_eof
    while (end is None or pos < end) and pos < eof:
        if not stream.ensure(pos, _FRAME.size) or pos + _FRAME.size > eof:
            _torn(stream, pos, strict, "partial frame header")
            return
        length, crc = _FRAME.unpack_from(stream.buf, pos - stream.base)
        if length == 0 and pos + _FRAME.size + length >= eof:
            _torn(stream, pos, strict, "empty frame")
            return
        if length > MAX_RECORD:
            raise RedoCorruptError(f"{stream.path}: record length {length} at {physical(pos)}")
        total = _FRAME.size + length
        if pos + total > eof or not stream.ensure(pos, total):
            _torn(stream, pos, strict, "partial record")
            return
        lo = pos + _FRAME.size - stream.base
        if zlib.crc32(memoryview(stream.buf)[lo : lo + length]) != crc:
            if pos + total == eof and not stream.header.archived:
                _torn(stream, pos, strict, "checksum mismatch in the last record")
                return
            raise RedoCorruptError(f"{stream.path}: checksum mismatch at {physical(pos)}")
        yield pos, lo, length
        pos += total
        stream.drop_before(pos)


def _torn(stream: _Stream, pos: int, strict: bool, what: str) -> None:
    msg = f"{stream.path}: torn tail at offset {physical(pos)} ({what})"
    if stream.header.archived:
        raise RedoCorruptError(msg + " in an archived log")
    if strict:
        raise RedoTruncatedError(msg)


def first_boundary(
    start: int,
    block_first: Callable[[int], int | None],
    frames_from: Callable[[int, int], Iterable[tuple[int, int]]],
) -> int | None:
    """Logical position of the first record boundary at or after file offset ``start``.

    ``block_first(blk)`` is the in-block offset of the first record that starts in block
    ``blk`` (0: none starts there, None: past the end); ``frames_from(candidate, target)``
    gives the ``(start, end)`` logical positions of the frames read from the boundary
    ``candidate`` on, up to ``target``. Shared by this module's reader and
    :mod:`engine.embedded.redo_scan`."""
    offset = max(start, BLOCK)
    blk = offset // BLOCK
    while True:
        first = block_first(blk)
        if first is None:
            return None
        if first:
            candidate = logical_of(blk * BLOCK + first)
            target = logical_floor(offset)
            if candidate >= target:
                return candidate
            for pos, end in frames_from(candidate, target):
                if pos >= target:
                    return pos
                if end >= target:
                    return end
            return None
        blk += 1
        offset = blk * BLOCK


def _first_boundary(stream: _Stream, start: int) -> int | None:
    def frames_from(candidate: int, _target: int) -> Iterator[tuple[int, int]]:
        stream.seek(candidate)
        for pos, _lo, length in _frames(stream, candidate, None, strict=False):
            yield pos, pos + _FRAME.size + length

    return first_boundary(start, stream.block_first, frames_from)


def read_records(
    path: Path | str,
    start_offset: int = 0,
    end_offset: int | None = None,
    *,
    strict: bool = False,
) -> Iterator[LocatedRecord]:
    """Records of one log file whose first byte lies in ``[start_offset, end_offset)``.

    Pure Python and picklable arguments: usable on the driver and in Spark tasks. Splits
    ``[0, a), [a, b), [b, None)`` together yield every record exactly once. A torn tail
    ends the iteration (``strict``: raises ``RedoTruncatedError``); corruption raises
    ``RedoCorruptError``. Resume after a record from its ``end``."""
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        header = FileHeader.unpack(fh.read(BLOCK), path)
        stream = _Stream(fh, header, path, size)
        begin = _first_boundary(stream, start_offset)
        if begin is None:
            return
        end = None if end_offset is None else logical_floor(end_offset)
        if end is not None and begin >= end:
            return
        stream.seek(begin)
        seq = header.sequence
        for pos, lo, length in _frames(stream, begin, end, strict):
            rec = decode_record(stream.buf, lo, lo + length)
            yield LocatedRecord(rec, seq, physical(pos), physical(pos + _FRAME.size + length))


def read_frames(
    path: Path | str,
    start_offset: int = 0,
    end_offset: int | None = None,
    *,
    strict: bool = False,
) -> Iterator[tuple[int, int, bytes]]:
    """Like :func:`read_records` but yields ``(offset, end, payload)`` without decoding:
    checksummed payload bytes for a caller that decodes elsewhere (a Spark task, say) or
    looks only at the header (:func:`peek`)."""
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        header = FileHeader.unpack(fh.read(BLOCK), path)
        stream = _Stream(fh, header, path, size)
        begin = _first_boundary(stream, start_offset)
        if begin is None:
            return
        end = None if end_offset is None else logical_floor(end_offset)
        if end is not None and begin >= end:
            return
        stream.seek(begin)
        for pos, lo, length in _frames(stream, begin, end, strict):
            yield (
                physical(pos),
                physical(pos + _FRAME.size + length),
                bytes(stream.buf[lo : lo + length]),
            )


_PEEK: Final = struct.Struct("<HBBIIHIQHqH")


def peek(payload: bytes) -> tuple[int, int, int, int]:
    """``(thread, scn, timestamp_us, n_changes)`` of a record payload, without decoding it."""
    thread, _vld, _flags, _s, _b, _o, _len, scn, _sub, ts, n = _PEEK.unpack_from(payload)
    return thread, scn, ts, n


def logical_floor(offset: int) -> int:
    """Logical position of the first payload byte at or after file offset ``offset``."""
    if offset <= BLOCK:
        return 0
    blk, within = divmod(offset, BLOCK)
    return (blk - 1) * PAYLOAD + max(0, within - BLOCK_HEAD)


def scan_end(path: Path | str) -> tuple[int, int | None, int]:
    """``(logical end of the last good record, its SCN or None, record count)``."""
    last_end, last_scn, count = 0, None, 0
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        header = FileHeader.unpack(fh.read(BLOCK), path)
        stream = _Stream(fh, header, path, size)
        if size <= BLOCK:
            return 0, None, 0
        stream.seek(0)
        for pos, lo, length in _frames(stream, 0, None, strict=False):
            last_end = pos + _FRAME.size + length
            last_scn = int(struct.unpack_from("<Q", stream.buf, lo + _SCN_AT)[0])
            count += 1
    return last_end, last_scn, count


class LogWriter:
    """Appends records to one log file (the current log of a thread).

    Not thread-safe; one writer per file per process (the database holds a lock file).
    Appending a record only frames it (length, CRC) and queues it: the queued frames are cut
    into blocks, with their headers, in one pass when they reach the OS, on :meth:`flush`
    (called at commits, see ``Database.end_transaction``) or when ``buffer_limit`` bytes are
    queued. Until then a crash of the process loses them (the file then ends at an earlier
    record boundary, or in a torn tail that readers and the next writer drop); ``fsync``
    makes each flush durable against a crash of the machine too."""

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
    ) -> None:
        self.path = path
        self.fsync = fsync
        self.buffer_limit = buffer_limit
        self._mark_fd: int | None = None
        #: Bytes the header says were written past where the good records now end: redo lost
        #: after it was flushed (the file cut short); 0 normally (a torn tail of a crash lies
        #: past the recorded end, which is updated only after the bytes are written).
        self.lost = 0
        if path.exists():
            self.header = read_header(path)
            end, scn, self.records = scan_end(path)
            self.logical = end
            self.last_scn = scn
            good = self._truncate_point(end)
            self.lost = max(0, self.header.end - good)
            with open(path, "r+b") as fh:
                fh.truncate(good)
        else:
            self.header = FileHeader(
                thread, sequence, first_scn, 0, STATUS_CURRENT, created_us, prev_sequence, BLOCK
            )
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "wb") as fh:
                fh.write(self.header.pack())
            self.logical = 0
            self.last_scn = None
            self.records = 0
        self.fh: BinaryIO = open(path, "ab")  # noqa: SIM115 - lives as long as the writer
        # The header's recorded end is rewritten in place (an O_APPEND descriptor cannot).
        self._head_fd: int | None = None
        self._queued: list[bytes] = []  # whole frames (in parts), not yet cut into blocks
        self._queued_at = self.logical  # logical position of the first queued byte
        # thread, vld 1, flags 0 (no LWN) and sequence: how every native record head starts
        self.rec_ids = _REC_IDS.pack(self.header.thread, 1, 0, self.header.sequence)
        if marks:  # the thread is open: a mark that says so, before any record is added
            _, mark = read_head(path)
            if mark is None or mark.closed:
                self.mark(mark.scn if mark else 0, offset=mark.offset if mark else BLOCK)

    @staticmethod
    def _truncate_point(logical: int) -> int:
        if logical == 0:
            return BLOCK
        if logical % PAYLOAD == 0:
            return (logical // PAYLOAD + 1) * BLOCK
        return physical(logical)

    @property
    def sequence(self) -> int:
        return self.header.sequence

    @property
    def size(self) -> int:
        """Bytes in the file once pending bytes are flushed."""
        return self._truncate_point(self.logical)

    @property
    def buffered(self) -> int:
        """Bytes of records appended but not yet handed to the OS."""
        return self.logical - self._queued_at

    def next_rba(self) -> Rba:
        return rba_at(self.header.sequence, physical(self.logical))

    def append(self, record: RedoRecord) -> tuple[int, int]:
        """Append one record; returns its ``(offset, end)`` in the file."""
        start = self.logical
        self.add(encode_record(record), record.scn)
        return physical(start), physical(self.logical)

    def append_payload(self, payload: bytes, scn: int) -> tuple[int, int]:
        """Append an already encoded record payload; returns its ``(offset, end)``."""
        start = self.logical
        self.add(payload, scn)
        return physical(start), physical(self.logical)

    def add(self, payload: bytes, scn: int) -> None:
        """Append an encoded record payload."""
        n = len(payload)
        self._queued += (_FRAME.pack(n, zlib.crc32(payload)), payload)
        self.logical += _FRAME.size + n
        self.last_scn = scn
        self.records += 1
        if self.logical - self._queued_at >= self.buffer_limit:
            self.flush()

    def add_native(self, scn: int, micros: int, n_changes: int, changes: bytes) -> None:
        """Append a native record made of encoded change vectors (:func:`native_frame`)."""
        self.add_frames(
            native_frame(self.rec_ids, self.logical, scn, micros, n_changes, changes), scn, 1
        )

    def add_frames(self, frames: bytes, scn: int, count: int) -> int:
        """Append ``count`` records already framed for this log at :attr:`logical` (by
        :func:`native_frame` or the fast path's kernel, :mod:`engine.embedded.redopack`);
        returns the new :attr:`logical`."""
        self._queued.append(frames)
        self.logical = end = self.logical + len(frames)
        self.last_scn = scn
        self.records += count
        if end - self._queued_at >= self.buffer_limit:
            self.flush()
        return end

    def flush(self) -> None:
        if self._queued:
            data = _CUT_BLOCKS(b"".join(self._queued), self._queued_at, self.header.sequence)
            self._queued = []
            self._queued_at = self.logical
            self.fh.write(data)
            self.fh.flush()
            if self.fsync:
                os.fsync(self.fh.fileno())
            self._record_end()

    def _record_end(self) -> None:
        """The header's recorded end := the bytes written (after they are: a crash between
        leaves it lower, never higher; with ``fsync`` the next flush makes it durable).
        Never lowered: after redo was lost (:attr:`lost`) it keeps saying so."""
        end = self.size
        if self.lost or end <= self.header.end:
            return
        self.header = replace(self.header, end=end)
        if self._head_fd is None:
            self._head_fd = os.open(self.path, os.O_WRONLY)
        os.pwrite(self._head_fd, self.header.extension(), _FEXT_AT)

    def mark(self, scn: int, *, closed: bool = False, offset: int | None = None) -> None:
        """Rewrite the progress mark (:class:`Progress`) after a flush: every record of this
        thread with an SCN at or below ``scn`` is in the file, before its end (``offset``)."""
        if self._mark_fd is None:
            self._mark_fd = os.open(self.path, os.O_WRONLY)
        at = self.size if offset is None else offset
        os.pwrite(self._mark_fd, Progress(scn, at, closed).pack(), PROGRESS_AT)
        if self.fsync:
            os.fsync(self._mark_fd)

    def close(self, *, archive: bool = False, next_scn: int = 0) -> None:
        """Flush and close; ``archive`` marks the file archived with its next SCN (the
        header is rewritten whole: an archived log has no progress mark)."""
        self.flush()
        self.fh.close()
        if self._head_fd is not None:
            os.close(self._head_fd)
            self._head_fd = None
        if self._mark_fd is not None:
            os.close(self._mark_fd)
            self._mark_fd = None
        if archive:  # its recorded end becomes its size (unless redo was lost from it)
            hdr = self.header
            end = hdr.end if self.lost else self.size
            self.header = replace(hdr, next_scn=next_scn, status=STATUS_ARCHIVED, end=end)
            with open(self.path, "r+b") as fh:
                fh.write(self.header.pack())
                fh.flush()
                if self.fsync:
                    os.fsync(fh.fileno())


_KERNEL: Final = _native.load("redopack")
# the compiled block cutter when it is built (same bytes: tests/source/test_source_redopack.py)
_CUT_BLOCKS: Final[Callable[[bytes, int, int], bytes]] = (
    cut_blocks if _KERNEL is None else _KERNEL.cut_blocks
)
