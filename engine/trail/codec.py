"""Encode and decode trail records (see layout.py for the byte layout).

``encode_record`` is what Extract calls on Spark executors: a pure function of a
:class:`TrailRecord`, no I/O. ``decode_record`` works over a buffer and an offset and
returns the record with the number of bytes it occupies. ``RecordStream`` accepts bytes in
any chunking (one at a time included) and yields records as they complete.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Final

import engine.trail.continued as pieces
from engine.trail.envelope import Buffer, record_length, section, sections, wrap
from engine.trail.errors import (
    CorruptRecordError,
    IncompleteRecordError,
    RecordLimitError,
    TrailingBytesError,
)
from engine.trail.fileheader import decode_file_header_section
from engine.trail.layout import (
    CHECKSUM_LENGTH,
    COLUMN,
    COLUMN_SIZE,
    FLAG_SECTION,
    FLAG_WHOLE_RECORD,
    HDR_IND,
    MAX_COLUMN_INDEX,
    MAX_PIECE_LENGTH,
    MAX_RECORD_LENGTH,
    MAX_SEGMENT_LENGTH,
    MAX_TABLE_NAME_LENGTH,
    MAX_TOKEN_LENGTH,
    MAX_VALUE_LENGTH,
    NULL_ABSENT,
    NULL_PRESENT,
    NULL_SEGMENT,
    OFF_CONTINUED,
    OFF_IO_TIME,
    OFF_TRANS_IND,
    ROW_HEADER,
    ROW_HEADER_SIZE,
    ROWID_SUFFIX,
    SECTION,
    SECTION_SIZE,
    TAG_BEFORE_IMAGE,
    TAG_DATA,
    TAG_ENVELOPE,
    TAG_FILE_HEADER,
    TAG_ROW_HEADER,
    TAG_TOKENS,
    TAG_TRAILER,
    TOKEN,
    TOKEN_CHECKSUM,
    TOKEN_LOGCSN,
    TOKEN_ORAROWID,
    TOKEN_SIZE,
    TOKEN_TRANID,
    TOKEN_USER,
    IOType,
    TransInd,
    wire_io_type,
)
from engine.trail.model import Columns, FileHeader, TrailRecord

_pack_column = COLUMN.pack
_unpack_column = COLUMN.unpack_from
_pack_token = TOKEN.pack
_pack_row_header = ROW_HEADER.pack
_pack_section = SECTION.pack
_unpack_row_header = ROW_HEADER.unpack_from

_BEFORE_AFTER = {"A": b"A", "B": b"B"}
_CHARS = {b"A": "A", b"B": "B", b"R": "R", b"F": "F"}
_NO_TOKENS: dict[str, object] = {}
_FORMAT_TYPES = {"R": b"R", "F": b"F"}
_FRAGMENT: Final = int(IOType.RECORD_FRAGMENT)


# -- encoding ------------------------------------------------------------------------------
def encode_columns(columns: Columns) -> bytes:
    """The column entries of a data (or before-image) area of one record (a value of at
    most MAX_VALUE_LENGTH bytes; the C twin is ``rowscan.entries``)."""
    return _entries(columns, False)


def area_entries(columns: Columns) -> bytes:
    """:func:`encode_columns` for a record that may be continued: no limit on a value's
    length, a value longer than one entry can say written as segments (layout.NULL_SEGMENT)."""
    return _entries(columns, True)


def _entries(columns: Columns, segments: bool) -> bytes:
    parts: list[bytes] = []
    last = -1
    for index, value in columns:
        if not last < index <= MAX_COLUMN_INDEX:
            raise RecordLimitError(
                f"column index {index} out of order or above {MAX_COLUMN_INDEX} (after {last})"
            )
        last = index
        if value is None:
            parts.append(_pack_column(index, 4, NULL_PRESENT, 0))
            continue
        raw = value.encode("utf-8")
        if len(raw) > MAX_VALUE_LENGTH and not segments:
            raise RecordLimitError(f"value of column {index} is {len(raw)} bytes (> limit)")
        while len(raw) > MAX_SEGMENT_LENGTH:
            full = MAX_SEGMENT_LENGTH
            parts.append(_pack_column(index, 4 + full, NULL_SEGMENT, full))
            parts.append(raw[:full])
            raw = raw[full:]
        parts.append(_pack_column(index, 4 + len(raw), NULL_ABSENT, len(raw)))
        parts.append(raw)
    return b"".join(parts)


def _token_list(
    rowid: str | None,
    logcsn: str | None,
    tranid: str | None,
    extra: tuple[tuple[bytes, int, bytes], ...],
) -> list[tuple[bytes, int, bytes]]:
    out: list[tuple[bytes, int, bytes]] = []
    if rowid is not None:
        out.append((TOKEN_ORAROWID, 0, rowid.encode("ascii") + ROWID_SUFFIX))
    if logcsn is not None:
        out.append((TOKEN_LOGCSN, 0, logcsn.encode("ascii")))
    if tranid is not None:
        out.append((TOKEN_TRANID, 0, tranid.encode("ascii")))
    out.extend(extra)
    return out


def token_entries(record: TrailRecord) -> list[tuple[bytes, int, bytes]]:
    """The token area of a record as (id, info, value) in the order they are written."""
    return _token_list(record.rowid, record.logcsn, record.tranid, record.extra_tokens)


def user_token(name: str, value: str | None) -> tuple[bytes, int, bytes]:
    """The token entry of a TOKENS (...) user token (layout.TOKEN_USER)."""
    raw = name.encode("utf-8") + b"\x00" + (value or "").encode("utf-8")
    return (TOKEN_USER, 1 if value is None else 0, raw)


def pack_tokens(entries: Iterable[tuple[bytes, int, bytes]]) -> bytes:
    """Token entries as the bytes of a token area (after the ones a record has)."""
    return b"".join(_pack_token(tid, info, len(value)) + value for tid, info, value in entries)


def decode_column_entries(data: bytes) -> Columns:
    """The columns of a data (or before-image) area's entries (:func:`encode_columns`)."""
    return _decode_columns(data, 0, len(data)) if data else ()


