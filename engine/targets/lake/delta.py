"""Delta Lake tables through delta-rs (``deltalake``).

A table is the directory ``<location>/<owner>/<table>`` (lower case). Apply mode is one
MERGE per batch (key columns matched; ``__gg_op`` 'D' deletes a matched row, 'U' updates it
or inserts it); a batch with a TRUNCATE is one overwrite. History mode is one append. Every
commit carries the Replicat's position as an application transaction and in commitInfo.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, Field, Transaction, write_deltalake
from deltalake.exceptions import DeltaError, TableNotFoundError
from deltalake.schema import PrimitiveType

from engine import storage
from engine.targets.lake import LakeError, columns
from engine.targets.lake.location import Location
from engine.targets.lake.reduce import Reduced, Row
from engine.targets.lake.tables import (
    OP_COLUMN,
    LakeTable,
    Stamp,
    is_in,
    version_position,
    with_op,
)
from engine.trail.model import TrailPosition

_KEY_PREFIX = "ggsci key columns: "


def _props(stamp: Stamp) -> CommitProperties:
    return CommitProperties(
        custom_metadata={"ggsci.position": stamp.to_json()},
        app_transactions=[Transaction(stamp.app_id, stamp.version)],
    )


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class DeltaLakeTable(LakeTable):
    def __init__(
        self, name: str, location: Location, parts: tuple[str, ...], dt: DeltaTable
    ) -> None:
        self.name, self.location, self.parts, self.dt = name, location, parts, dt
        self.uri = location.table_uri(*parts)
        self._load()

    def _load(self) -> None:
        self.schema = pa.schema(self.dt.schema().to_arrow())
        desc = self.dt.metadata().description or ""
        keys = desc[len(_KEY_PREFIX) :] if desc.startswith(_KEY_PREFIX) else ""
        self.key = tuple(k for k in keys.split(",") if k)

    def _record(self, stamp: Stamp) -> CommitProperties:
        """The commit properties that record ``stamp`` (txn action and commitInfo)."""
        return _props(stamp)

    def recorded(self, group: str) -> TrailPosition | None:
        v = self.dt.transaction_version(f"ggsci.{group}")
        return None if v is None else version_position(v)

    def exists(self) -> bool:
        """The log file of the version this process knows is still there (a table deleted,
        or replaced by another, has not got it)."""
        log = self.location.storage_of(*self.parts, "_delta_log", f"{self.dt.version():020d}.json")
        try:
            return storage.exists(log)
        except storage.StorageError:
            return False

    def _check(self) -> None:
        if not self.exists():
            raise LakeError(
                f"Delta table {self.name} at {self.uri} was deleted under the Replicat (its "
                "_delta_log is gone): recreate it from the source, then ALTER REPLICAT."
            )
        try:
            self.dt.update_incremental()
        except (DeltaError, OSError) as exc:
            raise LakeError(f"Delta table {self.name}: {_line(exc)}") from exc

    def add_columns(self, names: list[str]) -> None:
        self._check()
        self.dt.alter.add_columns([Field(n, PrimitiveType("string")) for n in names])
        self.dt.update_incremental()
        self._load()

    def _rows(self, key_cols: tuple[str, ...], values: pa.Table) -> pa.Table:
        data = self.dt.to_pyarrow_table()
        return is_in(data, key_cols[0], values.column(0).combine_chunks())

    def commit_apply(self, reduced: Reduced, key_cols: tuple[str, ...], stamp: Stamp) -> None:
        self._check()
        upserts, deletes = self.filled(reduced, key_cols)
        try:
            if reduced.truncated:
                props = self._record(stamp)
                write_deltalake(
                    self.dt, self.arrow(upserts), mode="overwrite", commit_properties=props
                )
                return
            parts = []
            if upserts:
                parts.append(with_op(self.arrow(upserts), "U"))
            if deletes:
                gone = self.arrow([dict(zip(key_cols, k, strict=True)) for k in deletes])
                parts.append(with_op(gone, "D"))
            source = pa.concat_tables(parts)
            cols = [f.name for f in self.schema]
            sets = {_q(c): f"s.{_q(c)}" for c in cols}
        except (DeltaError, OSError) as exc:
            raise LakeError(f"Delta table {self.name}: MERGE failed: {_line(exc)}") from exc
        self._merge(source, key_cols, sets, sets, stamp)

    def commit_reduced(
        self, reduced: columns.Reduced, key_cols: tuple[str, ...], stamp: Stamp
    ) -> None:
        """One MERGE: a partial row's columns it does not set keep the target row's
        values (``__gg_set_<i>`` false), so no current row is read."""
        self._check()
        schema = self.schema
        up = columns.cast_table(reduced.upserts, schema, self.name)
        gone = columns.cast_table(reduced.deletes, schema, self.name)
        partial = bool(reduced.partial.any())
        cols = [f.name for f in schema]
        flags: dict[str, str] = {}
        if partial:
            for i, c in enumerate(cols):
                if c in key_cols:
                    continue
                flag = f"__gg_set_{i}"
                flags[c] = flag
                known = reduced.known.get(c)
                setv = ~reduced.partial | (known if known is not None else False)
                up = up.append_column(flag, pa.array(setv, pa.bool_()))
                gone = gone.append_column(flag, pa.array(np.zeros(gone.num_rows, bool)))
        source = pa.concat_tables([with_op(up, "U"), with_op(gone, "D")])
        sets = {
            _q(c): (
                f"CASE WHEN s.{_q(flags[c])} THEN s.{_q(c)} ELSE t.{_q(c)} END"
                if c in flags
                else f"s.{_q(c)}"
            )
            for c in cols
        }
        inserts = {_q(c): f"s.{_q(c)}" for c in cols}
        self._merge(source, key_cols, sets, inserts, stamp)

    def _merge(
        self,
        source: pa.Table,
        key_cols: tuple[str, ...],
        updates: dict[str, str],
        inserts: dict[str, str],
        stamp: Stamp,
    ) -> None:
        """One MERGE of ``source`` (its rows marked U or D in OP_COLUMN) on the key, with the
        batch's position recorded in the same commit."""
        on = " AND ".join(f"t.{_q(k)} = s.{_q(k)}" for k in key_cols)
        op = _q(OP_COLUMN)
        try:
            (
                self.dt.merge(
                    source,
                    on,
                    source_alias="s",
                    target_alias="t",
                    commit_properties=self._record(stamp),
                )
                .when_matched_delete(predicate=f"s.{op} = 'D'")
                .when_matched_update(updates=updates, predicate=f"s.{op} = 'U'")
                .when_not_matched_insert(updates=inserts, predicate=f"s.{op} = 'U'")
                .execute()
            )
        except (DeltaError, OSError) as exc:
            raise LakeError(f"Delta table {self.name}: MERGE failed: {_line(exc)}") from exc

    def commit_table(self, rows: pa.Table, stamp: Stamp) -> None:
        self._check()
        try:
            write_deltalake(self.dt, rows, mode="append", commit_properties=self._record(stamp))
        except (DeltaError, OSError) as exc:
            raise LakeError(f"Delta table {self.name}: append failed: {_line(exc)}") from exc

    def commit_append(self, rows: list[Row], stamp: Stamp) -> None:
        self._check()
        try:
            write_deltalake(
                self.dt, self.arrow(rows), mode="append", commit_properties=self._record(stamp)
            )
        except (DeltaError, OSError) as exc:
            raise LakeError(f"Delta table {self.name}: append failed: {_line(exc)}") from exc

    def maintain(self, action: str, retain_hours: float) -> str:
        self._check()
        if action == "OPTIMIZE":
            m: dict[str, Any] = self.dt.optimize.compact()
            return (
                f"{self.name}: optimized, {m.get('numFilesRemoved', 0)} files compacted "
                f"into {m.get('numFilesAdded', 0)}"
            )
        if action == "VACUUM":
            gone = self.dt.vacuum(
                retention_hours=int(retain_hours),
                enforce_retention_duration=False,
                dry_run=False,
            )
            return f"{self.name}: vacuumed, {len(gone)} files removed"
        return f"{self.name}: {action} is not a Delta maintenance action (OPTIMIZE, VACUUM)"


