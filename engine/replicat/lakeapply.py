"""The Replicat's records as batches per lakehouse table.

:class:`LakeCatalog` answers the Mapper's question "which table is ``owner.name``" for a
lakehouse: it opens the table, or creates it from the trail's table definition (TDR) when
absent, and adds the columns a newer TDR has (schema evolution). :class:`LakeApplier` takes
each mapped record (MAP, COLMAP, KEYCOLS, WHERE/FILTER as on any target) into its table's
batch: apply mode reduces the operations by key (:mod:`reduce`), INSERTALLRECORDS appends
every operation with its history columns. :meth:`LakeApplier.commit` makes one table
commit per table, each recording the Replicat's position.

The key of a table in apply mode is the MAP's KEYCOLS, else the key recorded in the table
when the handler created it (from KEYCOLS then): trail table definitions carry column names
only, not the source's key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from engine.expr.evaluate import Env
from engine.replicat import ApplyError, MappingError
from engine.replicat.apply import Applier
from engine.replicat.mapping import Mapper, TableMap
from engine.targets.base import ColumnInfo, TableInfo
from engine.targets.lake import LakeError
from engine.targets.lake.reduce import Reduced
from engine.targets.lake.tables import LakeTable, Stamp
from engine.targets.lake.types import created_schema, kind_of
from engine.trail.layout import IOType
from engine.trail.model import TableDef, TrailPosition, TrailRecord, valid_datetime
from params.models import ParamFile, TableSpec

_OP_LETTER: dict[int, str] = {IOType.INSERT: "I", IOType.DELETE: "D", IOType.PURGEDATA: "T"}


class Store(Protocol):
    kind: str

    def open(self, owner: str, name: str) -> LakeTable | None: ...

    def create(self, owner: str, name: str, schema: Any, key: tuple[str, ...]) -> LakeTable: ...


@dataclass
class _Pending:
    definition: TableDef | None
    history: bool
    keycols: tuple[str, ...] | None


class LakeCatalog:
    """The lakehouse tables of one Replicat, opened (or created) when first mapped."""

    def __init__(self, store: Store, group: str, note: Any = None) -> None:
        self.store = store
        self.group = group
        self.name = store.kind
        self.dialect = store.kind
        self.tables: dict[str, LakeTable] = {}
        self.recorded: dict[str, TrailPosition | None] = {}
        self.pending: _Pending | None = None
        self.note = note or (lambda text: None)
        self.written: set[str] = set()  # tables this group has committed to (checkpoint db)

    def table(self, owner: str | None, name: str) -> TableInfo | None:
        sql_name = f"{owner}.{name}" if owner else name
        t = self.tables.get(sql_name)
        p = self.pending
        if t is None:
            t = self.store.open(owner or "", name)
            if t is None and sql_name.upper() in self.written:
                raise LakeError(
                    f"{self.store.kind} table {sql_name} was deleted while the Replicat was "
                    "stopped (it has written to it before): recreate it from the source, then "
                    "ALTER REPLICAT; a new empty table would miss every change before the "
                    "restart position."
                )
            if t is None:
                if p is None or p.definition is None:
                    return None
                schema = created_schema(p.definition.column_names, p.history)
                t = self.store.create(owner or "", name, schema, p.keycols or ())
                self.note(
                    f"Created {self.store.kind} table {t.name} from the trail's table "
                    f"definition ({len(schema)} columns)."
                )
            self.tables[sql_name] = t
            self.recorded[sql_name] = at = t.recorded(self.group)
            if at is not None:
                self.note(
                    f"Table {t.name} records Seqno {at.seqno}, RBA {at.rba} for "
                    f"{self.group}: transactions up to there are not applied to it again."
                )
        if p is not None and p.definition is not None:
            have = {f.name.upper() for f in t.schema}
            new = [c for c in p.definition.column_names if c.upper() not in have]
            if new:
                t.add_columns(new)
                self.note(
                    f"Added column(s) {', '.join(new)} to {t.name} (a new table "
                    "definition in the trail)."
                )
        columns = tuple(ColumnInfo(f.name, kind_of(f.type)) for f in t.schema)
        return TableInfo(sql_name, t.name, columns, t.key)


class LakeMapper(Mapper):
    """The Mapper on a :class:`LakeCatalog`: tables created from TDRs, mapped again when a
    newer TDR for the table changes its columns."""

    def __init__(self, model: ParamFile, catalog: LakeCatalog) -> None:
        super().__init__(model, catalog)  # type: ignore[arg-type]
        self.catalog = catalog
        self._defs: dict[str, tuple[str, ...]] = {}
        self._seen: dict[str, TableDef] = {}  # the definition last looked at (by identity)

    def maps_for(self, table: str, definition: TableDef | None) -> tuple[TableMap, ...]:
        if definition is not None and self._seen.get(table) is not definition:
            names = definition.column_names
            if self._defs.get(table, names) != names:
                self.forget(table)
            self._defs[table] = names
            self._seen[table] = definition
        return super().maps_for(table, definition)

    def _resolve(self, table: str, spec: TableSpec, definition: TableDef | None) -> TableMap:
        rules = self.rules[id(spec)]
        self.catalog.pending = _Pending(definition, rules.insert_all, rules.keycols)
        try:
            m = super()._resolve(table, spec, definition)
        finally:
            self.catalog.pending = None
        if not m.insert_all and not rules.keycols and not m.target.key:
            raise MappingError(
                "OGG-01296",
                f"Error mapping from {table} to {m.target.name}: applying by key needs the key "
                "columns (trail table definitions do not carry the source's key): add KEYCOLS "
                "(...) to the MAP, or INSERTALLRECORDS for a history table.",
            )
        return m


@dataclass
class _Batch:
    table: LakeTable
    key: tuple[str, ...] = ()
    rows: list[dict[str, Any]] = field(default_factory=list)
    reduced: Reduced | None = None


class LakeApplier(Applier):
    """Collects mapped records into per-table batches (nothing is written until commit)."""

    def __init__(self, catalog: LakeCatalog) -> None:  # (no SQL target: not Applier's)
        self.catalog = catalog
        self._env: Env | None = None
        self.collisions = 0
        self.counts = {"inserts": 0, "updates": 0, "deletes": 0, "truncates": 0}
        self.skipped_ops = 0  # operations a table had already committed (its own record)
        self.txn: Any = None  # the transaction being applied (engine.pump.txreader)
        self.at = TrailPosition(0, 0)
        self.batches: dict[str, _Batch] = {}
        self._ts: tuple[int, datetime | None] = (-1, None)  # the last commit time (UTC)

    def apply(self, m: TableMap, record: TrailRecord, env: Env | None = None) -> None:
        self._env = env
        name = m.target.sql_name
        done = self.catalog.recorded.get(name)
        if done is not None and self.txn is not None and self.txn.end <= done:
            self.skipped_ops += 1
            return
        batch = self.batches.get(name)
        if batch is None:
            batch = self.batches[name] = _Batch(self.catalog.tables[name], m.key_names)
        io = record.io_type
        if m.insert_all:
            if io != IOType.PURGEDATA:
                row = self._full_row(m, record.columns)
                batch.rows.append(row | self._history(record))
                self.counts["inserts"] += 1
            return
        if batch.reduced is None:
            batch.reduced = Reduced()
        red = batch.reduced
        if io == IOType.INSERT:
            row = self._full_row(m, record.columns)
            red.insert(self._keyof(m, row, record), row)
            self.counts["inserts"] += 1
        elif io in (IOType.UPDATE, IOType.FIELDCOMP):
            row = self._full_row(m, record.columns)
            red.update(self._keyof(m, row, record), row)
            self.counts["updates"] += 1
        elif io in (IOType.KEYFIELDCOMP, IOType.UNIFIED_UPDATE):
            row = self._full_row(m, record.columns)
            before = m.row(record.before_columns)
            old = self._keyof(m, before, record)
            new = tuple(row.get(k, before.get(k)) for k in m.key_names)
            red.key_update(old, new, row)
            self.counts["updates"] += 1
        elif io == IOType.DELETE:
            red.delete(self._keyof(m, m.row(record.columns), record))
            self.counts["deletes"] += 1
        elif io == IOType.PURGEDATA:
            red.truncate()
            self.counts["truncates"] += 1
        else:
            raise ApplyError(0, f"Unsupported operation {record.op_name} on {record.table}.")

    def _keyof(self, m: TableMap, row: dict[str, Any], record: TrailRecord) -> tuple[Any, ...]:
        return tuple(row[k] for k in self._key(m, row, record))

    def _history(self, record: TrailRecord) -> dict[str, Any]:
        txn, at = self.txn, self.at
        letter = _OP_LETTER.get(record.io_type, "U")
        us = record.io_time_us
        if us != self._ts[0]:  # the records of a transaction share their commit time
            when = valid_datetime(us) if us else None
            self._ts = (us, when.replace(tzinfo=UTC) if when else None)
        return {
            "OP_TYPE": letter,
            "OP_TS": self._ts[1],
            "CSN": txn.logcsn if txn is not None else None,
            "TRANID": txn.tranid if txn is not None else None,
            "POSITION": f"{at.seqno:010d}{at.rba:010d}",
        }

    def discard(self) -> None:
        """Forget the batch (its target transaction rolled back)."""
        self.batches = {}

    def commit(self, stamp: Stamp) -> list[str]:
        """One table commit per table of the batch, each recording ``stamp``; the tables
        committed to."""
        batches, self.batches = self.batches, {}
        done = []
        for name, b in batches.items():
            if b.reduced is not None and (b.reduced.states or b.reduced.truncated):
                b.table.commit_apply(b.reduced, b.key, stamp)
            elif b.rows:
                b.table.commit_append(b.rows, stamp)
            else:
                continue
            self.catalog.recorded[name] = stamp.position
            done.append(name)
        return done