def user_tokens(record: TrailRecord) -> list[tuple[str, str | None]]:
    """The user tokens of a record, by name, in the order written."""
    out: list[tuple[str, str | None]] = []
    for tid, info, raw in record.extra_tokens:
        if tid == TOKEN_USER and b"\x00" in raw:
            name, _, value = raw.partition(b"\x00")
            text = value.decode("utf-8", "replace")
            out.append((name.decode("utf-8", "replace"), None if info == 1 else text))
    return out


def encode_record(record: TrailRecord) -> bytes:
    """The bytes of one trail record (of its pieces, for a row too large for one record:
    continued.py). Pure; safe to call on a Spark executor."""
    if record.segment is not None:
        return _encode_piece(record, record.segment)
    return encode_row(
        record.io_type,
        record.table,
        record.columns,
        trans_ind=record.trans_ind,
        before_after=record.before_after,
        io_time_us=record.io_time_us,
        audit_rba=record.audit_rba,
        audit_pos=record.audit_pos,
        rowid=record.rowid,
        logcsn=record.logcsn,
        tranid=record.tranid,
        before_columns=record.before_columns,
        format_type=record.format_type,
        partition=record.partition,
        rec_count=record.rec_count,
        orig_node=record.orig_node,
        undo_flag=record.undo_flag,
        syskey_len=record.syskey_len,
        continued=record.continued,
        incomplete=record.incomplete,
        extra_tokens=record.extra_tokens,
    )


