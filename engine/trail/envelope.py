"""The G ... Z envelope every record is wrapped in, and section walking.

Kept apart from the record and file-header codecs so that both can use it.
"""

from __future__ import annotations

import mmap

from engine.trail.errors import CorruptRecordError, IncompleteRecordError, RecordLimitError
from engine.trail.layout import (
    FLAG_SECTION,
    FLAG_WHOLE_RECORD,
    MAX_RECORD_LENGTH,
    MIN_RECORD_LENGTH,
    SECTION,
    SECTION_SIZE,
    TAG_ENVELOPE,
    TAG_TRAILER,
)

Buffer = bytes | bytearray | memoryview | mmap.mmap

_unpack_section = SECTION.unpack_from
_pack_section = SECTION.pack


def record_length(buf: Buffer, offset: int = 0) -> int:
    """Validate the envelope of the record at ``offset`` and return its length.

    Raises IncompleteRecordError when ``buf`` ends before the record does, and
    CorruptRecordError when the G header or the Z trailer is not what it must be.
    """
    available = len(buf) - offset
    if available < SECTION_SIZE:
        raise IncompleteRecordError(
            "record header incomplete", offset=offset, needed=SECTION_SIZE - available
        )
    tag, flag, length = _unpack_section(buf, offset)
    length = int(length)
    if tag != TAG_ENVELOPE or flag != FLAG_WHOLE_RECORD:
        raise CorruptRecordError(f"no record header (tag {tag!r}, flag {flag})", offset=offset)
    if length < MIN_RECORD_LENGTH:
        raise CorruptRecordError(f"record length {length} below minimum", offset=offset)
    if available < length:
        raise IncompleteRecordError(
            f"record of {length} bytes, {available} available",
            offset=offset,
            needed=length - available,
        )
    ztag, zflag, zlength = _unpack_section(buf, offset + length - SECTION_SIZE)
    if ztag != TAG_TRAILER or zflag != FLAG_WHOLE_RECORD or zlength != length:
        raise CorruptRecordError(
            f"record trailer does not match header length {length}", offset=offset
        )
    return length


def sections(buf: Buffer, offset: int, length: int) -> list[tuple[bytes, int, int]]:
    """The inner sections of a record whose envelope was validated: (tag, start, size)."""
    out: list[tuple[bytes, int, int]] = []
    pos = offset + SECTION_SIZE
    end = offset + length - SECTION_SIZE
    while pos < end:
        if pos + SECTION_SIZE > end:
            raise CorruptRecordError("section header crosses the record trailer", offset=pos)
        tag, flag, size = _unpack_section(buf, pos)
        if flag != FLAG_SECTION:
            raise CorruptRecordError(f"section {tag!r} has flag {flag}", offset=pos)
        start = pos + SECTION_SIZE
        if start + size > end:
            raise CorruptRecordError(f"section {tag!r} of {size} bytes overruns", offset=pos)
        out.append((tag, start, size))
        pos = start + size
    return out


def wrap(body: list[bytes]) -> bytes:
    """Wrap already framed inner sections in G ... Z."""
    length = 2 * SECTION_SIZE + sum(map(len, body))
    if length > MAX_RECORD_LENGTH:
        raise RecordLimitError(f"record of {length} bytes exceeds {MAX_RECORD_LENGTH}")
    head = _pack_section(TAG_ENVELOPE, FLAG_WHOLE_RECORD, length)
    tail = _pack_section(TAG_TRAILER, FLAG_WHOLE_RECORD, length)
    return b"".join((head, *body, tail))


def section(tag: bytes, payload: bytes) -> bytes:
    if len(payload) > MAX_RECORD_LENGTH:
        raise RecordLimitError(f"section {tag!r} of {len(payload)} bytes exceeds the limit")
    return _pack_section(tag, FLAG_SECTION, len(payload)) + payload
