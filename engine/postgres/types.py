"""Column values of a PostgreSQL source, from ``test_decoding``'s text to the trail's text.

The mapping (docs/postgres-source.md points users here: this table is the one place it is
stated). The capture session runs with ``TimeZone=UTC``, ``DateStyle=ISO`` and
``lc_monetary=C`` so that the server's text is the same whoever configured the database.

==========================================  =================================================
PostgreSQL type                             trail text
==========================================  =================================================
smallint, integer, bigint, oid              the digits
numeric, real, double precision             the server's text (``12.50``, ``1.5e+20``, ``NaN``)
text, character varying, character, name    the characters (``character`` keeps its padding)
bytea                                       hex digits, upper case (``0102FF``), as RAW
boolean                                     ``1`` / ``0``
date                                        ``YYYY-MM-DD``
timestamp [without time zone]               ``YYYY-MM-DD:HH:MI:SS.FFFFFFFFF`` (GoldenGate's)
timestamp with time zone                    the same, in UTC
time, time with time zone, interval         the server's text (``02:00:00``, ``1 day 02:00:00``)
uuid, json, jsonb, xml, inet, cidr,         the server's text
macaddr, bit, bit varying, enum types
money                                       the amount without currency sign or separators
==========================================  =================================================

Unsupported (their values are not written, and each such column is warned about once per
table when the capture first meets the table, as GoldenGate lists unsupported columns):
arrays, composite types, ranges and multiranges, geometric types (point, line, lseg, box,
path, polygon, circle), tsvector, tsquery, pg_lsn, and any type not named above.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

Convert = Callable[[str], str]


def _same(text: str) -> str:
    return text


def _bytea(text: str) -> str:
    return text[2:].upper() if text.startswith("\\x") else text.encode().hex().upper()


def _bool(text: str) -> str:
    return "1" if text in ("true", "t") else "0"


def _timestamp(text: str) -> str:
    """``2020-01-02 03:04:05.678`` -> ``2020-01-02:03:04:05.678000000``; infinity as is."""
    if len(text) < 19 or text[10] != " ":
        return text
    day, clock = text[:10], text[11:]
    frac = ""
    if len(clock) > 8 and clock[8] == ".":
        frac = clock[9:]
    return f"{day}:{clock[:8]}.{frac.ljust(9, '0')[:9]}"


def _timestamptz(text: str) -> str:
    """In UTC (the session's zone): the server's ``+00`` suffix is dropped."""
    if text.endswith("+00"):
        text = text[:-3]
    return _timestamp(text)


def _money(text: str) -> str:
    negative = text.startswith("-")
    digits = "".join(ch for ch in text if ch.isdigit() or ch == ".")
    return ("-" if negative and digits else "") + digits


def _bits(text: str) -> str:
    return text[2:-1] if text.startswith("B'") and text.endswith("'") else text


#: type name (format_type without the modifier) -> conversion
CONVERSIONS: Final[dict[str, Convert]] = {
    **{
        name: _same
        for name in (
            "smallint",
            "integer",
            "bigint",
            "oid",
            "numeric",
            "real",
            "double precision",
            "text",
            "character varying",
            "character",
            "name",
            '"char"',
            "citext",
            "date",
            "time without time zone",
            "time with time zone",
            "interval",
            "uuid",
            "json",
            "jsonb",
            "xml",
            "inet",
            "cidr",
            "macaddr",
            "macaddr8",
        )
    },
    "bytea": _bytea,
    "boolean": _bool,
    "timestamp without time zone": _timestamp,
    "timestamp with time zone": _timestamptz,
    "money": _money,
    "bit": _bits,
    "bit varying": _bits,
}

#: each conversion's number in the C kernel (engine/_native/pgdecode.c; 0: not written)
CONVERSION_CODES: Final[dict[Convert, int]] = {
    _same: 1,
    _bytea: 2,
    _bool: 3,
    _timestamp: 4,
    _timestamptz: 5,
    _money: 6,
    _bits: 7,
}
#: and back: the conversion of each number (the kernel's Python twin)
CONVERSION_OF_CODE: Final[dict[int, Convert]] = {v: k for k, v in CONVERSION_CODES.items()}

#: what a column of an unsupported type is called in the warning
_KIND_OF_TYPTYPE: Final = {
    "c": "composite type",
    "r": "range type",
    "m": "multirange type",
    "p": "pseudo-type",
}


def converter(type_name: str, typtype: str = "b", category: str = "") -> Convert | None:
    """How values of a column are written; None for an unsupported type."""
    if category == "A" or type_name.endswith("[]"):
        return None
    if typtype == "e":  # an enum's label
        return _same
    if typtype in _KIND_OF_TYPTYPE:
        return None
    if typtype == "d":  # a domain: its base type's conversion is chosen by the catalog
        return None
    return CONVERSIONS.get(type_name)


def unsupported_kind(type_name: str, typtype: str, category: str) -> str:
    if category == "A" or type_name.endswith("[]"):
        return "array"
    return _KIND_OF_TYPTYPE.get(typtype, type_name)
