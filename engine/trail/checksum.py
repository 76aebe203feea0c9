"""Per-record checksums **(ours: GoldenGate trails have none)**.

A file whose header carries ``Checksum 1`` (``layout.CHECKSUM_CRC32``) ends the token area
of every record after the header with one more token entry::

    id 'C' (0x43)  info 0  length 4  value: CRC-32 (zlib's polynomial), big-endian

The CRC covers every byte of the record before its value: the G header, the H row header
and table name, the B and D areas, the other tokens and the checksum token's own 4-byte
entry header. Only the value and the Z trailer follow, and Z must repeat G's length (the
envelope check), so a changed byte anywhere in the record is detected. A record without a
T area gets one holding only the checksum (``G H D T Z``).

The writer seals records as it writes them (:func:`seal_records`: in C by
``engine/_native/trailkit.c`` ``seal`` when built, the same bytes as here), so the Extract's
hot path, the pump and the writer's own Metadata and RestartAbend records share one rule;
the Extract's miner seals the transactions it closes in its task with the same function
(``MinePlan.seal``), and the writer appends those as they are.
Readers check with :func:`check_record`; the decoder drops the token, so a record read and
encoded again (the pump) carries no stale checksum.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import Final

from engine.trail.envelope import Buffer, record_length, sections
from engine.trail.errors import RecordLimitError
from engine.trail.layout import (
    CHECKSUM_LENGTH,
    FLAG_SECTION,
    FLAG_WHOLE_RECORD,
    MAX_RECORD_LENGTH,
    SECTION,
    SECTION_SIZE,
    TAG_ENVELOPE,
    TAG_FILE_HEADER,
    TAG_TOKENS,
    TAG_TRAILER,
    TOKEN,
    TOKEN_CHECKSUM,
    TOKEN_SIZE,
)

#: The checksum token's entry header, the last 4 bytes the CRC covers.
CHECKSUM_ENTRY: Final = TOKEN.pack(TOKEN_CHECKSUM, 0, CHECKSUM_LENGTH)
#: What sealing adds to a record that already has a T area, and to one that has none.
GROWTH: Final = TOKEN_SIZE + CHECKSUM_LENGTH
GROWTH_NEW_AREA: Final = SECTION_SIZE + GROWTH
# Bytes at the end of a sealed record that the CRC does not cover: the value and Z.
_UNCOVERED: Final = CHECKSUM_LENGTH + SECTION_SIZE
_VALUE = struct.Struct(">I")
_MIN_SEALED: Final = 3 * SECTION_SIZE + GROWTH
_FILE_HEADER: Final = TAG_FILE_HEADER[0]
_pack_section = SECTION.pack
_unpack_value = _VALUE.unpack_from
_crc32 = zlib.crc32


@dataclass(frozen=True, slots=True)
class CrcCheck:
    """A record's stored CRC (None: it carries no checksum token) and the CRC of its bytes."""

    stored: int | None
    computed: int

    @property
    def ok(self) -> bool:
        return self.stored == self.computed

    def describe(self) -> str:
        if self.stored is None:
            return f"no checksum token (its bytes give CRC-32 x{self.computed:08x})"
        if self.ok:
            return f"CRC-32 x{self.stored:08x} verified"
        return (
            f"CRC-32 mismatch: the record says x{self.stored:08x}, "
            f"its bytes give x{self.computed:08x}"
        )


def seal_record(data: Buffer, offset: int = 0) -> bytes:
    """The record at ``offset`` with the checksum token appended to its T area."""
    length = record_length(data, offset)
    last_tag, start, size = sections(data, offset, length)[-1]
    if last_tag == TAG_TOKENS:
        grown = length + GROWTH
        body = [
            bytes(data[offset + SECTION_SIZE : start - SECTION_SIZE]),
            _pack_section(TAG_TOKENS, FLAG_SECTION, size + GROWTH),
            bytes(data[start : start + size]),
        ]
    else:
        grown = length + GROWTH_NEW_AREA
        body = [
            bytes(data[offset + SECTION_SIZE : offset + length - SECTION_SIZE]),
            _pack_section(TAG_TOKENS, FLAG_SECTION, GROWTH),
        ]
    if grown > MAX_RECORD_LENGTH:
        raise RecordLimitError(
            f"record of {length} bytes exceeds {MAX_RECORD_LENGTH} with its checksum "
            "(write the trail with NOCHECKSUM, or make the row smaller)",
            offset=offset,
        )
    covered = b"".join(
        (_pack_section(TAG_ENVELOPE, FLAG_WHOLE_RECORD, grown), *body, CHECKSUM_ENTRY)
    )
    crc = zlib.crc32(covered)
    return covered + _VALUE.pack(crc) + _pack_section(TAG_TRAILER, FLAG_WHOLE_RECORD, grown)


def seal_records(data: Buffer) -> bytes:
    """Concatenated records, each sealed (the Python twin of trailkit.seal)."""
    out: list[bytes] = []
    pos = 0
    while pos < len(data):
        length = record_length(data, pos)
        out.append(seal_record(data, pos))
        pos += length
    return b"".join(out)


def seal_growth(data: Buffer, offset: int = 0) -> int:
    """What :func:`seal_record` added to the sealed record at ``offset``: a token entry,
    or (its T area holds the checksum alone) a whole new T area."""
    _, _, size = sections(data, offset, record_length(data, offset))[-1]
    return GROWTH_NEW_AREA if size == GROWTH else GROWTH


def check_record(buf: Buffer, offset: int, length: int) -> CrcCheck | None:
    """Check the record at ``offset`` whose envelope (``length``) was validated; None for
    a file header record, which carries no checksum."""
    if buf[offset + SECTION_SIZE] == _FILE_HEADER:
        return None
    covered_end = offset + length - _UNCOVERED
    if length < _MIN_SEALED:
        return CrcCheck(None, _crc32(buf[offset : offset + length - SECTION_SIZE]))
    computed = _crc32(buf[offset:covered_end])
    if buf[covered_end - TOKEN_SIZE : covered_end] != CHECKSUM_ENTRY:
        return CrcCheck(None, computed)
    stored: int = _unpack_value(buf, covered_end)[0]
    return CrcCheck(stored, computed)


def check_pieces(buf: Buffer, offset: int, length: int) -> CrcCheck | None:
    """:func:`check_record` of each record in ``length`` bytes from ``offset`` (the pieces
    of a continued row): the first that fails, else the last one's check."""
    crc: CrcCheck | None = None
    pos, end = offset, offset + length
    while pos < end:
        size = record_length(buf, pos)
        crc = check_record(buf, pos, size)
        if crc is not None and not crc.ok:
            return crc
        pos += size
    return crc
