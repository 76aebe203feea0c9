"""Reading trails: a cursor over one file and a reader across the file sequence.

Both tolerate a file that is being appended to: reaching the end of the written bytes,
or the middle of a record still being written, ends the current iteration without an
error; iterating again later continues from the same position. Only when a later file of
the trail exists is an incomplete tail an error (the writer never leaves one behind
before rolling over), reported as CorruptRecordError.

Checksums (checksum.py): when a file's header says its records carry a CRC-32, every
record is checked before it is decoded. A mismatch (or a missing token) raises
ChecksumError naming the file and the RBA; with ``verify=False`` (Logdump) the record is
returned with the result of the check in ``TrailEntry.crc`` instead.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from engine.trail.checksum import CrcCheck, check_pieces, check_record
from engine.trail.codec import decode_any, decode_piece
from engine.trail.envelope import record_length
from engine.trail.errors import (
    ChecksumError,
    CorruptRecordError,
    IncompleteRecordError,
    TrailError,
    TrailIOError,
)
from engine.trail.fileheader import decode_file_header
from engine.trail.files import TrailName
from engine.trail.layout import CHECKSUM_CRC32, MAX_RECORD_LENGTH, TAG_ENVELOPE, IOType
from engine.trail.metadata import defines_table
from engine.trail.model import FileHeader, TableDef, TrailPosition, TrailRecord

_CHUNK = 1 << 20


def checksum_error(path: Path, rba: int, crc: CrcCheck) -> ChecksumError:
    """The error (and the one line pump and Replicat abend with) for a failed check."""
    return ChecksumError(
        f"Checksum mismatch in trail file {path}, RBA {rba}: {crc.describe()}", offset=rba
    )


@dataclass(frozen=True, slots=True)
class TrailEntry:
    """A record read from a trail with where it is: next record at ``rba + length``."""

    seqno: int
    rba: int
    length: int
    record: TrailRecord | FileHeader
    crc: CrcCheck | None = None  # the record's checksum check, when its file has checksums

    @property
    def position(self) -> TrailPosition:
        return TrailPosition(self.seqno, self.rba)

    @property
    def end(self) -> TrailPosition:
        return TrailPosition(self.seqno, self.rba + self.length)


class FileCursor:
    """Sequential access to the records of one trail file, with repositioning.

    ``next()`` returns the record at the current RBA and advances, or None when the
    written bytes end (cleanly, or inside a record: then ``incomplete_tail`` > 0).
    ``checksums`` is what the file header says (None until a whole header has been read).
    A continued row (continued.py) is one record joined from its pieces, or, with
    ``pieces`` (Logdump), each piece a record of its own.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        seqno: int = 0,
        rba: int = 0,
        *,
        verify: bool = True,
        pieces: bool = False,
    ) -> None:
        self.path = Path(path)
        self.seqno = seqno
        self.verify = verify
        self._decode = decode_piece if pieces else decode_any
        self.checksums: bool | None = None
        self.last_crc: CrcCheck | None = None
        try:
            self._file: BinaryIO = open(self.path, "rb")  # noqa: SIM115 (closed in close())
        except OSError as exc:
            raise TrailIOError(f"cannot open trail file {self.path}: {exc.strerror}") from exc
        except ValueError as exc:  # a NUL byte in the name: no file can have it
            raise TrailIOError(f"cannot open trail file {str(self.path)!r}: {exc}") from exc
        self._buf = bytearray()
        self._buf_rba = 0
        self.rba = rba
        self.incomplete_tail = 0

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> FileCursor:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _read_checksum_flag(self) -> bool:
        """What the file header says about checksums (read once it is whole)."""
        if self.checksums is None:
            self._file.seek(0)
            head = self._file.read(MAX_RECORD_LENGTH)
            try:
                header, _ = decode_file_header(head, 0)
            except IncompleteRecordError:
                return False  # the header is being written: no record follows it yet
            except CorruptRecordError:
                self.checksums = False  # no ggsci header: nothing to check against
            else:
                self.checksums = header.get("Checksum", 0) == CHECKSUM_CRC32
        return self.checksums

    def _check(self, offset: int, length: int) -> CrcCheck | None:
        """The checksum check of the whole record at ``offset`` of the buffer (None for
        a file header, or a file without checksums), raising ChecksumError on a mismatch
        when verifying."""
        buf = self._buf
        if length == buf[offset + 2] << 8 | buf[offset + 3]:  # the G header's length
            crc = check_record(buf, offset, length)
        else:  # a continued row: each of its pieces
            crc = check_pieces(buf, offset, length)
        if crc is not None and not crc.ok and self.verify:
            raise checksum_error(self.path, self.rba, crc)
        return crc

    def size(self) -> int:
        return os.fstat(self._file.fileno()).st_size

    def seek(self, rba: int) -> None:
        self.rba = rba
        self.incomplete_tail = 0

    def _fill(self, needed: int) -> bool:
        """Make ``needed`` bytes from ``self.rba`` available if the file has them."""
        offset = self.rba - self._buf_rba
        if offset < 0 or offset > len(self._buf):
            self._buf = bytearray()
            self._buf_rba = self.rba
            offset = 0
        elif offset >= _CHUNK:
            del self._buf[:offset]
            self._buf_rba = self.rba
            offset = 0
        missing = offset + needed - len(self._buf)
        if missing <= 0:
            return True
        self._file.seek(self._buf_rba + len(self._buf))
        data = self._file.read(max(missing, _CHUNK))
        self._buf += data
        return len(data) >= missing

    def peek(self) -> tuple[TrailRecord | FileHeader, int] | None:
        """The record at the current RBA and its length, without advancing."""
        needed = 4
        while True:
            if not self._fill(needed):
                available = len(self._buf) - (self.rba - self._buf_rba)
                self.incomplete_tail = max(available, 0)
                if available > 0:
                    # Not kept: the writer's recovery may cut these bytes and write
                    # others there; the next look reads what the file then holds.
                    del self._buf[len(self._buf) - available :]
                return None
            offset = self.rba - self._buf_rba
            checked = self.checksums if self.checksums is not None else self._read_checksum_flag()
            length = 0
            try:
                result = self._decode(self._buf, offset)
            except IncompleteRecordError as exc:
                needed = len(self._buf) - offset + exc.needed
                continue
            except CorruptRecordError as exc:
                if checked:  # a changed byte that breaks decoding: say what the CRC says
                    with contextlib.suppress(TrailError):
                        length = record_length(self._buf, offset)
                    if length:
                        self._check(offset, length)
                raise CorruptRecordError(f"{self.path}: {exc.message}", offset=self.rba) from exc
            # Checked after decoding (the cheaper order; the same verdict): a record that
            # decodes can still have changed values.
            self.last_crc = self._check(offset, result[1]) if checked else None
            self.incomplete_tail = 0
            return result

    def scan_for_header(self) -> int | None:
        """Move to the next RBA after the current one where a whole, valid record starts
        (Logdump's SCANFORHEADER, to get past corrupt bytes); None if the written data
        holds none. A candidate must decode completely, G header to matching Z."""
        base = self.rba + 1
        while True:
            self._file.seek(base)
            window = self._file.read(_CHUNK)
            if not window:
                return None
            pos = window.find(TAG_ENVELOPE)
            while pos != -1:
                self._file.seek(base + pos)
                try:
                    decode_piece(self._file.read(MAX_RECORD_LENGTH), 0)
                except (IncompleteRecordError, CorruptRecordError):
                    pos = window.find(TAG_ENVELOPE, pos + 1)
                    continue
                self.seek(base + pos)
                return self.rba
            base += len(window)

    def next(self) -> TrailEntry | None:
        found = self.peek()
        if found is None:
            return None
        record, length = found
        entry = TrailEntry(self.seqno, self.rba, length, record, self.last_crc)
        self.rba += length
        return entry

    def __iter__(self) -> Iterator[TrailEntry]:
        while (entry := self.next()) is not None:
            yield entry


