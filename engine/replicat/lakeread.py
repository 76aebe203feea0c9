"""The lakehouse Replicat's columnar trail reader: whole transactions of plain row changes
read into Arrow columns in one pass, rather than one :class:`TrailRecord` per record.

:func:`scan` is ``engine/_native/trailcols.c`` when built, else :func:`scan_py`, its twin
(tests/lake/test_lake_columns.py holds the two equal): the records of a buffer while each is
a plain row change (an insert, update, compressed update or delete without a before-image
area, not Continued), each record's header fields as arrays, and its values as one Arrow
string array per column index with which records carry the column. Anything else stops
it; :class:`ColumnReader` then decodes that record with the trail codec: a file header
or a table definition (TDR) is learned and the scan goes on; a damaged record raises as
the classic reader raises (engine/trail/reader.py); a record the columnar path does not
apply (a key update, a TRUNCATE, a RestartAbend marker, a Continued record of a row too
big for one record, a heartbeat table, a MAP with expressions) hands the rest over to the
classic reader (``Read.classic``), from the start of the transaction that holds it.

Transactions: like engine/trail/txreader.py, only whole transactions are handed out, and
:attr:`ColumnReader.position` is always the end of the last one handed out.
"""

from __future__ import annotations

import contextlib
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from engine._native import load as load_native
from engine.trail.checksum import check_pieces, check_record
from engine.trail.codec import decode_any, decode_piece
from engine.trail.envelope import record_length, sections
from engine.trail.errors import CorruptRecordError, IncompleteRecordError, TrailError
from engine.trail.fileheader import decode_file_header
from engine.trail.files import TrailName
from engine.trail.layout import (
    CHECKSUM_CRC32,
    MAX_RECORD_LENGTH,
    TAG_DATA,
    TAG_ROW_HEADER,
    TAG_TOKENS,
    IOType,
)
from engine.trail.metadata import defines_table
from engine.trail.model import FileHeader, TableDef, TrailPosition, TrailRecord
from engine.trail.reader import FileCursor, checksum_error
from engine.trail.recovery import unended_transaction

_KIT = load_native("trailcols")
PLAIN_IO: frozenset[int] = frozenset(
    {IOType.DELETE, IOType.INSERT, IOType.UPDATE, IOType.FIELDCOMP}
)
MAX_COLUMNS = 1024  # a column index at or above it goes to the classic reader (memory: a
# scan keeps offsets and flags per record for every column index up to the highest met)
_PIECE = 8 << 20  # bytes read from a trail file at a time

Scanned = tuple[
    int, int, int, bytes, bytes, bytes, bytes, bytes, bytes,
    list[str], list[tuple[int, str | None, str | None]], list[tuple[bytes, bytes, bytes, bytes]],
]  # fmt: skip


def _plain(buf: Any, offset: int, length: int, checksums: bool, max_columns: int) -> bool:
    if checksums:
        crc = check_record(buf, offset, length)
        if crc is None or not crc.ok:
            return False
    tags = [t for t, _, _ in sections(buf, offset, length)]
    if tags not in ([TAG_ROW_HEADER, TAG_DATA], [TAG_ROW_HEADER, TAG_DATA, TAG_TOKENS]):
        return False
    record, _ = decode_piece(buf, offset)  # a Continued row's base: not joined here
    if not isinstance(record, TrailRecord) or record.io_type not in PLAIN_IO:
        return False
    if record.continued or record.segment is not None or record.before_columns:
        return False
    return all(i < max_columns for i, _ in record.columns)


