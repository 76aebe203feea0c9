"""One trail record as SQL on the target, with HANDLECOLLISIONS (of its MAP) and
INSERTALLRECORDS (every operation an insert: a history table).

Statements never rely on the database raising for the expected conflicts, so a grouped
target transaction is not aborted by one (PostgreSQL aborts a transaction on any error):

* Insert: ``INSERT ... ON CONFLICT DO NOTHING``; no row inserted is a duplicate (error 1),
  which HANDLECOLLISIONS turns into an update of the existing row.
* FieldComp / Update: ``UPDATE ... WHERE key``; no row updated is "no data found" (1403),
  which HANDLECOLLISIONS turns into an insert of the columns the record carries.
* GGSKeyFieldComp (key update) and GGSUnifiedUpdate (UPDATERECORDFORMAT: before and
  after image in one record): the WHERE takes the key from the before image.
* A before image of an update (BeforeAfter B, GETUPDATEBEFORES without UPDATERECORDFORMAT)
  is no change: the engine does not apply it (with GETUPDATEBEFORES and INSERTALLRECORDS
  it is inserted, a row of the history like its after image).
* Delete: ``DELETE ... WHERE key``; a missing row is 1403, ignored with HANDLECOLLISIONS.
* GGSPurgedata (TRUNCATE): ``DELETE FROM`` the table (not for an INSERTALLRECORDS MAP,
  whose table keeps the history).
* INSERTALLRECORDS: the record's columns (after image; a delete's before image) as an
  insert, with the COLMAP literals and expressions (the operation type, commit time...).

COLMAP literals and expressions are set on inserts and updates (an expression whose column
the record does not carry is left out).

Other failures (NOT NULL, a value the column refuses) come from the database as
:class:`engine.targets.TargetSqlError`; the caller retries such a group record by record in
savepoints so that REPERROR can act on the one record.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.expr.evaluate import Env
from engine.expr.values import Status, to_text
from engine.replicat import ApplyError
from engine.replicat.mapping import TableMap
from engine.targets import NO_DATA_FOUND, UNIQUE_CONSTRAINT
from engine.targets.base import Target
from engine.trail.layout import BEFORE_IMAGE, IOType, event_io_type
from engine.trail.model import TrailRecord

#: Target column name -> trail text (None: NULL); the map's ``infos`` give each its column.
Row = dict[str, str | None]


def is_before_image(record: TrailRecord) -> bool:
    """An update's before image written as a record of its own (GETUPDATEBEFORES)."""
    return bool(event_io_type(record.io_type, record.before_after) & BEFORE_IMAGE)