class TrailReader:
    """Iterate the records of a trail across its files, from ``start``.

    Yields every record, the file header at RBA 0 of each file and Metadata records
    included; ``tables`` holds the table definitions met so far (also those before
    ``start`` in its file), to name columns. Iteration ends at the end of the written
    data; iterate again to follow a trail being written.
    """

    def __init__(
        self,
        trail: str | os.PathLike[str] | TrailName,
        start: TrailPosition | None = None,
        *,
        verify: bool = True,
    ) -> None:
        self.trail = trail if isinstance(trail, TrailName) else TrailName.parse(trail)
        self.verify = verify
        if start is None:
            seqnos = self.trail.seqnos()
            start = TrailPosition(seqnos[0] if seqnos else 0, 0)
        self.position = start
        self.tables: dict[str, TableDef] = {}
        self.header: FileHeader | None = None
        self._cursor: FileCursor | None = None
        self._learned_seqno: int | None = None

    def close(self) -> None:
        if self._cursor is not None:
            self._cursor.close()
            self._cursor = None

    def __enter__(self) -> TrailReader:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _open(self) -> FileCursor | None:
        if self._cursor is not None:
            return self._cursor
        path = self.trail.file(self.position.seqno)
        if not path.exists():
            return None
        # Learn the file header and table definitions that precede the start position
        # (once per file: a reopen after waiting for more data needs no second look). A
        # damaged row record there is not this reader's (it starts after it: ALTER past
        # a bad record works); a damaged table definition is, as it names the columns.
        cursor = FileCursor(path, self.position.seqno, 0, verify=False)
        while self._learned_seqno != self.position.seqno and cursor.rba < self.position.rba:
            entry = cursor.next()
            if entry is None:
                break
            record = entry.record
            bad = entry.crc is not None and not entry.crc.ok
            if bad and self.verify and isinstance(record, TrailRecord):
                if record.io_type == IOType.METADATA and entry.crc is not None:
                    cursor.close()
                    raise checksum_error(path, entry.rba, entry.crc)
                continue
            self._learn(entry)
        cursor.verify = self.verify
        cursor.seek(self.position.rba)
        self._learned_seqno = self.position.seqno
        self._cursor = cursor
        return cursor

    def _learn(self, entry: TrailEntry) -> None:
        record = entry.record
        if isinstance(record, FileHeader):
            self.header = record
        elif defines_table(record):  # a TDR: a DDR names the database, not a table
            self.tables[record.table] = TableDef.from_record(record)

    def __iter__(self) -> Iterator[TrailEntry]:
        """Records up to the current end of the trail. The file is closed when the end
        is reached (and reopened by the next iteration), so a reader left waiting holds
        no descriptor."""
        try:
            yield from self._entries()
        finally:
            self.close()

    def _entries(self) -> Iterator[TrailEntry]:
        while True:
            cursor = self._open()
            if cursor is None:
                return
            entry = cursor.next()
            if entry is not None:
                self._learn(entry)
                self.position = entry.end
                yield entry
                continue
            next_path = self.trail.file(self.position.seqno + 1)
            if not next_path.exists():
                return
            # The writer finished this file before creating the next: read to its end.
            entry = cursor.next()
            if entry is not None:
                self._learn(entry)
                self.position = entry.end
                yield entry
                continue
            if cursor.incomplete_tail:
                raise CorruptRecordError(
                    f"{cursor.path}: {cursor.incomplete_tail} bytes of an incomplete "
                    "record before the next trail file",
                    offset=cursor.rba,
                )
            self.close()
            self.position = TrailPosition(self.position.seqno + 1, 0)

    def records(self) -> Iterator[tuple[TrailEntry, TrailRecord]]:
        """Only row operations and markers: no file headers, no Metadata records."""
        for entry in self:
            record = entry.record
            if isinstance(record, TrailRecord) and record.io_type != IOType.METADATA:
                yield entry, record


