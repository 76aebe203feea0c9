"""Continued records: a row too large for one record, written as several (seed 003).

Seed 003 names the parts: the record header's ``Continued`` flag ("Y — the record is a
segment; ... this data continues to another record"), ``RecCount`` ("used to reassemble the
chunks") and IOType 161 ``RecordFragment`` ("part of a large row that must be stored across
multiple records (more than just the base record)"). How ggsci lays them out (layout.py,
"continued records"):

* the **base record** has the row's IOType, ``Continued Y``, ``RecCount 1`` and the row's
  whole token area;
* each **RecordFragment** (IOType 161) has ``RecCount`` 2, 3, ... and ``Continued Y``, the
  last one ``N``; every other header field and the table name are the base record's;
* each piece holds the next bytes of the row's before-image area (a B section, while any
  are left) and then of its data area (a D section, always there, maybe empty). The areas
  are cut at any byte, also inside a column entry: a reader joins the B and the D bytes of
  the pieces in order and decodes the columns of the joined areas.

All pieces are written together (one write, one file: the writer rolls over before the
base record, never between pieces), so a reader that meets the base record finds the rest
after it; a trail that ends inside the pieces ends inside the row (IncompleteRecordError,
as a torn record), and anything else where a piece must be is corruption, named.

Pure functions over bytes; the codec (codec.py) builds on them.
"""

from __future__ import annotations

from typing import Final

from engine.trail.envelope import Buffer, record_length, sections
from engine.trail.errors import CorruptRecordError, RecordLimitError
from engine.trail.layout import (
    FLAG_SECTION,
    FLAG_WHOLE_RECORD,
    MAX_PIECE_LENGTH,
    MAX_PIECES,
    OFF_CONTINUED,
    OFF_IO_TYPE,
    OFF_REC_COUNT,
    ROW_HEADER_SIZE,
    SECTION,
    SECTION_SIZE,
    TAG_BEFORE_IMAGE,
    TAG_DATA,
    TAG_ENVELOPE,
    TAG_ROW_HEADER,
    TAG_TOKENS,
    TAG_TRAILER,
    IOType,
)

_pack_section = SECTION.pack
_unpack_section = SECTION.unpack_from
_FRAGMENT: Final = int(IOType.RECORD_FRAGMENT)


def _piece(head: bytes, name: bytes, before: bytes, data: bytes, tokens: bytes | None) -> bytes:
    body = [_pack_section(TAG_ROW_HEADER, FLAG_SECTION, len(head) + len(name)), head, name]
    if before:
        body += [_pack_section(TAG_BEFORE_IMAGE, FLAG_SECTION, len(before)), before]
    body += [_pack_section(TAG_DATA, FLAG_SECTION, len(data)), data]
    if tokens:
        body += [_pack_section(TAG_TOKENS, FLAG_SECTION, len(tokens)), tokens]
    length = 2 * SECTION_SIZE + sum(map(len, body))
    return b"".join(
        (
            _pack_section(TAG_ENVELOPE, FLAG_WHOLE_RECORD, length),
            *body,
            _pack_section(TAG_TRAILER, FLAG_WHOLE_RECORD, length),
        )
    )


def _with(head: bytes, io_type: int, continued: bool, rec_count: int) -> bytes:
    out = bytearray(head)
    out[OFF_IO_TYPE] = io_type
    out[OFF_CONTINUED] = ord("Y") if continued else ord("N")
    out[OFF_REC_COUNT : OFF_REC_COUNT + 2] = rec_count.to_bytes(2, "big")
    return bytes(out)


def split(head: bytes, name: bytes, before: bytes, data: bytes, tokens: bytes) -> bytes:
    """The pieces of a row record, concatenated: ``head`` is its packed 35-byte row header
    (layout.ROW_HEADER), ``name`` its table name, ``before`` and ``data`` the entries of its
    before-image and data areas, ``tokens`` the entries of its token area. Each piece is at
    most MAX_PIECE_LENGTH bytes. RecordLimitError when the base record cannot hold its tokens
    and a byte of the row, or the row needs more than MAX_PIECES pieces."""
    fixed = 4 * SECTION_SIZE + ROW_HEADER_SIZE + len(name)  # G, H, D, Z
    base_room = MAX_PIECE_LENGTH - fixed - (SECTION_SIZE + len(tokens) if tokens else 0)
    room = MAX_PIECE_LENGTH - fixed
    if base_room < SECTION_SIZE + 1:
        raise RecordLimitError(
            f"token area of {len(tokens)} bytes leaves no room for the row in its base record"
        )
    cuts: list[tuple[bytes, bytes]] = []
    b = d = 0
    while b < len(before) or d < len(data) or not cuts:
        left = base_room if not cuts else room
        take_b = b""
        if b < len(before):
            left -= SECTION_SIZE
            take_b = before[b : b + left]
            b += len(take_b)
            left -= len(take_b)
        take_d = b""
        if b >= len(before) and left > 0:
            take_d = data[d : d + left]
            d += len(take_d)
        cuts.append((take_b, take_d))
    if len(cuts) > MAX_PIECES:
        raise RecordLimitError(
            f"row of {len(before) + len(data)} bytes needs {len(cuts)} records "
            f"(RecCount holds {MAX_PIECES})"
        )
    out = []
    last = len(cuts) - 1
    io_type = head[OFF_IO_TYPE]
    for k, (cut_b, cut_d) in enumerate(cuts):
        piece_head = _with(head, io_type if k == 0 else _FRAGMENT, k < last, k + 1)
        out.append(_piece(piece_head, name, cut_b, cut_d, tokens if k == 0 else None))
    return b"".join(out)