def encode_row(
    io_type: int,
    table: str,
    columns: Columns,
    *,
    trans_ind: int = 3,
    before_after: str = "A",
    io_time_us: int = 0,
    audit_rba: int = 0,
    audit_pos: int = 0,
    rowid: str | None = None,
    logcsn: str | None = None,
    tranid: str | None = None,
    before_columns: Columns = (),
    format_type: str = "R",
    partition: int = 4,
    rec_count: int = 1,
    orig_node: int = 0,
    undo_flag: int = 0,
    syskey_len: int = 0,
    continued: bool = False,
    incomplete: int = 0,
    extra_tokens: tuple[tuple[bytes, int, bytes], ...] = (),
) -> bytes:
    """``encode_record`` without building a TrailRecord first: the same bytes for the
    same fields, about twice as fast, for Extract's hot loop on the executors. A record
    longer than MAX_PIECE_LENGTH is written as continued records (continued.py): Continued
    is the writer's, ``continued`` is not written (a record that fits is Continued N)."""
    name = table.encode("utf-8")
    if len(name) > MAX_TABLE_NAME_LENGTH:
        raise RecordLimitError(f"table name of {len(name)} bytes exceeds {MAX_TABLE_NAME_LENGTH}")
    ba = _BEFORE_AFTER.get(before_after)
    ft = _FORMAT_TYPES.get(format_type)
    if ba is None or ft is None:
        raise RecordLimitError(f"BeforeAfter {before_after!r} / FormatType {format_type!r} invalid")
    try:
        header = _pack_row_header(
            HDR_IND,
            undo_flag,
            io_type,
            trans_ind,
            syskey_len,
            b"N",  # Y only on the pieces of a row that is split (continued.py)
            partition,
            ba,
            orig_node,
            ft,
            incomplete,
            io_time_us,
            audit_rba,
            audit_pos,
            rec_count,
            len(name),
        )
    except Exception as exc:  # struct.error: a header field out of its range
        raise RecordLimitError(f"record header field out of range: {exc}") from exc
    before = area_entries(before_columns) if before_columns else b""
    data = area_entries(columns)
    try:
        entries = _token_list(rowid, logcsn, tranid, extra_tokens)
    except UnicodeEncodeError as exc:
        raise RecordLimitError(f"ORAROWID, LOGCSN and TRANID must be ASCII: {exc}") from exc
    parts: list[bytes] = []
    for tid, info, value in entries:
        if len(value) > MAX_TOKEN_LENGTH:
            raise RecordLimitError(f"token {tid!r} of {len(value)} bytes exceeds the limit")
        parts.append(_pack_token(tid, info, len(value)))
        parts.append(value)
    tokens = b"".join(parts)
    length = 4 * SECTION_SIZE + len(header) + len(name) + len(data)
    length += (SECTION_SIZE + len(before) if before else 0) + (
        SECTION_SIZE + len(tokens) if tokens else 0
    )
    if length > MAX_PIECE_LENGTH:
        return pieces.split(header, name, before, data, tokens)
    body = [section(TAG_ROW_HEADER, header + name)]
    if before:
        body.append(section(TAG_BEFORE_IMAGE, before))
    body.append(section(TAG_DATA, data))
    if tokens:
        body.append(section(TAG_TOKENS, tokens))
    return wrap(body)


def _encode_piece(record: TrailRecord, segment: tuple[bytes, bytes]) -> bytes:
    """One piece of a continued row as read record by record (Logdump SAVE copies it)."""
    whole = encode_row(
        record.io_type, record.table, (), trans_ind=record.trans_ind,
        before_after=record.before_after, io_time_us=record.io_time_us,
        audit_rba=record.audit_rba, audit_pos=record.audit_pos, rowid=record.rowid,
        logcsn=record.logcsn, tranid=record.tranid, format_type=record.format_type,
        partition=record.partition, rec_count=record.rec_count, orig_node=record.orig_node,
        undo_flag=record.undo_flag, syskey_len=record.syskey_len,
        incomplete=record.incomplete, extra_tokens=record.extra_tokens,
    )  # fmt: skip
    parts = sections(whole, 0, len(whole))
    body = [bytes(whole[parts[0][1] - SECTION_SIZE : parts[0][1] + parts[0][2]])]
    before, data = segment
    if before:
        body.append(section(TAG_BEFORE_IMAGE, before))
    body.append(section(TAG_DATA, data))
    body += [bytes(whole[s - SECTION_SIZE : s + n]) for tag, s, n in parts[1:] if tag == TAG_TOKENS]
    out = bytearray(wrap(body))
    out[2 * SECTION_SIZE + OFF_CONTINUED] = ord("Y" if record.continued else "N")
    return bytes(out)


