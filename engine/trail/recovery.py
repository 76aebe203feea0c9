"""Append-mode recovery (seed 003, "Trail Recovery Mode").

After a stop or a crash the writer's last file may end with

* a torn record: bytes of a record whose write did not complete. They can never be read
  and are always cut off;
* a partly written transaction: records of a transaction whose last record (TransInd 2
  or 3) never reached the trail. Two ways to handle it (``RecoveryMode``, the parameter
  RECOVERYOPTIONS APPENDMODE | OVERWRITEMODE):

  - APPEND (the default, seed 003's append mode): keep the partial records (history is
    retained) and append a RestartAbend marker record (IOType 211) right after them; the
    transaction is then written again, whole, after the marker. The torn bytes of a
    record (if any) cannot be kept: a reader cannot step over unknown bytes, so they are
    cut and the marker takes their place after the last whole record. Readers that
    assemble transactions drop the open transaction when they meet the marker; a new
    transaction that begins while one is open with no marker between is a broken trail
    (:func:`unended_transaction`); see :func:`complete_transactions`.
  - OVERWRITE (RECOVERYOPTIONS OVERWRITEMODE, GoldenGate before 10.0): cut the trail back
    to the end of the last complete transaction (files after the one holding it are
    removed). The trail then holds exactly the complete transactions, and Extract
    re-captures the cut one in full.

Either way :func:`recover_trail` reports the last complete transaction (its LOGCSN and
TRANID, taken from its first record): Extract ends its recovery when it meets that
transaction's commit in the redo and appends the next committed transaction after it.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from engine.trail.codec import decode_record, summarize
from engine.trail.envelope import Buffer, record_length
from engine.trail.errors import CorruptRecordError, IncompleteRecordError, TrailIOError
from engine.trail.files import TrailName, fsync_directory
from engine.trail.layout import (
    FILE_HEADER_NAME,
    NON_TRANSACTIONAL_IO_TYPES,
    ORIG_NODE_DDR,
    IOType,
    TransInd,
)
from engine.trail.model import TrailPosition, TrailRecord

_CHUNK = 1 << 20
RESTART_ABEND_NAME = "*RestartAbend*"


class RecoveryMode(Enum):
    APPEND = "append"
    OVERWRITE = "overwrite"

    @classmethod
    def of_option(cls, option: str | None) -> RecoveryMode:
        """The mode RECOVERYOPTIONS names (APPENDMODE / OVERWRITEMODE); APPEND without it."""
        return cls.OVERWRITE if (option or "").upper() == "OVERWRITEMODE" else cls.APPEND


def unended_transaction(begun: TrailPosition, at: TrailPosition) -> CorruptRecordError:
    """A transaction begins at ``at`` while the one begun at ``begun`` has no end and no
    RestartAbend marker closes it: records of unknown fate, which no reader may apply."""
    return CorruptRecordError(
        f"Seqno {at.seqno}: a transaction begins at RBA {at.rba} while the one begun at "
        f"{begun} has no end and no recovery marker follows it",
        offset=at.rba,
    )


@dataclass(frozen=True, slots=True)
class CompletedTransaction:
    """The last transaction whose every record is in the trail."""

    end: TrailPosition  # just after its last record
    logcsn: str | None
    tranid: str | None


@dataclass(frozen=True, slots=True)
class FileScan:
    """What one forward pass over a trail file found (headers decoded, data skipped)."""

    seqno: int
    size: int
    valid_end: int  # RBA after the last whole record
    has_header: bool
    records: int  # data and metadata records
    metadata_tables: frozenset[str]  # tables with a TDR in the file
    ddr_written: bool  # the file holds a DDR
    last_end: int | None  # RBA after the last record ending a transaction
    last_end_begin: tuple[str | None, str | None] | None  # (LOGCSN, TRANID) of that txn
    last_begin: tuple[str | None, str | None] | None  # of the latest begin in the file
    records_after_end: int  # transactional records after last_end (or all, if None)
    first_csn: str | None
    last_csn: str | None
    first_io_time_us: int | None
    last_io_time_us: int | None

    @property
    def torn_bytes(self) -> int:
        return self.size - self.valid_end


def _tokens(buf: Buffer, offset: int) -> tuple[str | None, str | None]:
    record, _ = decode_record(buf, offset)
    return record.logcsn, record.tranid


def scan_file(path: Path, seqno: int) -> FileScan:
    """Walk a trail file record by record up to its last whole record."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size == 0:
                return _scan(b"", seqno, path)
            # Mapped, not read: a file can be MEGABYTES large and only headers are looked at.
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return _scan(data, seqno, path)
    except OSError as exc:
        raise TrailIOError(f"cannot read trail file {path}: {exc.strerror}") from exc


