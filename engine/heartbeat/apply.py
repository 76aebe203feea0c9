"""Replicat's side of seed 001: heartbeat records into the target's heartbeat tables.

A record of a heartbeat table (``GG_HEARTBEAT_SEED`` or ``GG_HEARTBEAT`` of the source) is not
mapped by MAP: Replicat applies the OUTGOING_REPLICAT rule, maps the columns automatically
(:func:`engine.heartbeat.flow.incoming_row`), updates the GG_HEARTBEAT row of that path or
inserts it, and inserts a GG_HEARTBEAT_HISTORY row with HEARTBEAT_RECEIVED_TS - all in the
Replicat's current target transaction, so heartbeats commit (or roll back) with the data and its
checkpoint and are applied exactly once, like the data.

Where GoldenGate's documents are silent: INCOMING_REPLICAT_TS is when Replicat read the
transaction from its trail, HEARTBEAT_RECEIVED_TS when it wrote the row (so their difference is
the time spent grouping and applying); the CSN columns take the transaction's LOGCSN (the
source commit SCN) and Replicat's low watermark; the RESTART_CSN / _TS columns the Extract's
restart position (LOGBSN) from the record's tokens. Deletes of heartbeat rows are not applied. A
target without heartbeat tables ignores heartbeat records (one warning).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from engine.heartbeat.flow import (
    STAMPED,
    Row,
    incoming_row,
    replicat_accepts,
    restart_of,
    to_row,
    trail_time,
)
from engine.heartbeat.names import HeartbeatNames, Role
from engine.heartbeat.schema import HEARTBEAT_CSN, HISTORY_CSN, PATH_KEY
from engine.runtime.events import Severity
from engine.targets.base import TableInfo, Target
from engine.trail.model import TableDef, TrailRecord

Emit = Callable[[str, Severity, str], None]


class HeartbeatApplier:
    def __init__(
        self,
        target: Target,
        names: HeartbeatNames,
        group: str,
        clock: Callable[[], datetime],
        emit: Emit,
    ) -> None:
        self.target = target
        self.names = names
        self.group = group.upper()
        self.clock = clock
        self.emit = emit
        self._roles: dict[str, Role | None] = {}
        self._tables: tuple[TableInfo, TableInfo] | None = None
        self._resolved = False
        self.local_database = target.name.upper()
        self.applied = 0
        self.discarded = 0

    def owns(self, table: str) -> bool:
        try:
            role = self._roles[table]
        except KeyError:
            role = self._roles[table] = self.names.role_of(table)
        return role is not None

    # -- the target's tables ---------------------------------------------------------------
    def _schema(self) -> str | None:
        if self.names.owner or self.target.dialect != "postgresql":
            return self.names.owner
        rows = self.target.query(
            "SELECT table_schema FROM information_schema.tables WHERE lower(table_name) = "
            "lower(%s) ORDER BY table_schema",
            (self.names.heartbeat,),
        )
        return str(rows[0][0]) if rows else None

    def tables(self) -> tuple[TableInfo, TableInfo] | None:
        if not self._resolved:
            self._resolved = True
            schema = self._schema()
            hb = self.target.table(schema, self.names.heartbeat)
            history = self.target.table(schema, self.names.history)
            seed = self.target.table(schema, self.names.seed)
            if hb is None or history is None:
                self.emit(
                    "OGG-14096",
                    Severity.WARNING,
                    f"Target database {self.target.name} has no heartbeat tables "
                    f"({self.names.heartbeat}, {self.names.history}): heartbeat records are "
                    "not applied. Run ADD HEARTBEATTABLE there.",
                )
                return None
            if seed is not None:
                rows = self.target.query(f"SELECT LOCAL_DATABASE FROM {seed.sql_name}")
                if rows and rows[0][0]:
                    self.local_database = str(rows[0][0])
            self._tables = (hb, history)
        return self._tables

    # -- applying -------------------------------------------------------------------------
    def apply(
        self,
        record: TrailRecord,
        definition: TableDef | None,
        *,
        logcsn: str | None,
        low_watermark: str | None,
        read_at: datetime | None,
    ) -> None:
        """Apply one heartbeat record in the current target transaction."""
        if record.io_type not in STAMPED or definition is None:
            return
        tables = self.tables()
        if tables is None:
            return
        row = to_row(record.columns, definition.column_names)
        if not replicat_accepts(row, self.group):
            self.discarded += 1
            return
        now = trail_time(self.clock())
        mapped = incoming_row(row, self.group, trail_time(read_at) if read_at else now,
                              self.local_database)  # fmt: skip
        mapped["HEARTBEAT_RECEIVED_TS"] = now
        hb, history = tables
        c, h = HEARTBEAT_CSN, HISTORY_CSN
        bsn, bsn_ts = restart_of(record)  # Extract's LOGBSN, carried as tokens
        self._upsert(hb, {**mapped, c.heartbeat_csn: logcsn, c.low_watermark: low_watermark,
                          c.restart_csn: bsn, c.restart_ts: bsn_ts})  # fmt: skip
        self._insert(history, {**mapped, h.heartbeat_csn: logcsn, h.low_watermark: low_watermark,
                               h.restart_csn: bsn, h.restart_ts: bsn_ts})  # fmt: skip
        self.applied += 1

    def _bound(self, table: TableInfo, row: Row) -> tuple[list[str], list[object]]:
        cols, params = [], []
        for name, value in row.items():
            col = table.column(name)
            if col is not None:
                cols.append(self.target.quote(col.name))
                params.append(self.target.bind(col, value))
        return cols, params

    def _upsert(self, table: TableInfo, row: Row) -> None:
        ph = self.target.placeholder
        same = "IS NOT DISTINCT FROM" if self.target.dialect == "postgresql" else "IS"
        cols, params = self._bound(table, row)
        key_cols, key_params = self._bound(table, {k: row.get(k) for k in PATH_KEY})
        sets = ", ".join(f"{c} = {ph}" for c in cols)
        where = " AND ".join(f"{k} {same} {ph}" for k in key_cols)
        sql = f"UPDATE {table.sql_name} SET {sets} WHERE {where}"
        if self.target.execute(sql, params + key_params) == 0:
            self._insert(table, row)

    def _insert(self, table: TableInfo, row: Row) -> None:
        cols, params = self._bound(table, row)
        marks = ", ".join(self.target.placeholder for _ in cols)
        self.target.execute(
            f"INSERT INTO {table.sql_name} ({', '.join(cols)}) VALUES ({marks})", params
        )
