"""A transaction's row events scanned and selected for the Extract's TABLE row options
(:mod:`engine.extract.tasks.tablerules`): the C kernel ``engine/_native/rowscan.c`` and its
pure-Python twins, which ``tests/extract/test_rowscan.py`` holds it to.

- :func:`scan_entries` (``rowscan.scan``): the values of some columns of a data area, and
  the entries of the kept columns as they are;
- :func:`scan_rows` (``rowscan.rows``): a table's rows of a transaction scanned at once,
  column-wise;
- :func:`select_rows` (``rowscan.select``): a transaction's rows of one table with WHERE
  (comparisons with integers, :func:`conds_of`), COLS/COLSEXCEPT and the op tokens applied
  in one call;
- :func:`columns_of` / :func:`entries_of` (``rowscan.scan`` / ``rowscan.entries``):
  ``decode_column_entries`` and ``encode_columns``.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any, Final

from engine._native import load as load_native
from engine.trail.codec import decode_column_entries, encode_columns
from engine.trail.errors import CorruptRecordError
from engine.trail.layout import COLUMN, COLUMN_SIZE, MAX_VALUE_LENGTH, NULL_ABSENT, NULL_PRESENT
from engine.trail.model import Columns
from params.expr import Binary, Col, Expr, Lit

_ROWSCAN: Final = load_native("rowscan")
NATIVE_SCAN: Final = getattr(_ROWSCAN, "scan", None)  # scan_entries in C
_ENTRIES: Final = getattr(_ROWSCAN, "entries", None)  # encode_columns in C
_unpack_column = COLUMN.unpack_from


def holds(conds: tuple[Cond, ...], columns: Columns) -> bool | None:
    """Whether a row's columns pass each of select's conditions (a column with no value or
    NULL fails); None when a compared value is not 1 to 18 ASCII digits."""
    values = dict(columns)
    passes = True
    for i, op, lit in conds:
        v = values.get(i)
        if v is None:
            passes = False
        elif not (0 < len(v) <= 18 and v.isascii() and v.isdigit()):
            return None
        elif not _ORDERS[op](int(v), lit):
            passes = False
    return passes


def entries_of(columns: Columns) -> bytes:
    """:func:`encode_columns` through ``rowscan.entries`` when built (encode_columns
    raises, saying why, when a column cannot be encoded)."""
    got = _ENTRIES(columns, MAX_VALUE_LENGTH) if _ENTRIES is not None else None
    return encode_columns(columns) if got is None else got


#: the comparison operators of select's conditions, by their code there
_OPS: Final = ("=", "<>", "<", ">", "<=", ">=")
_MIRRORED: Final = {"=": "=", "<>": "<>", "<": ">", ">": "<", "<=": ">=", ">=": "<="}
Cond = tuple[int, int, int]  # (column index, op code in _OPS, literal)


def conds_of(where: Expr, index: Mapping[str, int]) -> tuple[Cond, ...] | None:
    """WHERE as select's conditions, each of which must hold: a comparison of a column of
    the row's image with an integer literal (as int64), or an AND of such; None for any
    other expression (at most 16 conditions)."""
    if isinstance(where, Binary) and where.op == "AND":
        left, right = conds_of(where.left, index), conds_of(where.right, index)
        if left is None or right is None or len(left) + len(right) > _MAX_CONDS:
            return None
        return left + right
    if not isinstance(where, Binary) or where.op not in _MIRRORED:
        return None
    op, col, lit = where.op, where.left, where.right
    if isinstance(lit, Col):
        op, col, lit = _MIRRORED[op], lit, col
    if not (isinstance(col, Col) and isinstance(lit, Lit) and type(lit.value) is int):
        return None
    i = index.get(col.name)
    if col.image == "BEFORE" or i is None or not -(2**63) <= lit.value < 2**63:
        return None
    return ((i, _OPS.index(op), lit.value),)


def select_rows(
    rows: list[tuple[Any, ...]],
    table: str,
    keep: bytes | None,
    conds: tuple[Cond, ...],
    make: Callable[[int], bytes] | None,
) -> list[tuple[tuple[Any, ...], bytes]] | None:
    """A transaction's row events, every one of ``table``, with its rule applied at once:
    (event, token bytes) of each row whose data area's values pass each of ``conds``
    ((column index, op code in :data:`_OPS`, integer): a value of decimal digits compared
    as its int; no entry or NULL fails), the event without columns, its data area and
    before image cut to the ``keep`` flags (a byte per index) when given, and
    ``make(io)`` (None: b"") its tokens, asked once per operation. None when it cannot
    say (the caller's other paths deal with the rows and say what is wrong): a row of
    another table or without parts, a malformed area, a compared value that is not 1 to
    18 ASCII digits. The pure-Python twin of ``rowscan.select``."""
    reads = frozenset(c[0] for c in conds)
    keep_set = None if keep is None else frozenset(i for i, f in enumerate(keep) if f)
    made: dict[int, bytes] = {}
    out: list[tuple[tuple[Any, ...], bytes]] = []
    for e in rows:
        parts = e[17]
        if e[9] != table or not (
            isinstance(parts, tuple) and len(parts) == 4
            and isinstance(parts[1], bytes) and isinstance(parts[2], bytes)
        ):  # fmt: skip
            return None
        try:
            values, data = scan_entries(parts[1], reads, keep_set)
            before = parts[2]
            if keep_set is not None and before:  # the before image loses them too
                before = scan_entries(before, reads, keep_set)[1] or b""
        except CorruptRecordError:
            return None
        passes = holds(conds, tuple(values.items()))
        if passes is None:
            return None  # text that is no plain number: compare() decides
        if not passes:
            continue
        if data is not None:
            e = (*e[:11], (), (), *e[13:17], (parts[0], data, before, parts[3]))
        elif e[11] or e[12]:
            e = (*e[:11], (), (), *e[13:17], parts)
        tokens = b""
        if make is not None:
            if e[8] not in made:
                made[e[8]] = make(e[8])
            tokens = made[e[8]]
        out.append((e, tokens))
    return out


_ORDERS: Final = (operator.eq, operator.ne, operator.lt, operator.gt, operator.le, operator.ge)
_MAX_CONDS: Final = 16
#: select_rows in C when built
SELECT: Final[Callable[..., list[tuple[tuple[Any, ...], bytes]] | None]] = (
    getattr(_ROWSCAN, "select", None) or select_rows
)


MAX_SLOTS: Final = 254
Scanned = tuple[list[int], list[list[Any]], list[tuple[Any, ...]]]


def scan_rows(
    rows: list[tuple[Any, ...]], table: str, slots: bytes, nslots: int, keep: bytes | None,
    missing: object,
) -> Scanned | None:  # fmt: skip
    """The row events of ``table`` among a transaction's ``rows`` scanned at once:
    (positions in ``rows``, the values of each slot's column row after row (``missing``
    where a row has none), the events without columns and with the ``keep`` entries of
    their data areas). ``slots`` gives a byte per column index: 0 not read, k slot k - 1;
    ``keep`` a flag byte per index (None: every entry). None when a row has no parts or a
    malformed data area, or (``keep`` given) a before-image area. The pure-Python twin of
    ``rowscan.rows``."""
    reads = {i: slot - 1 for i, slot in enumerate(slots) if slot}
    keep_set = None if keep is None else frozenset(i for i, f in enumerate(keep) if f)
    positions: list[int] = []
    columns: list[list[Any]] = [[] for _ in range(nslots)]
    events: list[tuple[Any, ...]] = []
    for pos, e in enumerate(rows):
        if e[9] != table:
            continue
        parts = e[17]
        if not (isinstance(parts, tuple) and len(parts) == 4 and isinstance(parts[1], bytes)):
            return None
        if keep is not None and parts[2] != b"":
            return None  # a before image to cut as well: row by row
        try:
            values, projected = scan_entries(parts[1], frozenset(reads), keep_set)
        except CorruptRecordError:
            return None
        got = [missing] * nslots
        for i, v in values.items():
            got[reads[i]] = v
        for k in range(nslots):
            columns[k].append(got[k])
        if projected is not None:
            parts = (parts[0], projected, parts[2], parts[3])
        events.append((*e[:11], (), (), *e[13:17], parts))
        positions.append(pos)
    return positions, columns, events


#: scan_rows in C when built
SCAN_ROWS: Final[Callable[..., Scanned | None]] = getattr(_ROWSCAN, "rows", None) or scan_rows


def scan_entries(
    data: bytes, reads: frozenset[int], keep: frozenset[int] | None
) -> tuple[dict[int, str | None], bytes | None]:
    """The values of the ``reads`` columns of a data area's entries, and (``keep`` given)
    the entries of the ``keep`` columns as they are: what :func:`decode_column_entries`
    and :func:`encode_columns` would give, without decoding or encoding the rest. A
    malformed area raises as :func:`decode_column_entries` does."""
    values: dict[int, str | None] = {}
    kept: list[bytes] = []  # runs of kept entries
    pos, end, last = 0, len(data), -1
    run = 0  # where the current run of kept entries begins
    try:
        while pos < end:
            if pos + COLUMN_SIZE > end:
                break
            index, length, null, vlen = _unpack_column(data, pos)
            stop = pos + COLUMN_SIZE + vlen
            if length != 4 + vlen or index <= last or stop > end:
                break
            if index in reads:
                if null == NULL_ABSENT:
                    values[index] = str(data[pos + COLUMN_SIZE : stop], "utf-8")
                elif null == NULL_PRESENT and vlen == 0:
                    values[index] = None
                else:
                    break
            if keep is not None and index not in keep:
                if run < pos:
                    kept.append(data[run:pos])
                run = stop
            last, pos = index, stop
    except UnicodeDecodeError:
        pos = -1
    if pos != end:
        decode_column_entries(data)  # raises CorruptRecordError, with the offset
        raise AssertionError("a malformed column area decoded")  # (not reached)
    if keep is None:
        return values, None
    if run < end:
        kept.append(data[run:end])
    return values, b"".join(kept)


#: every column index flagged (rowscan.scan reads them all)
_EVERY: Final = b"\x01" * 65536


def columns_of(data: bytes) -> Columns:
    """:func:`decode_column_entries` of a data area, through ``rowscan.scan`` when built
    (it raises, saying where, when the area is malformed)."""
    got = NATIVE_SCAN(data, _EVERY, None) if NATIVE_SCAN is not None and data else None
    return decode_column_entries(data) if got is None else tuple(got[0].items())