def is_base(buf: Buffer, offset: int) -> bool:
    """Whether the record at ``offset`` (envelope checked, a row header first) is the base
    record of a continued row."""
    at = offset + 2 * SECTION_SIZE
    if _unpack_section(buf, offset + SECTION_SIZE)[2] < ROW_HEADER_SIZE:
        return False  # no whole row header: the decoder says what is wrong
    return buf[at + OFF_CONTINUED] == ord("Y") and buf[at + OFF_IO_TYPE] != _FRAGMENT


def is_fragment(buf: Buffer, offset: int) -> bool:
    return buf[offset + 2 * SECTION_SIZE + OFF_IO_TYPE] == _FRAGMENT


def _head(buf: Buffer, offset: int, length: int) -> tuple[bytes, int, int, bool]:
    """(table name, IOType, RecCount, Continued) of the record at ``offset``."""
    tag, _flag, size = _unpack_section(buf, offset + SECTION_SIZE)
    start = offset + 2 * SECTION_SIZE
    if tag != TAG_ROW_HEADER or size < ROW_HEADER_SIZE or start + size > offset + length:
        raise CorruptRecordError("a continued row's piece has no row header", offset=offset)
    rec_count = int.from_bytes(buf[start + OFF_REC_COUNT : start + OFF_REC_COUNT + 2], "big")
    name = bytes(buf[start + ROW_HEADER_SIZE : start + size])
    return name, buf[start + OFF_IO_TYPE], rec_count, buf[start + OFF_CONTINUED] == ord("Y")


def row_length(buf: Buffer, offset: int) -> int:
    """The bytes of the continued row whose base record is at ``offset``: base record and
    every RecordFragment up to the one with Continued N. IncompleteRecordError when ``buf``
    ends before the last piece (more may come); CorruptRecordError naming what is found
    where a piece must be."""
    length = record_length(buf, offset)
    name, _io, count, _more = _head(buf, offset, length)
    pos = offset + length
    more = True
    while more:
        piece = record_length(buf, pos)
        got_name, io_type, got, more = _head(buf, pos, piece)
        count += 1
        if io_type != _FRAGMENT or got != count or got_name != name:
            raise CorruptRecordError(
                f"continued row at RBA {offset}: record {count} of it is missing (found "
                f"IOType {io_type}, RecCount {got} of table {got_name.decode('utf-8', 'replace')!r}"
                " where a RecordFragment must be)",
                offset=pos,
            )
        if count > MAX_PIECES:
            raise CorruptRecordError(f"continued row at RBA {offset} never ends", offset=pos)
        pos += piece
    return pos - offset


def joined_areas(buf: Buffer, offset: int, total: int) -> tuple[bytes, bytes]:
    """The before-image and data areas of the continued row at ``offset`` (``total`` bytes,
    :func:`row_length`), joined from its pieces."""
    before: list[bytes] = []
    data: list[bytes] = []
    pos, end = offset, offset + total
    while pos < end:
        length = record_length(buf, pos)
        for tag, start, size in sections(buf, pos, length):
            if tag == TAG_BEFORE_IMAGE:
                before.append(bytes(buf[start : start + size]))
            elif tag == TAG_DATA:
                data.append(bytes(buf[start : start + size]))
        pos += length
    return b"".join(before), b"".join(data)


def span(buf: Buffer, offset: int = 0) -> int:
    """The bytes of the record at ``offset``: of all its pieces when it is the base record
    of a continued row (:func:`row_length`), else its own."""
    length = record_length(buf, offset)
    if buf[offset + SECTION_SIZE] == TAG_ROW_HEADER[0] and is_base(buf, offset):
        return row_length(buf, offset)
    return length
