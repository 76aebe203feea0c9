"""Reading a row of the embedded source by ROWID, as Extract's fetch does (FETCHOPTIONS).

The source's SQLite file is opened read-only (``mode=ro``), as
:mod:`engine.extract.orphans` reads it: another process may hold the database open, and a
fetch never writes. A ROWID names the row's data object, file, block and slot; our storage
keeps the block and slot as the row's ``_rid`` (:mod:`engine.embedded.rows`), so a fetch is
one primary-key read. Values come back Oracle-encoded (what the redo would have carried),
for the Extract's own converters.

Only the driver fetches: a Spark task never opens a driver-local path.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from engine.embedded.dictionary import TableDef
from engine.embedded.errors import DatabaseError
from engine.embedded.values import to_python
from engine.redo.codecs import encode_value
from engine.redo.errors import CodecError
from engine.redo.ids import RowId

Raw = dict[int, bytes | None]


class RowFetcher:
    """Fetches column values of rows of one embedded source, by ROWID."""

    def __init__(self, root: Path) -> None:
        self.uri = f"file:{root / 'data.sqlite'}?mode=ro"
        self._conn: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = sqlite3.connect(self.uri, uri=True, check_same_thread=False, timeout=10)
        return self._conn

    def fetch(self, table: TableDef, rowid: str, columns: tuple[int, ...]) -> Raw | None:
        """The ``columns`` (indices) of the row at ``rowid`` as the redo encodes them; None
        when there is no such row (deleted since, or a ROWID of another object). A source
        that cannot be read (locked beyond the timeout, damaged) is a
        :class:`~engine.embedded.errors.DatabaseError`, not a missing row."""
        try:
            rid = RowId.parse(rowid)
        except (CodecError, ValueError):
            return None
        if (rid.dataobj, rid.file_no) != (table.dataobj, table.file_no):
            return None
        cols = [table.columns[i] for i in columns]
        names = ", ".join(f'"{c.name}"' for c in cols)
        try:
            row = (
                self._connection()
                .execute(
                    f'SELECT {names} FROM "{table.sqlite_name}" WHERE "_rid" = ?',
                    ((rid.block << 16) | rid.slot,),
                )
                .fetchone()
            )
        except sqlite3.Error as exc:
            if "no such table" in str(exc):
                return None  # no storage for it (a table dropped since): the row is missing
            raise DatabaseError(f"cannot read {table.qualified} at ROWID {rowid}: {exc}") from exc
        finally:
            if self._conn is not None:
                self._conn.rollback()  # no read transaction left open between fetches
        if row is None:
            return None
        return {
            i: encode_value(c.type, to_python(c, v))
            for i, c, v in zip(columns, cols, row, strict=True)
        }

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
