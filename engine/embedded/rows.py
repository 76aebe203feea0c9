"""Row helpers shared by DML and undo: encodings, keys, SQLite storage, ROWIDs.

``rid`` is our row address inside a table: ``block << 16 | slot`` (the SQLite ``_rid``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TypeVar

from engine.embedded import redogen as rg
from engine.embedded.codecs import encode_value
from engine.embedded.dictionary import IndexDef, TableDef
from engine.embedded.errors import ConstraintError, SourceError, SqlError
from engine.embedded.ids import RowId
from engine.embedded.redo import Column
from engine.embedded.redo_codec import KDO_SIZE_MAX
from engine.embedded.state import Engine
from engine.embedded.state import Row as Row  # the row type of every row helper
from engine.embedded.values import to_python, to_sqlite

_T = TypeVar("_T")


def rid_block(rid: int) -> int:
    return rid >> 16


def rid_slot(rid: int) -> int:
    return rid & 0xFFFF


def rowid_text(table: TableDef, rid: int) -> str:
    return str(RowId(table.dataobj, table.file_no, rid_block(rid), rid_slot(rid)))


def encode_row(table: TableDef, row: Row) -> rg.Row:
    return tuple(encode_value(c.type, v) for c, v in zip(table.columns, row, strict=True))


def fits_one_piece(enc: rg.Row) -> bool:
    """Whether a single-row insert's KDO (11.2 IRP), whose row size is 16 bits, can record
    ``enc``. A larger row is logged as an array insert of one row (11.11 QMI: its row image
    has no 16-bit size), see :func:`engine.embedded.dml.insert`."""
    return rg.row_size(enc[: len(rg.columns_of(enc))]) <= KDO_SIZE_MAX


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


def by_block(rids: list[int], rows: Sequence[_T]) -> list[tuple[int, list[tuple[int, _T]]]]:
    groups: dict[int, list[tuple[int, _T]]] = {}
    for rid, row in zip(rids, rows, strict=True):
        groups.setdefault(rid_block(rid), []).append((rid, row))
    return list(groups.items())


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