# -- templates: a row record encoded before its transaction commits -------------------------
# Extract encodes a row where it decodes it (a Spark task), before it knows the commit: the
# template is the record with TransInd WHOLE, IO time 0 and no LOGCSN/TRANID tokens.
# :func:`finalize` stamps those in when the transaction commits (the same bytes encode_row
# gives for the finished record).
_TEMPLATE_HEAD = struct.Struct(">cBH" + "cBH" + ROW_HEADER.format.lstrip("<>!=@"))
_SECTION_HEAD = SECTION
_IO_TIME = struct.Struct(">q")
_AT_TRANS_IND: Final = 2 * SECTION_SIZE + OFF_TRANS_IND
_AT_IO_TIME: Final = 2 * SECTION_SIZE + OFF_IO_TIME
_ROWID_TOKEN_HEAD: Final = TOKEN.pack(TOKEN_ORAROWID, 0, 20)


def column_entry(index: int, value: str | None) -> bytes:
    """One column entry of a data area (see :func:`encode_columns`)."""
    if value is None:
        return _pack_column(index, 4, NULL_PRESENT, 0)
    raw = value.encode("utf-8")
    size = len(raw)
    if size > MAX_VALUE_LENGTH or index > MAX_COLUMN_INDEX:
        raise RecordLimitError(f"value of column {index} is {size} bytes (> limit)")
    return _pack_column(index, 4 + size, NULL_ABSENT, size) + raw


def row_record(
    io_type: int,
    name: bytes,
    data: bytes,
    before: bytes,
    rowid: bytes | None,
    audit_rba: int,
    audit_pos: int,
    trans_ind: int = TransInd.WHOLE,
    io_time_us: int = 0,
    tokens: bytes = b"",
) -> bytes:
    """A row record from its parts: ``name`` is the table name (UTF-8), ``data`` and
    ``before`` the column entries (:func:`column_entry`) of the data area and of the key's
    before image (empty: none), ``rowid`` the 18 ASCII characters of ORAROWID, ``tokens``
    more token entries (:func:`commit_tokens`). The same bytes as :func:`encode_row`.
    ``io_type`` may carry :data:`~engine.trail.layout.BEFORE_IMAGE` (a before-image record)."""
    io_type, before_after = wire_io_type(io_type)
    if len(name) > MAX_TABLE_NAME_LENGTH:
        raise RecordLimitError(f"table name of {len(name)} bytes exceeds {MAX_TABLE_NAME_LENGTH}")
    hsize = ROW_HEADER_SIZE + len(name)
    length = 4 * SECTION_SIZE + hsize + len(data)
    if before:
        length += SECTION_SIZE + len(before)
    token_area = len(tokens) + (0 if rowid is None else SECTION_SIZE + len(rowid) + 2)
    if token_area:
        length += SECTION_SIZE + token_area
    if length > MAX_RECORD_LENGTH:
        raise RecordLimitError(f"record of {length} bytes exceeds {MAX_RECORD_LENGTH}")
    head = _TEMPLATE_HEAD.pack(
        TAG_ENVELOPE, FLAG_WHOLE_RECORD, length, TAG_ROW_HEADER, FLAG_SECTION, hsize,
        HDR_IND, 0, io_type, trans_ind, 0, b"N", 4, before_after, 0, b"R", 0, io_time_us, audit_rba,
        audit_pos, 1, len(name),
    )  # fmt: skip
    parts = [head, name]
    if before:
        parts.append(_pack_section(TAG_BEFORE_IMAGE, FLAG_SECTION, len(before)))
        parts.append(before)
    parts.append(_pack_section(TAG_DATA, FLAG_SECTION, len(data)))
    parts.append(data)
    if token_area:
        parts.append(_pack_section(TAG_TOKENS, FLAG_SECTION, token_area))
        if rowid is not None:
            parts.append(_ROWID_TOKEN_HEAD)
            parts.append(rowid)
            parts.append(ROWID_SUFFIX)
        parts.append(tokens)
    parts.append(_pack_section(TAG_TRAILER, FLAG_WHOLE_RECORD, length))
    return b"".join(parts)