def scan_py(
    buf: bytes | bytearray | memoryview,
    offset: int,
    end: int,
    checksums: bool,
    max_records: int,
    max_columns: int,
) -> Scanned:
    """The twin of ``trailcols.scan`` (its C comment says what it returns)."""
    view = memoryview(buf)[: min(end, len(buf))]
    rba, io_time, table_id = array("q"), array("q"), array("i")
    io_type, trans_ind, before_after = bytearray(), bytearray(), bytearray()
    names: list[str] = []
    tokens: list[tuple[int, str | None, str | None]] = []
    values: list[list[tuple[int, str | None]]] = []  # per column: (record, value)
    pos, reason, n = offset, 0, 0
    while True:
        if n >= max_records:
            reason = 1
            break
        try:
            length = record_length(view, pos)
            ok = _plain(view, pos, length, checksums, max_columns)
        except IncompleteRecordError:
            break
        except CorruptRecordError:
            ok = False
        if not ok:
            reason = 2
            break
        record, _ = decode_piece(view, pos)
        assert isinstance(record, TrailRecord)
        if record.table not in names:
            names.append(record.table)
        rba.append(pos)
        io_time.append(record.io_time_us)
        table_id.append(names.index(record.table))
        io_type.append(record.io_type)
        trans_ind.append(record.trans_ind)
        before_after.append(ord(record.before_after))
        if record.logcsn is not None or record.tranid is not None:
            tokens.append((n, record.logcsn, record.tranid))
        for index, value in record.columns:
            while len(values) <= index:
                values.append([])
            values[index].append((n, value))
        n += 1
        pos += length
    columns = []
    for entries in values:
        data, offsets, valid, present = bytearray(), array("i", [0] * (n + 1)), [0] * n, [0] * n
        at = dict(entries)
        for i in range(n):
            if i in at:
                present[i] = 1
                text = at[i]
                if text is not None:
                    data += text.encode()
                    valid[i] = 1
            offsets[i + 1] = len(data)
        bits = bytearray((n + 7) // 8)
        for i, v in enumerate(valid):
            if v:
                bits[i >> 3] |= 1 << (i & 7)
        columns.append((bytes(data), offsets.tobytes(), bytes(bits), bytes(present)))
    return (n, pos, reason, rba.tobytes(), io_time.tobytes(), table_id.tobytes(),
            bytes(io_type), bytes(trans_ind), bytes(before_after), names, tokens,
            columns)  # fmt: skip


def scan(
    buf: bytes | bytearray | memoryview,
    offset: int,
    end: int,
    checksums: bool,
    max_records: int,
    max_columns: int = MAX_COLUMNS,
) -> Scanned:
    if _KIT is not None:
        out: Scanned = _KIT.scan(buf, offset, end, checksums, max_records, max_columns)
        return out
    return scan_py(buf, offset, end, checksums, max_records, max_columns)


@dataclass
class Chunk:
    """Records of one trail file read by one scan, cut to whole transactions when handed
    out. ``defs``: the table definitions in force for them (a TDR ends a scan)."""

    seqno: int
    n: int
    rba: np.ndarray
    end: np.ndarray  # the position after each record (its RBA + its length)
    io_time: np.ndarray
    table_id: np.ndarray
    io_type: np.ndarray
    trans_ind: np.ndarray
    before_after: np.ndarray
    names: list[str]
    tokens: dict[int, tuple[str | None, str | None]]
    columns: list[tuple[pa.StringArray, np.ndarray]]  # per column index: values, present
    defs: dict[str, TableDef] = field(default_factory=dict)

    @classmethod
    def of(cls, seqno: int, base: int, s: Scanned, defs: dict[str, TableDef]) -> Chunk:
        n, stop = s[0], s[1]
        rba = np.frombuffer(s[3], np.int64)
        end = np.empty(n, np.int64)
        if n:
            end[:-1] = rba[1:]
            end[-1] = stop
        cols = []
        for data, offsets, bits, present in s[11]:
            arr = pa.StringArray.from_buffers(
                n, pa.py_buffer(offsets), pa.py_buffer(data), pa.py_buffer(bits)
            )
            cols.append((arr, np.frombuffer(present, np.uint8).astype(bool)))
        return cls(
            seqno, n, rba + base, end + base,
            np.frombuffer(s[4], np.int64), np.frombuffer(s[5], np.int32),
            np.frombuffer(s[6], np.uint8), np.frombuffer(s[7], np.uint8),
            np.frombuffer(s[8], np.uint8), list(s[9]),
            {i: (c, t) for i, c, t in s[10]}, cols, dict(defs),
        )  # fmt: skip

    def cut(self, k: int) -> Chunk:
        """The first ``k`` records."""
        if k >= self.n:
            return self
        return Chunk(
            self.seqno, k, self.rba[:k], self.end[:k], self.io_time[:k], self.table_id[:k],
            self.io_type[:k], self.trans_ind[:k], self.before_after[:k], self.names,
            {i: t for i, t in self.tokens.items() if i < k},
            [(a.slice(0, k), p[:k]) for a, p in self.columns], self.defs,
        )  # fmt: skip


@dataclass
class Read:
    """Whole transactions read (``chunks``), and where the classic reader must take over
    (None: the columnar reader goes on next time), or the error that stops the reading."""

    chunks: list[Chunk]
    records: int
    classic: TrailPosition | None = None
    error: TrailError | None = None  # where the trail cannot be read on, after ``chunks``


#: (table, its definition) -> whether the columnar path applies its records
Eligible = Callable[[str, TableDef | None], bool]


class ColumnReader:
    def __init__(self, trail: TrailName, start: TrailPosition, eligible: Eligible) -> None:
        self.trail = trail
        self.position = start
        self.eligible = eligible
        self.tables: dict[str, TableDef] = {}
        self.header: FileHeader | None = None
        self._learned: int | None = None
        self._checksums: dict[int, bool] = {}
        self.records_read = 0

    def _learn_before(self, path: Path, seqno: int, rba: int) -> None:
        """The file header and table definitions before ``rba`` of a file first opened."""
        if self._learned == seqno:
            return
        with FileCursor(path, seqno, 0, verify=False) as cursor:
            while cursor.rba < rba and (entry := cursor.next()) is not None:
                self._learn(entry.record)
        self._learned = seqno

    def _learn(self, record: TrailRecord | FileHeader) -> None:
        if isinstance(record, FileHeader):
            self.header = record
        elif defines_table(record):
            self.tables[record.table] = TableDef.from_record(record)

    def _has_checksums(self, path: Path, seqno: int) -> bool:
        if seqno not in self._checksums:
            with open(path, "rb") as f:
                head = f.read(MAX_RECORD_LENGTH)
            try:
                header, _ = decode_file_header(head, 0)
            except IncompleteRecordError:
                return False
            except CorruptRecordError:
                self._checksums[seqno] = False
            else:
                self._checksums[seqno] = header.get("Checksum", 0) == CHECKSUM_CRC32
        return self._checksums[seqno]

    def read(self, max_ops: int) -> Read:
        """Whole transactions from :attr:`position`: at least ``max_ops`` records' worth
        when the trail holds them (a transaction is not split), else what it holds."""
        chunks: list[Chunk] = []
        total = 0
        classic: TrailPosition | None = None
        seqno, rba = self.position.seqno, self.position.rba
        want = max_ops + 1024  # a little past: the last transaction may end after max_ops
        error: TrailError | None = None
        try:
            while total < want and classic is None:
                path = self.trail.file(seqno)
                if not path.exists():
                    break
                self._learn_before(path, seqno, rba)
                checksums = self._has_checksums(path, seqno)
                with open(path, "rb") as f:
                    f.seek(rba)
                    data = f.read(_PIECE)
                s = scan(data, 0, len(data), checksums, want - total)
                n, stop, reason = s[0], s[1], s[2]
                if n:
                    chunk = Chunk.of(seqno, rba, s, self.tables)
                    chunks.append(chunk)
                    total += n
                    bad = self._ineligible(chunk)
                    if bad is not None:
                        chunks[-1] = chunk.cut(bad)
                        classic = TrailPosition(seqno, int(chunk.rba[bad]))
                        break
                rba += stop
                if reason == 1:
                    break
                if reason == 2:
                    classic = self._python_record(path, seqno, rba, data, stop, checksums)
                    if classic is None:
                        rba = self._after_python
                    continue
                # the end of the bytes read
                if len(data) == _PIECE and stop > 0:
                    continue  # more of this file
                if not self.trail.file(seqno + 1).exists():
                    break
                if len(data) > stop or path.stat().st_size > rba:  # written before the next file
                    with open(path, "rb") as f:
                        f.seek(rba)
                        rest = f.read(MAX_RECORD_LENGTH)
                    if rest:
                        if len(rest) >= 4:
                            with contextlib.suppress(IncompleteRecordError):
                                record_length(rest, 0)
                                continue  # a whole record there after all: read it
                        raise CorruptRecordError(
                            f"{path}: {len(rest)} bytes of an incomplete record before the next "
                            "trail file",
                            offset=rba,
                        )
                seqno, rba = seqno + 1, 0
        except TrailError as exc:  # the whole transactions before it first, as txreader
            error = exc
        return self._whole(chunks, classic, max_ops, error)

    def _ineligible(self, chunk: Chunk) -> int | None:
        """The first record of ``chunk`` whose table the columnar path does not apply."""
        bad = [i for i, t in enumerate(chunk.names) if not self.eligible(t, chunk.defs.get(t))]
        if not bad:
            return None
        hits = np.flatnonzero(np.isin(chunk.table_id, bad))
        return int(hits[0]) if len(hits) else None

    _after_python = 0

    def _python_record(
        self, path: Path, seqno: int, rba: int, data: bytes, stop: int, checksums: bool
    ) -> TrailPosition | None:
        """The record at ``rba`` the scan stopped at, decoded by the codec: learned (a file
        header, a TDR) or skipped (a comment), and the scan goes on (None, next RBA in
        ``_after_python``); else where the classic reader takes over. Raises as the classic
        reader does for a damaged record."""
        try:
            record, length = decode_any(data, stop)
        except IncompleteRecordError:
            return TrailPosition(seqno, rba)  # longer than the piece read: the classic way
        except CorruptRecordError as exc:
            if checksums:
                with contextlib.suppress(TrailError):
                    n = record_length(data, stop)
                    crc = check_record(data, stop, n)
                    if crc is not None and not crc.ok:
                        raise checksum_error(path, rba, crc) from exc
            raise CorruptRecordError(f"{path}: {exc.message}", offset=rba) from exc
        if checksums:  # each record (of a Continued row: each of its pieces)
            crc = check_pieces(data, stop, length)
            if crc is not None and not crc.ok:
                raise checksum_error(path, rba, crc)
        if isinstance(record, FileHeader) or record.io_type in (
            IOType.METADATA,
            IOType.GGS_COMMENT,
        ):
            self._learn(record)
            self._after_python = rba + length
            return None
        return TrailPosition(seqno, rba)

    def _whole(
        self,
        chunks: list[Chunk],
        classic: TrailPosition | None,
        max_ops: int,
        error: TrailError | None = None,
    ) -> Read:
        """``chunks`` cut after the last whole transaction; positions advanced. ``error``
        (the trail cannot be read on there) is handed out after the whole transactions
        before it, as engine/trail/txreader.py hands them out before it raises."""
        if not chunks:
            return Read([], 0, None if error else classic, error)
        ti = np.concatenate([c.trans_ind for c in chunks])
        ends = (ti == 2) | (ti == 3)
        begins = (ti == 0) | (ti == 3)
        opened = np.flatnonzero(begins[1:] & ~ends[:-1])
        limit = len(ti)
        if len(opened):  # a transaction begun inside an open one: the trail is damaged
            i = int(opened[0]) + 1
            start = np.flatnonzero(ends[:i])
            first = int(start[-1]) + 1 if len(start) else 0
            error = unended_transaction(self._at(chunks, first), self._at(chunks, i))
            limit = first
        last = np.flatnonzero(ends[:limit])
        enough = last[last >= max_ops - 1]
        whole = int(last[-1]) + 1 if len(last) else 0
        keep = int(enough[0]) + 1 if len(enough) else whole
        if keep < whole:
            classic = error = None  # a full batch before it: the next read meets it again
        if error is not None:
            classic = None
        out: list[Chunk] = []
        left = keep
        for c in chunks:
            if left <= 0:
                break
            out.append(c.cut(left))
            left -= c.n
        if out:
            tail = out[-1]
            self.position = TrailPosition(tail.seqno, int(tail.end[tail.n - 1]))
        self.records_read += keep
        if classic is not None and keep == len(ti):
            self.position = classic  # (the end of the last record handed out, or a TDR's)
        elif classic is not None:
            classic = self.position  # from the start of the transaction it is in
        return Read(out, keep, classic, error)

    @staticmethod
    def _at(chunks: list[Chunk], i: int) -> TrailPosition:
        for c in chunks:
            if i < c.n:
                return TrailPosition(c.seqno, int(c.rba[i]))
            i -= c.n
        raise IndexError(i)
