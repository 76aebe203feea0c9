"""Column values as Oracle stores them in row pieces, decoded by column type and charset.

NUMBER/FLOAT, DATE and TIMESTAMP use the embedded database's codecs (one statement of those
encodings: engine/redo/codecs.py). Here, the rest Oracle's redo carries:
BINARY_FLOAT/DOUBLE (IEEE, sign bit flipped for positives, all bits flipped for negatives),
character data in the database or national character set (AL32UTF8, AL16UTF16, single-byte
sets), TIMESTAMP WITH (LOCAL) TIME ZONE (UTC timestamp then hour+20 and minute+60, or a
region id), INTERVAL YEAR TO MONTH / DAY TO SECOND (fields offset by 2^31 and 60), RAW.
A value we cannot decode raises :class:`~engine.redo.errors.RedoCorruptError` naming why.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

from engine.redo.codecs import decode_date, decode_number, decode_timestamp
from engine.redo.errors import CodecError, RedoCorruptError

Value = Decimal | float | str | datetime | timedelta | bytes | None

CHARSETS = {  # Oracle character set name -> Python codec
    "AL32UTF8": "utf-8",
    "UTF8": "utf-8",
    "AL16UTF16": "utf-16-be",
    "US7ASCII": "ascii",
    "WE8ISO8859P1": "latin-1",
    "WE8ISO8859P15": "iso8859-15",
    "WE8MSWIN1252": "cp1252",
    "EE8MSWIN1250": "cp1250",
    "CL8MSWIN1251": "cp1251",
    "EL8MSWIN1253": "cp1253",
    "ZHS16GBK": "gbk",
    "JA16SJIS": "shift_jis",
    "KO16MSWIN949": "cp949",
}
INTERVAL_BIAS = 0x80000000
TZ_HOUR_BIAS, TZ_MINUTE_BIAS = 20, 60


def _ieee(raw: bytes, fmt: str) -> float:
    b = bytes(x ^ 0xFF for x in raw) if not raw[0] & 0x80 else bytes([raw[0] ^ 0x80]) + raw[1:]
    return float(struct.unpack(">" + fmt, b)[0])


def decode_binary_float(raw: bytes) -> float:
    if len(raw) != 4:
        raise RedoCorruptError(f"BINARY_FLOAT of {len(raw)} bytes")
    return _ieee(raw, "f")


def decode_binary_double(raw: bytes) -> float:
    if len(raw) != 8:
        raise RedoCorruptError(f"BINARY_DOUBLE of {len(raw)} bytes")
    return _ieee(raw, "d")


def decode_text(raw: bytes, charset: str = "AL32UTF8") -> str:
    codec = CHARSETS.get(charset.upper())
    if codec is None:
        raise RedoCorruptError(f"character set {charset} is not supported")
    try:
        return raw.decode(codec)
    except UnicodeDecodeError as exc:
        raise RedoCorruptError(f"not {charset} text: {exc.reason} at {exc.start}") from None


def decode_timestamp_tz(raw: bytes) -> datetime:
    """13 bytes: the timestamp in UTC, then hour+20 and minute+60 of the offset (a region
    id when the hour byte has bit 7 set: reported in UTC)."""
    if len(raw) not in (11, 13):
        raise RedoCorruptError(f"TIMESTAMP WITH TIME ZONE of {len(raw)} bytes")
    utc = decode_timestamp(raw[:11]).replace(tzinfo=UTC)
    if len(raw) == 13 and not raw[11] & 0x80:
        off = timedelta(hours=raw[11] - TZ_HOUR_BIAS, minutes=raw[12] - TZ_MINUTE_BIAS)
        return utc.astimezone(timezone(off))
    return utc


def decode_interval_ym(raw: bytes) -> str:
    if len(raw) != 5:
        raise RedoCorruptError(f"INTERVAL YEAR TO MONTH of {len(raw)} bytes")
    years = struct.unpack(">I", raw[:4])[0] - INTERVAL_BIAS
    months = raw[4] - 60
    sign = "-" if years < 0 or months < 0 else "+"
    return f"{sign}{abs(years)}-{abs(months)}"


def decode_interval_ds(raw: bytes) -> timedelta:
    if len(raw) != 11:
        raise RedoCorruptError(f"INTERVAL DAY TO SECOND of {len(raw)} bytes")
    days = struct.unpack(">I", raw[:4])[0] - INTERVAL_BIAS
    h, m, s = raw[4] - 60, raw[5] - 60, raw[6] - 60
    ns = struct.unpack(">I", raw[7:])[0] - INTERVAL_BIAS
    return timedelta(days=days, hours=h, minutes=m, seconds=s, microseconds=ns // 1000)


def _number(raw: bytes, _cs: str) -> Value:
    try:
        return decode_number(raw)
    except CodecError as exc:
        raise RedoCorruptError(f"NUMBER {raw.hex()}: {exc.message}") from None


def _date(raw: bytes, _cs: str) -> Value:
    try:
        return decode_date(raw) if len(raw) == 7 else decode_timestamp(raw)
    except (CodecError, ValueError) as exc:
        raise RedoCorruptError(f"DATE {raw.hex()}: {exc}") from None


def _ts(raw: bytes, _cs: str) -> Value:
    try:
        return decode_timestamp(raw)
    except (CodecError, ValueError) as exc:
        raise RedoCorruptError(f"TIMESTAMP {raw.hex()}: {exc}") from None


def _ts_tz(raw: bytes, _cs: str) -> Value:
    try:
        return decode_timestamp_tz(raw)
    except (CodecError, ValueError) as exc:
        raise RedoCorruptError(f"TIMESTAMP WITH TIME ZONE {raw.hex()}: {exc}") from None


NATIONAL_CHARSETS = ("AL16UTF16", "UTF8")  # the only national character sets Oracle allows


def _national(charset: str) -> str:
    """The national character set an NCHAR/NVARCHAR2 value is in: the column's (a
    dictionary gives the national set for charset form 2), else Oracle's default."""
    return charset.upper() if charset.upper() in NATIONAL_CHARSETS else "AL16UTF16"