def _scan(data: Buffer, seqno: int, path: Path) -> FileScan:
    size = len(data)
    pos = 0
    has_header = False
    records = after_end = 0
    tables: set[str] = set()
    ddr = False
    last_end: int | None = None
    last_end_begin: tuple[str | None, str | None] | None = None
    current_begin: tuple[str | None, str | None] | None = None
    last_begin: tuple[str | None, str | None] | None = None
    first_csn = last_csn = None
    first_io = last_io = None
    while pos < size:
        try:
            summary = summarize(data, pos)
        except IncompleteRecordError:
            break
        except CorruptRecordError:
            # After a power loss a file can end in zeros the file system allocated but
            # never got the data for; those are a torn tail. Anything else unreadable is
            # real corruption, which recovery must not silently cut away.
            if not bytes(data[pos:size]).strip(b"\x00"):
                break
            raise
        if summary is None:
            if pos != 0:
                raise CorruptRecordError(f"{path.name}: file header not at RBA 0", offset=pos)
            has_header = True
            pos += record_length(data, pos)
            continue
        length = summary.length
        records += 1
        if summary.io_type == IOType.METADATA:
            if summary.orig_node == ORIG_NODE_DDR:
                ddr = True
            else:
                tables.add(summary.table)
        elif summary.io_type not in NON_TRANSACTIONAL_IO_TYPES:
            if first_io is None:
                first_io = summary.io_time_us
            last_io = summary.io_time_us
            if summary.trans_ind in (TransInd.BEGIN, TransInd.WHOLE):
                current_begin = _tokens(data, pos)
                last_begin = current_begin
                if current_begin[0] is not None:
                    first_csn = first_csn or current_begin[0]
                    last_csn = current_begin[0]
            if summary.trans_ind in (TransInd.END, TransInd.WHOLE):
                last_end = pos + length
                last_end_begin = current_begin
                current_begin = None
                after_end = 0
            else:
                after_end += 1
        pos += length
    return FileScan(
        seqno=seqno,
        size=size,
        valid_end=pos,
        has_header=has_header,
        records=records,
        metadata_tables=frozenset(tables),
        ddr_written=ddr,
        last_end=last_end,
        last_end_begin=last_end_begin,
        last_begin=last_begin,
        records_after_end=after_end,
        first_csn=first_csn,
        last_csn=last_csn,
        first_io_time_us=first_io,
        last_io_time_us=last_io,
    )


@dataclass(frozen=True, slots=True)
class RecoveryResult:
    """What recovery found and did; ``resume`` is where appending continues."""

    last_transaction: CompletedTransaction | None
    torn_bytes: int
    partial_records: int
    action: str  # "none", "truncated" (OVERWRITE) or "marked" (APPEND)
    resume: TrailPosition