def commit_tokens(logcsn: str | None, tranid: str | None) -> bytes:
    """The LOGCSN and TRANID token entries of a transaction's first record."""
    try:
        entries = _token_list(None, logcsn, tranid, ())
    except UnicodeEncodeError as exc:
        raise RecordLimitError(f"LOGCSN and TRANID must be ASCII: {exc}") from exc
    for tid, _info, value in entries:
        if len(value) > MAX_TOKEN_LENGTH:
            raise RecordLimitError(f"token {tid!r} of {len(value)} bytes exceeds the limit")
    return b"".join(_pack_token(tid, info, len(value)) + value for tid, info, value in entries)


def finalize(
    template: bytes,
    trans_ind: int,
    io_time_us: int,
    logcsn: str | None,
    tranid: str | None,
    user: bytes = b"",
) -> bytes:
    """The record of ``template`` (a row record before its transaction commits:
    :func:`row_record` with its defaults) with its TransInd, IO time and, on the first
    record of a transaction, the LOGCSN and TRANID tokens; ``user`` token entries (TABLE
    TOKENS) after them."""
    commit = logcsn is not None or tranid is not None
    if not commit and not user:
        out = bytearray(template)
        out[_AT_TRANS_IND] = trans_ind
        _IO_TIME.pack_into(out, _AT_IO_TIME, io_time_us)
        return bytes(out)
    extra = (commit_tokens(logcsn, tranid) if commit else b"") + user
    length = len(template) + len(extra)
    last_tag, start, size = sections(template, 0, len(template))[-1]
    if last_tag == TAG_TOKENS:  # the ORAROWID token is there: the area grows
        length_head = start - SECTION_SIZE
        body = [
            template[SECTION_SIZE:length_head],
            _pack_section(TAG_TOKENS, FLAG_SECTION, size + len(extra)),
            template[start : start + size],
            extra,
        ]
    else:
        length += SECTION_SIZE
        body = [
            template[SECTION_SIZE : len(template) - SECTION_SIZE],
            _pack_section(TAG_TOKENS, FLAG_SECTION, len(extra)),
            extra,
        ]
    if length > MAX_RECORD_LENGTH:
        raise RecordLimitError(f"record of {length} bytes exceeds {MAX_RECORD_LENGTH}")
    out = bytearray(_pack_section(TAG_ENVELOPE, FLAG_WHOLE_RECORD, length))
    for part in body:
        out += part
    out += _pack_section(TAG_TRAILER, FLAG_WHOLE_RECORD, length)
    out[_AT_TRANS_IND] = trans_ind
    _IO_TIME.pack_into(out, _AT_IO_TIME, io_time_us)
    return bytes(out)


