"""Row helpers shared by DML and undo: encodings, keys, SQLite storage, ROWIDs.

``rid`` is our row address inside a table: ``block << 16 | slot`` (the SQLite ``_rid``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Final, TypeVar

from engine.embedded import redogen as rg
from engine.embedded.dictionary import IndexDef, TableDef
from engine.embedded.errors import ConstraintError, SourceError, SqlError
from engine.embedded.state import Engine
from engine.embedded.state import Row as Row  # the row type of every row helper
from engine.embedded.values import to_python, to_sqlite
from engine.redo.codecs import encode_value
from engine.redo.ids import RowId
from engine.redo.model import Column

_T = TypeVar("_T")


def rid_block(rid: int) -> int:
    return rid >> 16


def rid_slot(rid: int) -> int:
    return rid & 0xFFFF


def rowid_text(table: TableDef, rid: int) -> str:
    return str(RowId(table.dataobj, table.file_no, rid_block(rid), rid_slot(rid)))


def encode_row(table: TableDef, row: Row) -> rg.Row:
    enc = tuple(encode_value(c.type, v) for c, v in zip(table.columns, row, strict=True))
    return loggable_value(table, enc)


FIELD_MAX: Final = 0xFFFF  # a change vector field's length is 16 bits
FIELD_ROOM: Final = FIELD_MAX - 1024  # what rows may take of a field (a block image's headers)


def loggable_value(table: TableDef, enc: rg.Row) -> rg.Row:
    """``enc`` when each value fits one redo field, else ``GGS-SRC-0203`` (Oracle keeps a
    value that large out of line, as a LOB, which this database does not)."""
    for c, v in zip(table.columns, enc, strict=False):
        if v is not None and len(v) > FIELD_ROOM:
            raise SqlError(
                f"value of {len(v)} bytes for {table.qualified}.{c.name} is larger than one "
                f"redo field ({FIELD_ROOM} bytes); values are not stored out of line (LOBs)",
                "GGS-SRC-0203",
            )
    return enc


def supp_columns(table: TableDef, enc: rg.Row) -> tuple[Column, ...]:
    return tuple(
        Column(table.column_index(k), enc[table.column_index(k)]) for k in table.key_columns
    )


def index_cols(table: TableDef, index: IndexDef) -> tuple[int, ...]:
    return tuple(table.column_index(c) for c in index.columns)


def store_rows(db: Engine, table: TableDef, rids: list[int], rows: Sequence[Row]) -> None:
    cols = table.columns
    names = ", ".join(f'"{c.name}"' for c in cols)
    marks = ", ".join("?" * (len(cols) + 1))
    data = [
        (rid, *(to_sqlite(c, v) for c, v in zip(cols, row, strict=True)))
        for rid, row in zip(rids, rows, strict=True)
    ]
    try:
        db.conn.executemany(
            f'INSERT INTO "{table.sqlite_name}" ("_rid", {names}) VALUES ({marks})', data
        )
    except sqlite3.IntegrityError as exc:
        raise constraint_error(table, exc) from exc


def rows_of(db: Engine, table: TableDef, rids: tuple[int, ...]) -> dict[int, Row]:
    names = ", ".join(f'"{c.name}"' for c in table.columns)
    out: dict[int, Row] = {}
    for rid in rids:
        r = db.conn.execute(
            f'SELECT {names} FROM "{table.sqlite_name}" WHERE "_rid" = ?', (rid,)
        ).fetchone()
        if r is not None:
            out[rid] = tuple(to_python(c, v) for c, v in zip(table.columns, r, strict=True))
    return out


def cols_data(cols: tuple[Column, ...]) -> rg.Row:
    return tuple(c.data for c in cols)


def by_block(
    rids: list[int], rows: Sequence[_T], size: Callable[[_T], int] | None = None
) -> list[tuple[int, list[tuple[int, _T]]]]:
    """Rows grouped by block; with ``size``, a block's rows in several groups when they would
    not fit one redo field together (a QMI's rows, a 19.1 block image: at most
    ``FIELD_ROOM`` bytes each, as Oracle's 16-bit field lengths allow)."""
    groups: dict[int, list[tuple[int, _T]]] = {}
    for rid, row in zip(rids, rows, strict=True):
        groups.setdefault(rid_block(rid), []).append((rid, row))
    if size is None:
        return list(groups.items())
    out: list[tuple[int, list[tuple[int, _T]]]] = []
    for block, group in groups.items():
        part: list[tuple[int, _T]] = []
        used = 0
        for item in group:
            n = size(item[1]) + 8  # the row header, its directory entry
            if part and used + n > FIELD_ROOM:
                out.append((block, part))
                part, used = [], 0
            part.append(item)
            used += n
        out.append((block, part))
    return out


#: Oracle's db_block_size, and what of a data block one row piece may take: the block less
#: its cache layer (20 bytes), transaction layer with two ITL entries (24 + 2 * 24), data
#: header (14), table directory (4), one row directory entry (2) and tail (4): 8,076 bytes.
#: A row whose piece (header, length bytes and values: :func:`piece_bytes`) is larger is
#: chained over several pieces (:func:`row_pieces`).
BLOCK_SIZE: Final = 8192
PIECE_ROOM: Final = BLOCK_SIZE - (20 + 24 + 2 * 24 + 14 + 4 + 2 + 4)
_PIECE_HEAD, _NRID = 3, 6  # a row piece's flag, lock and column count; the next piece's ROWID


def piece_bytes(enc: rg.Row, last: bool = True) -> int:
    """Bytes of a row piece of columns ``enc`` in a block: its header (and, not the last
    piece, the next piece's ROWID), then each column's length and value."""
    return _PIECE_HEAD + (0 if last else _NRID) + row_bytes(enc)


#: a row piece: columns ``[lo, hi)`` of the row; ``skip``: bytes of column ``lo`` held by
#: the pieces before (its row flags' P when not 0); ``end``: where in column ``hi - 1`` its
#: part ends (from the column's first byte; 0: the column's end; its flags' N when not 0)
Part = tuple[int, int, int, int]


def _prefix(n: int) -> int:
    return 1 if n < 250 else 3


def row_pieces(enc: rg.Row) -> list[Part]:
    """The pieces an inserted row ``enc`` (trailing NULLs cut) is stored in, head first
    (:data:`Part`): one when it fits :data:`PIECE_ROOM`, else filled head first, and a
    column that does not fit the room a piece has left is cut, as Oracle cuts it: its
    head ends the piece (flag N), its tail begins the next (flag P), one column number in
    both (docs/redo_format.md "A column cut across pieces"); a NULL is never cut."""
    if piece_bytes(enc) <= PIECE_ROOM:
        return [(0, len(enc), 0, 0)]
    out: list[Part] = []
    lo, skip, used = 0, 0, _PIECE_HEAD + _NRID
    i, at = 0, 0  # the column being laid, and the bytes of it laid before this piece
    while i < len(enc):
        v = enc[i]
        rest = 0 if v is None else len(v) - at
        need = 1 if v is None else rest + _prefix(rest)
        if used + need <= PIECE_ROOM:
            used += need
            i, at = i + 1, 0
            continue
        room = PIECE_ROOM - used
        take = room - _prefix(room - 1) if room >= 2 else 0
        if v is None or take < 1:  # (nothing of it fits: the next piece begins with it)
            out.append((lo, i, skip, 0))
            lo, skip = i, at
        else:  # cut: its first ``take`` bytes end this piece
            at += take
            out.append((lo, i + 1, skip, at))
            lo, skip = i, at
        used = _PIECE_HEAD + _NRID
    out.append((lo, len(enc), skip, 0))
    return out


def piece_values(enc: rg.Row, part: Part) -> rg.Row:
    """The values a row piece ``part`` of ``enc`` holds (a cut column's part)."""
    lo, hi, skip, end = part
    if not skip and not end:
        return enc[lo:hi]
    vals = list(enc[lo:hi])
    if end:
        vals[-1] = (vals[-1] or b"")[:end]
    if skip:
        vals[0] = (vals[0] or b"")[skip:]
    return tuple(vals)


def piece_fb(head: bool, last: bool, part: Part) -> str:
    """A row piece's flags: head, first, last (:data:`redogen.PIECE_FB`), and P / N when
    its first / last column is cut."""
    fb = rg.PIECE_FB[(head, last)]
    if not part[2] and not part[3]:
        return fb
    return fb[:6] + ("P" if part[2] else "-") + ("N" if part[3] else "-")


def row_bytes(enc: rg.Row) -> int:
    """Bytes of an encoded row in a block (length prefixes included)."""
    return sum(1 if v is None else len(v) + (1 if len(v) < 250 else 3) for v in enc)


def constraint_error(table: TableDef, exc: sqlite3.IntegrityError) -> SourceError:
    msg = str(exc)
    if "NOT NULL" in msg:
        col = msg.rsplit(".", 1)[-1]
        return ConstraintError(
            f'cannot insert NULL into ("{table.owner}"."{table.name}"."{col}")', "ORA-01400"
        )
    if "UNIQUE" in msg:
        cols = tuple(c.split(".", 1)[-1].strip() for c in msg.split(":", 1)[-1].split(","))
        name = next((i.name for i in table.indexes if i.columns == cols), "?")
        return ConstraintError(f"unique constraint ({table.owner}.{name}) violated", "ORA-00001")
    return SqlError(f"constraint violated: {msg}")