class Applier:
    def __init__(self, target: Target) -> None:
        self.target = target
        self._env: Env | None = None
        self._sql: dict[tuple[str, str, tuple[str, ...], tuple[str, ...]], str] = {}
        self.collisions = 0
        self.counts = {"inserts": 0, "updates": 0, "deletes": 0, "truncates": 0}
        self._ops: dict[int, Callable[[TableMap, TrailRecord], None]] = {
            IOType.INSERT: self._insert,
            IOType.UPDATE: self._update,
            IOType.FIELDCOMP: self._update,
            IOType.KEYFIELDCOMP: self._key_update,
            IOType.UNIFIED_UPDATE: self._key_update,
            IOType.UNIFIED_PK_UPDATE: self._key_update,
            IOType.DELETE: self._delete,
            IOType.PURGEDATA: self._truncate,
        }

    def apply(self, m: TableMap, record: TrailRecord, env: Env | None = None) -> None:
        """Apply ``record`` by ``m``; ``env`` answers its COLMAP expressions."""
        op = self._ops.get(record.io_type)
        if op is None:
            raise ApplyError(0, f"Unsupported operation {record.op_name} on {record.table}.")
        self._env = env
        if m.insert_all:
            if record.io_type != IOType.PURGEDATA:
                self._insert(m, record)
            return
        op(m, record)

    def _full_row(self, m: TableMap, columns: Any) -> Row:
        """The mapped columns, then the COLMAP literals and expressions."""
        row = m.row(columns)
        for col, value in m.literals:
            row[col.name] = value
        if m.compiled:
            env = self._env
            assert env is not None, "a MAP with COLMAP expressions needs a record env"
            for name, fn in m.compiled:
                v = fn(env)
                if v.__class__ is not str and v is not None:
                    if v.__class__ is int:
                        v = str(v)  # to_text of an int (a bool is not of class int)
                    else:
                        v = to_text(v)
                        if v is Status.MISSING:
                            continue
                        if isinstance(v, Status):
                            raise ApplyError(
                                0, f"COLMAP: the value of {m.target.name}.{name} is not valid."
                            )
                row[name] = v
        return row

    # -- SQL text -----------------------------------------------------------------------
    def _statement(
        self, kind: str, m: TableMap, cols: tuple[str, ...], keys: tuple[str, ...]
    ) -> str:
        cache_key = (kind, m.target.sql_name, cols, keys)
        sql = self._sql.get(cache_key)
        if sql is not None:
            return sql
        q, ph = self.target.quote, self.target.placeholder
        where = " AND ".join(f"{q(k)} = {ph}" for k in keys)
        if kind == "insert":
            sql = (
                f"INSERT INTO {m.target.sql_name} ({', '.join(q(c) for c in cols)}) "
                f"VALUES ({', '.join(ph for _ in cols)}) ON CONFLICT DO NOTHING"
            )
        elif kind == "update":
            sets = ", ".join(f"{q(c)} = {ph}" for c in cols)
            sql = f"UPDATE {m.target.sql_name} SET {sets} WHERE {where}"
        elif kind == "delete":
            sql = f"DELETE FROM {m.target.sql_name} WHERE {where}"
        else:
            sql = f"DELETE FROM {m.target.sql_name}"
        self._sql[cache_key] = sql
        return sql

    def _params(self, m: TableMap, row: Row, cols: tuple[str, ...]) -> list[Any]:
        bind, infos = self.target.bind, m.infos
        return [bind(infos[c], row[c]) for c in cols]

    def _key(self, m: TableMap, row: Row, record: TrailRecord) -> tuple[str, ...]:
        keys = m.key_names
        for k in keys:
            if k not in row:
                missing = [k for k in keys if k not in row]
                raise ApplyError(
                    0,
                    f"Key column(s) {', '.join(missing)} of {m.target.name} missing from the "
                    f"{record.op_name} record of {record.table}.",
                )
        return keys

    # -- operations ---------------------------------------------------------------------
    def _insert_row(self, m: TableMap, row: Row) -> int:
        cols = tuple(row)
        return self.target.execute(
            self._statement("insert", m, cols, ()), self._params(m, row, cols)
        )

    def _insert(self, m: TableMap, record: TrailRecord) -> None:
        self._insert_mapped(m, record, self._full_row(m, record.columns))

    def _insert_mapped(self, m: TableMap, record: TrailRecord, row: Row) -> None:
        if self._insert_row(m, row):
            self.counts["inserts"] += 1
            return
        if not m.handle_collisions:
            raise ApplyError(UNIQUE_CONSTRAINT, f"Duplicate key inserting into {m.target.name}.")
        self.collisions += 1
        keys = self._key(m, row, record)
        sets = tuple(c for c in row if c not in keys) or keys
        sql = self._statement("update", m, sets, keys)
        self.target.execute(sql, self._params(m, row, sets) + self._params(m, row, keys))
        self.counts["inserts"] += 1

    def _update(self, m: TableMap, record: TrailRecord) -> None:
        row = self._full_row(m, record.columns)
        keys = self._key(m, row, record)
        self._update_where(m, record, row, keys, self._params(m, row, keys))

    def _key_update(self, m: TableMap, record: TrailRecord) -> None:
        row = self._full_row(m, record.columns)
        before = m.row(record.before_columns)
        keys = self._key(m, before, record)
        self._update_where(m, record, row, keys, self._params(m, before, keys))

    def _update_where(
        self, m: TableMap, record: TrailRecord, row: Row, keys: tuple[str, ...], where: list[Any]
    ) -> None:
        sets = tuple(row)
        sql = self._statement("update", m, sets, keys)
        if self.target.execute(sql, self._params(m, row, sets) + where):
            self.counts["updates"] += 1
            return
        if not m.handle_collisions:
            raise ApplyError(
                NO_DATA_FOUND, f"No data found updating {m.target.name} ({record.op_name}).", sql
            )
        self.collisions += 1
        self._insert_row(m, row)
        self.counts["updates"] += 1

    def _delete(self, m: TableMap, record: TrailRecord) -> None:
        row = m.row(record.columns)
        keys = self._key(m, row, record)
        sql = self._statement("delete", m, (), keys)
        if self.target.execute(sql, self._params(m, row, keys)):
            self.counts["deletes"] += 1
            return
        if not m.handle_collisions:
            raise ApplyError(NO_DATA_FOUND, f"No data found deleting from {m.target.name}.", sql)
        self.collisions += 1

    def _truncate(self, m: TableMap, _record: TrailRecord) -> None:
        self.target.execute(self._statement("truncate", m, (), ()))
        self.counts["truncates"] += 1