# -- decoding ------------------------------------------------------------------------------
def _text(buf: Buffer, start: int, size: int, what: str) -> str:
    try:
        return str(buf[start : start + size], "utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptRecordError(f"{what} is not valid UTF-8", offset=start) from exc


def _decode_columns(buf: Buffer, pos: int, end: int, segments: bool = False) -> Columns:
    """The column entries of an area; ``segments``: a long value may be in segments
    (layout.NULL_SEGMENT, written by :func:`area_entries`)."""
    out: list[tuple[int, str | None]] = []
    append = out.append
    last = -1
    try:
        while pos < end:
            if pos + COLUMN_SIZE > end:
                raise CorruptRecordError("column entry crosses the data area end", offset=pos)
            index, length, null, vlen = _unpack_column(buf, pos)
            if length != 4 + vlen or index <= last:
                raise CorruptRecordError(f"bad column entry for column {index}", offset=pos)
            pos += COLUMN_SIZE
            stop = pos + vlen
            if stop > end:
                raise CorruptRecordError(f"column {index} overruns the data area", offset=pos)
            if null == NULL_ABSENT:
                append((index, str(buf[pos:stop], "utf-8")))
            elif null == NULL_PRESENT and vlen == 0:
                append((index, None))
            elif null == NULL_SEGMENT and segments and vlen == MAX_SEGMENT_LENGTH:
                value, stop = _joined_value(buf, pos, end, index)
                append((index, value))
            else:
                raise CorruptRecordError(
                    f"bad null indicator {null:#x} for column {index}", offset=pos
                )
            last = index
            pos = stop
    except UnicodeDecodeError as exc:
        raise CorruptRecordError("a column value is not valid UTF-8", offset=pos) from exc
    return tuple(out)


def _joined_value(buf: Buffer, pos: int, end: int, index: int) -> tuple[str, int]:
    """The value of column ``index`` whose first segment's bytes start at ``pos``: its
    segments joined, and where the entries after its last segment start."""
    raw = [bytes(buf[pos : pos + MAX_SEGMENT_LENGTH])]
    pos += MAX_SEGMENT_LENGTH
    while True:
        if pos + COLUMN_SIZE > end:
            raise CorruptRecordError(f"column {index} ends in the middle of its value", offset=pos)
        got, length, null, vlen = _unpack_column(buf, pos)
        if got != index or length != 4 + vlen or null not in (NULL_SEGMENT, NULL_ABSENT):
            raise CorruptRecordError(f"bad segment entry for column {index}", offset=pos)
        if null == NULL_SEGMENT and vlen != MAX_SEGMENT_LENGTH:
            raise CorruptRecordError(f"short segment of column {index}", offset=pos)
        pos += COLUMN_SIZE
        if pos + vlen > end:
            raise CorruptRecordError(f"column {index} overruns the data area", offset=pos)
        raw.append(bytes(buf[pos : pos + vlen]))
        pos += vlen
        if null == NULL_ABSENT:
            return b"".join(raw).decode("utf-8"), pos


def _decode_tokens(buf: Buffer, pos: int, end: int) -> dict[str, object]:
    found: dict[str, object] = {}
    extra: list[tuple[bytes, int, bytes]] = []
    while pos < end:
        if pos + TOKEN_SIZE > end:
            raise CorruptRecordError("token crosses the token area end", offset=pos)
        tid, info, tlen = TOKEN.unpack_from(buf, pos)
        pos += TOKEN_SIZE
        if pos + tlen > end:
            raise CorruptRecordError(f"token {tid!r} overruns the token area", offset=pos)
        if tid == TOKEN_ORAROWID and info == 0 and buf[pos + tlen - 2 : pos + tlen] == ROWID_SUFFIX:
            found["rowid"] = _text(buf, pos, tlen - 2, "ORAROWID")
        elif tid == TOKEN_LOGCSN and info == 0 and "logcsn" not in found:
            found["logcsn"] = _text(buf, pos, tlen, "LOGCSN")
        elif tid == TOKEN_TRANID and info == 0 and "tranid" not in found:
            found["tranid"] = _text(buf, pos, tlen, "TRANID")
        elif tid == TOKEN_CHECKSUM and pos + tlen == end and tlen == CHECKSUM_LENGTH:
            pass  # the record's checksum (checksum.py): checked by readers, not re-encoded
        else:
            extra.append((bytes(tid), info, bytes(buf[pos : pos + tlen])))
        pos += tlen
    if extra:
        found["extra_tokens"] = tuple(extra)
    return found


def _decode_data_record(
    buf: Buffer, parts: list[tuple[bytes, int, int]], offset: int
) -> TrailRecord:
    _, start, size = parts[0]
    if size < ROW_HEADER_SIZE:
        raise CorruptRecordError("row header too short", offset=start)
    (
        hdr_ind,
        undo_flag,
        io_type,
        trans_ind,
        syskey_len,
        continued,
        partition,
        before_after,
        orig_node,
        format_type,
        incomplete,
        io_time_us,
        audit_rba,
        audit_pos,
        rec_count,
        name_length,
    ) = _unpack_row_header(buf, start)
    if hdr_ind != HDR_IND:
        raise CorruptRecordError(f"Hdr-Ind {hdr_ind!r} is not E", offset=start)
    if ROW_HEADER_SIZE + name_length != size:
        raise CorruptRecordError("table name length disagrees with the row header", offset=start)
    if trans_ind > 3 or continued not in (b"N", b"Y"):
        raise CorruptRecordError("bad TransInd or Continued flag", offset=start)
    if before_after not in (b"A", b"B") or format_type not in (b"R", b"F"):
        raise CorruptRecordError("bad BeforeAfter or FormatType", offset=start)
    table = _text(buf, start + ROW_HEADER_SIZE, name_length, "table name")
    before_columns: Columns = ()
    columns: Columns | None = None
    tokens: dict[str, object] = _NO_TOKENS
    segment: tuple[bytes, bytes] | None = None
    expected, count = 1, len(parts)
    if continued == b"Y" or io_type == _FRAGMENT:  # a piece of a continued row: its bytes,
        raw_before = b""  # which may end inside an entry
        if expected < count and parts[expected][0] == TAG_BEFORE_IMAGE:
            _, s, n = parts[expected]
            raw_before = bytes(buf[s : s + n])
            expected += 1
        if expected < count and parts[expected][0] == TAG_DATA:
            _, s, n = parts[expected]
            segment = (raw_before, bytes(buf[s : s + n]))
            columns = ()
            expected += 1
    else:
        if expected < count and parts[expected][0] == TAG_BEFORE_IMAGE:
            _, s, n = parts[expected]
            before_columns = _decode_columns(buf, s, s + n, True)
            expected += 1
        if expected < count and parts[expected][0] == TAG_DATA:
            _, s, n = parts[expected]
            columns = _decode_columns(buf, s, s + n, True)
            expected += 1
    if columns is None:
        raise CorruptRecordError("record without a data area", offset=offset)
    if expected < count and parts[expected][0] == TAG_TOKENS:
        _, s, n = parts[expected]
        tokens = _decode_tokens(buf, s, s + n)
        expected += 1
    if expected != count:
        raise CorruptRecordError(f"unexpected section {parts[expected][0]!r}", offset=offset)
    # Positional, in field order: the constructor is on the hot path of every reader.
    return TrailRecord(
        io_type,
        table,
        columns,
        trans_ind,
        _CHARS[before_after],
        io_time_us,
        audit_rba,
        audit_pos,
        _CHARS[format_type],
        partition,
        rec_count,
        orig_node,
        undo_flag,
        syskey_len,
        continued == b"Y",
        incomplete,
        tokens.get("rowid"),  # type: ignore[arg-type]
        tokens.get("logcsn"),  # type: ignore[arg-type]
        tokens.get("tranid"),  # type: ignore[arg-type]
        before_columns,
        tokens.get("extra_tokens", ()),  # type: ignore[arg-type]
        segment,
    )


def decode_any(buf: Buffer, offset: int = 0) -> tuple[TrailRecord | FileHeader, int]:
    """Decode the record at ``offset`` (data record or file header) and its length; a
    continued row joined from its pieces (continued.py), with the length of them all."""
    record, length = decode_piece(buf, offset)
    if isinstance(record, FileHeader) or record.segment is None:
        return record, length
    if record.io_type == IOType.RECORD_FRAGMENT:
        raise CorruptRecordError(
            f"a RecordFragment (RecCount {record.rec_count}) without its base record",
            offset=offset,
        )
    total = pieces.row_length(buf, offset)
    before, data = pieces.joined_areas(buf, offset, total)
    try:
        joined = replace(
            record,
            columns=_decode_columns(data, 0, len(data), True),
            before_columns=_decode_columns(before, 0, len(before), True) if before else (),
            continued=False,
            rec_count=1,
            segment=None,
        )
    except CorruptRecordError as exc:
        raise CorruptRecordError(f"continued row: {exc.message}", offset=offset) from exc
    return joined, total


def decode_piece(buf: Buffer, offset: int = 0) -> tuple[TrailRecord | FileHeader, int]:
    """Decode the record at ``offset`` by itself (Logdump reads so): a piece of a continued
    row comes with its bytes in ``segment`` and no columns."""
    length = record_length(buf, offset)
    parts = sections(buf, offset, length)
    if not parts:
        raise CorruptRecordError("record without sections", offset=offset)
    first = parts[0][0]
    if first == TAG_ROW_HEADER:
        return _decode_data_record(buf, parts, offset), length
    if first == TAG_FILE_HEADER and len(parts) == 1:
        return decode_file_header_section(buf, parts[0][1], parts[0][2]), length
    raise CorruptRecordError(f"record starts with section {first!r}", offset=offset)


def decode_record(buf: Buffer, offset: int = 0) -> tuple[TrailRecord, int]:
    """Decode the data record at ``offset``; return it and the bytes it occupies."""
    record, length = decode_any(buf, offset)
    if not isinstance(record, TrailRecord):
        raise CorruptRecordError("file header where a data record was expected", offset=offset)
    return record, length


def decode_exact(data: Buffer) -> TrailRecord:
    """Decode a buffer holding exactly one data record."""
    record, length = decode_record(data, 0)
    if length != len(data):
        raise TrailingBytesError(f"{len(data) - length} bytes after the record", offset=length)
    return record


# -- cheap looks at encoded records (the writer and recovery use these) --------------------
@dataclass(frozen=True, slots=True)
class RecordSummary:
    length: int
    io_type: int
    trans_ind: int
    io_time_us: int
    table: str
    orig_node: int = 0


def summarize(buf: Buffer, offset: int = 0) -> RecordSummary | None:
    """Length, IOType, TransInd, IO time and table of a data record; None for a file
    header. Validates the envelope only, not the data area."""
    length = record_length(buf, offset)
    tag, _flag, size = SECTION.unpack_from(buf, offset + SECTION_SIZE)
    if tag != TAG_ROW_HEADER:
        if tag == TAG_FILE_HEADER:
            return None
        raise CorruptRecordError(f"record starts with section {tag!r}", offset=offset)
    start = offset + 2 * SECTION_SIZE
    if size < ROW_HEADER_SIZE or start + size > offset + length:
        raise CorruptRecordError("row header size", offset=offset)
    fields = _unpack_row_header(buf, start)
    name_length = fields[15]
    if fields[2] == IOType.RECORD_FRAGMENT:
        raise CorruptRecordError("a RecordFragment without its base record", offset=offset)
    if fields[5] == b"Y":  # a continued row: its pieces are one record to the writer
        length = pieces.row_length(buf, offset)
    return RecordSummary(
        length=length,
        io_type=fields[2],
        trans_ind=fields[3],
        io_time_us=fields[11],
        table=_text(buf, start + ROW_HEADER_SIZE, name_length, "table name"),
        orig_node=fields[8],
    )


def peek_logcsn(buf: Buffer, offset: int = 0) -> str | None:
    """The LOGCSN token of the data record at ``offset``, if it has one."""
    length = record_length(buf, offset)
    for tag, start, size in sections(buf, offset, length):
        if tag == TAG_TOKENS:
            value = _decode_tokens(buf, start, start + size).get("logcsn")
            return value if isinstance(value, str) else None
    return None


# -- streaming -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class DecodedRecord:
    rba: int
    length: int
    record: TrailRecord | FileHeader


class RecordStream:
    """Feed bytes in any chunking; iterate to get the records completed so far.

    Iteration stops (without error) when the buffered bytes end inside a record; feed
    more and iterate again. Corrupt bytes raise CorruptRecordError with the stream RBA.
    """

    _COMPACT_AT = 1 << 16

    def __init__(self, start_rba: int = 0) -> None:
        self._buf = bytearray()
        self._pos = 0
        self._base_rba = start_rba

    def feed(self, data: Buffer) -> None:
        if self._pos >= self._COMPACT_AT:
            del self._buf[: self._pos]
            self._base_rba += self._pos
            self._pos = 0
        self._buf += data

    @property
    def pending(self) -> int:
        """Bytes buffered that are not yet part of a decoded record."""
        return len(self._buf) - self._pos

    @property
    def rba(self) -> int:
        """The RBA of the next record to be decoded."""
        return self._base_rba + self._pos

    def __iter__(self) -> Iterator[DecodedRecord]:
        while True:
            try:
                record, length = decode_any(self._buf, self._pos)
            except IncompleteRecordError:
                return
            except CorruptRecordError as exc:
                raise CorruptRecordError(exc.message, offset=self.rba) from exc
            yield DecodedRecord(self.rba, length, record)
            self._pos += length