def find_last_complete_transaction(
    trail: TrailName,
) -> tuple[CompletedTransaction | None, int, list[FileScan]]:
    """Walk back from the newest file to the last record that ends a transaction.

    Returns that transaction, how many transactional records follow it (the partial
    transaction), and the scans made, newest first.
    """
    scans: list[FileScan] = []
    partial = 0
    found: CompletedTransaction | None = None
    for seqno in reversed(trail.seqnos()):
        scan = scan_file(trail.file(seqno), seqno)
        scans.append(scan)
        partial += scan.records_after_end
        if scan.last_end is not None:
            begin = scan.last_end_begin
            if begin is None:
                # Its first record is in an earlier file: the latest begin there.
                for earlier in reversed([s for s in trail.seqnos() if s < seqno]):
                    begin = scan_file(trail.file(earlier), earlier).last_begin
                    if begin is not None:
                        break
            logcsn, tranid = begin if begin is not None else (None, None)
            found = CompletedTransaction(TrailPosition(seqno, scan.last_end), logcsn, tranid)
            break
    return found, partial, scans


def _truncate(path: Path, size: int) -> None:
    try:
        with open(path, "r+b") as handle:
            handle.truncate(size)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        raise TrailIOError(f"cannot truncate {path}: {exc.strerror}") from exc


def restart_marker(io_time_us: int = 0) -> TrailRecord:
    return TrailRecord(
        io_type=IOType.RESTART_ABEND,
        table=RESTART_ABEND_NAME,
        trans_ind=TransInd.WHOLE,
        io_time_us=io_time_us,
    )


def recover_trail(trail: TrailName, mode: RecoveryMode) -> RecoveryResult:
    """Cut torn bytes and handle a partly written transaction; see the module doc.

    In APPEND mode the caller (the writer) appends the RestartAbend marker when
    ``action == "marked"``; this function only repairs the files.
    """
    seqnos = trail.seqnos()
    if not seqnos:
        return RecoveryResult(None, 0, 0, "none", TrailPosition(0, 0))
    newest = seqnos[-1]
    tail = scan_file(trail.file(newest), newest)
    torn = tail.torn_bytes
    if torn:
        _truncate(trail.file(newest), tail.valid_end)
    last, partial, scans = find_last_complete_transaction(trail)
    if partial == 0:
        return RecoveryResult(last, torn, 0, "none", TrailPosition(newest, tail.valid_end))
    if mode is RecoveryMode.APPEND:
        return RecoveryResult(last, torn, partial, "marked", TrailPosition(newest, tail.valid_end))
    # OVERWRITE: back to the end of the last complete transaction, or to the first file's
    # header when no transaction ever completed.
    if last is not None:
        cut = last.end
    else:
        first = scans[-1]
        cut = TrailPosition(first.seqno, _header_end(trail.file(first.seqno)))
    for seqno in seqnos:
        if seqno > cut.seqno:
            trail.file(seqno).unlink()
    fsync_directory(trail.directory)
    _truncate(trail.file(cut.seqno), cut.rba)
    return RecoveryResult(last, torn, partial, "truncated", cut)


def _header_end(path: Path) -> int:
    with open(path, "rb") as handle:
        data = handle.read(_CHUNK)
    try:
        return record_length(data, 0) if summarize(data, 0) is None else 0
    except (IncompleteRecordError, CorruptRecordError):
        return 0


def complete_transactions(
    records: Iterable[tuple[TrailPosition, TrailRecord]],
) -> Iterator[list[tuple[TrailPosition, TrailRecord]]]:
    """Group row records into whole transactions, dropping the partial transaction that
    a RestartAbend marker closes (APPEND mode) and skipping Metadata records. A
    transaction that begins while another is open and unmarked raises
    CorruptRecordError (:func:`unended_transaction`)."""
    open_txn: list[tuple[TrailPosition, TrailRecord]] = []
    for position, record in records:
        if record.io_type in (IOType.METADATA, IOType.GGS_COMMENT):
            continue
        if record.table == FILE_HEADER_NAME:
            continue
        if record.io_type == IOType.RESTART_ABEND:
            open_txn = []
            continue
        if record.begins_transaction and open_txn:
            raise unended_transaction(open_txn[0][0], position)
        open_txn.append((position, record))
        if record.ends_transaction:
            yield open_txn
            open_txn = []