def position_problem(trail: TrailName, position: TrailPosition) -> str | None:
    """Why a reader cannot resume at ``position`` of ``trail`` (its read checkpoint), or
    None. Past the end of its file, or in a file that is gone while later ones exist, a
    reader would otherwise wait forever without a word: the message says so (OGG-01705)."""
    path = trail.file(position.seqno)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        later = [s for s in trail.seqnos() if s > position.seqno]
        if later:
            return (
                f"Input trail file '{path}' of the read checkpoint ({position}) does not "
                f"exist, but later files do (from Seqno {later[0]})."
            )
        return None
    if position.rba > size:
        return (
            f"Input checkpoint position {position.rba} for input trail file '{path}' is "
            f"greater than the size of the file ({size})."
        )
    return None


def reaches(trail: TrailName, position: TrailPosition) -> bool:
    """Whether the file of ``position`` is there and holds at least its RBA in bytes."""
    try:
        return trail.file(position.seqno).stat().st_size >= position.rba
    except FileNotFoundError:
        return False


def write_gap(trail: TrailName, written: TrailPosition, name: str) -> str | None:
    """None when ``trail`` still holds everything up to ``written`` (a writer's published
    write checkpoint); else what is missing, naming the file and the positions. Compared
    file by file, so a file the writer created since (it rolls over at each start) does
    not hide a shorter one before it."""
    path = trail.file(written.seqno)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return f"{name} has no file {path}, where its write checkpoint is ({written})"
    if size >= written.rba:
        return None
    end = TrailPosition(written.seqno, size)
    return (
        f"{name} ends at {end} (file {path}) but its write checkpoint is {written}: "
        f"{written.rba - size} bytes are missing"
    )


def read_error_text(exc: TrailError) -> str:
    """One line for a trail that cannot be read on (pump and Replicat abend with it)."""
    if isinstance(exc, ChecksumError):
        return exc.message
    where = f", RBA {exc.offset}" if exc.offset is not None else ""
    return f"Bad record in trail file {exc.message}{where}."