class DeltaStore:
    kind = "deltalake"

    def __init__(self, location: Location) -> None:
        self.location = location

    def parts(self, owner: str, name: str) -> tuple[str, ...]:
        return tuple(p.lower() for p in (owner, name) if p)

    def open(self, owner: str, name: str) -> DeltaLakeTable | None:
        uri = self.location.table_uri(*self.parts(owner, name))
        try:
            dt = DeltaTable(uri, storage_options=self.location.delta_options or None)
        except TableNotFoundError:
            return None
        except (DeltaError, OSError) as exc:
            raise LakeError(f"Delta table at {uri}: {_line(exc)}", "OGG-00664") from exc
        return DeltaLakeTable(_shown(owner, name), self.location, self.parts(owner, name), dt)

    def create(
        self, owner: str, name: str, schema: pa.Schema, key: tuple[str, ...]
    ) -> DeltaLakeTable:
        uri = self.location.table_uri(*self.parts(owner, name))
        try:
            dt = DeltaTable.create(
                uri,
                schema,
                mode="error",
                name=name.lower(),
                description=_KEY_PREFIX + ",".join(key),
                storage_options=self.location.delta_options or None,
            )
        except (DeltaError, OSError) as exc:
            raise LakeError(f"Cannot create Delta table {uri}: {_line(exc)}") from exc
        return DeltaLakeTable(_shown(owner, name), self.location, self.parts(owner, name), dt)


def _shown(owner: str, name: str) -> str:
    return f"{owner}.{name}" if owner else name


def _line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