# column type name (as the dictionary names it) -> decoder(raw, charset)
DECODERS: dict[str, Callable[[bytes, str], Value]] = {
    "NUMBER": _number,
    "FLOAT": _number,
    "INTEGER": _number,
    "BINARY_FLOAT": lambda r, _c: decode_binary_float(r),
    "BINARY_DOUBLE": lambda r, _c: decode_binary_double(r),
    "VARCHAR2": decode_text,
    "CHAR": decode_text,
    "NVARCHAR2": lambda r, c: decode_text(r, _national(c)),
    "NCHAR": lambda r, c: decode_text(r, _national(c)),
    "DATE": _date,
    "TIMESTAMP": _ts,
    "TIMESTAMP WITH TIME ZONE": _ts_tz,
    "TIMESTAMP WITH LOCAL TIME ZONE": _ts,
    "INTERVAL YEAR TO MONTH": lambda r, _c: decode_interval_ym(r),
    "INTERVAL DAY TO SECOND": lambda r, _c: decode_interval_ds(r),
    "RAW": lambda r, _c: bytes(r),
}
# Oracle's internal type codes (DUMP's Typ=, COL$.TYPE#) -> type name
TYPE_CODES = {
    1: "VARCHAR2",
    2: "NUMBER",
    12: "DATE",
    23: "RAW",
    96: "CHAR",
    100: "BINARY_FLOAT",
    101: "BINARY_DOUBLE",
    180: "TIMESTAMP",
    181: "TIMESTAMP WITH TIME ZONE",
    231: "TIMESTAMP WITH LOCAL TIME ZONE",
    182: "INTERVAL YEAR TO MONTH",
    183: "INTERVAL DAY TO SECOND",
}
UNSUPPORTED = {
    8: "LONG",
    24: "LONG RAW",
    112: "CLOB",
    113: "BLOB",
    114: "BFILE",
    58: "XMLTYPE",
    119: "JSON",
    111: "REF",
    121: "OBJECT",
    122: "NESTED TABLE",
    123: "VARRAY",
}


def base_type(type_name: str) -> str:
    """A column type as :data:`DECODERS` names it: without its lengths, precisions and
    scales, upper case, single spaces (DBA_TAB_COLS.DATA_TYPE writes ``TIMESTAMP(6) WITH TIME
    ZONE`` and ``INTERVAL DAY(2) TO SECOND(6)``; a CREATE TABLE ``varchar2(40 char)``)."""
    return " ".join(re.sub(r"\([^)]*\)", " ", type_name).upper().split())


def decode_value(type_name: str, raw: bytes | None, charset: str = "AL32UTF8") -> Value:
    """A column value; ``None`` for NULL (a missing or empty value)."""
    if raw is None or not raw:
        return None
    base = base_type(type_name)
    fn = DECODERS.get(base)
    if fn is None:
        raise RedoCorruptError(f"column type {type_name} is not supported")
    try:
        return fn(raw, charset)
    except (ValueError, OverflowError) as exc:  # out of range for Python's types
        if isinstance(exc, RedoCorruptError):
            raise
        raise RedoCorruptError(f"{base} {raw.hex()}: {exc}") from None
