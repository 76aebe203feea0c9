"""Apache Iceberg tables through pyiceberg.

The catalog is pyiceberg's SQL catalog in an SQLite file under the location
(``<location>/iceberg_catalog.db``; for an ``s3://`` location ``dirchk/iceberg_catalog.db``
in the home) unless ``catalogUri`` names another (``catalogType=rest``: a REST catalog). A
table is ``<owner>.<table>`` (lower case) in the catalog, its files under the location.

Apply mode is one catalog commit per batch: a delete of every key the batch touches (or of
every row after a TRUNCATE), then an append of the rows that hold at the end, with the
Replicat's position as snapshot properties and as the table property
``ggsci.position.<GROUP>``, all in one transaction. History mode is one append.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from functools import reduce
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.exceptions import NamespaceAlreadyExistsError, NoSuchTableError
from pyiceberg.expressions import AlwaysTrue, And, BooleanExpression, EqualTo, In, Or
from pyiceberg.table import Table
from pyiceberg.types import StringType

from engine.targets.lake import LakeError, columns, icebergcow
from engine.targets.lake.location import Location
from engine.targets.lake.reduce import Key, Reduced, Row
from engine.targets.lake.tables import LakeTable, Stamp
from engine.trail.model import TrailPosition

KEY_PROPERTY = "ggsci.keyColumns"
CATALOG_FILE = "iceberg_catalog.db"


def _position_property(group: str) -> str:
    return f"ggsci.position.{group}"


class IcebergTable(LakeTable):
    def __init__(self, name: str, ident: str, catalog: Catalog, table: Table) -> None:
        self.name, self.ident, self.catalog, self.table = name, ident, catalog, table
        self._load()

    def _load(self) -> None:
        self.schema = self.table.schema().as_arrow()
        self.key = tuple(k for k in self.table.properties.get(KEY_PROPERTY, "").split(",") if k)

    def _record(self, stamp: Stamp) -> dict[str, str]:
        """The snapshot properties (and table property) that record ``stamp``."""
        return {_position_property(stamp.group): stamp.to_json()}

    def recorded(self, group: str) -> TrailPosition | None:
        text = self.table.properties.get(_position_property(group))
        return None if text is None else Stamp.from_json(text).position

    def exists(self) -> bool:
        return bool(self.catalog.table_exists(self.ident))

    def _check(self) -> None:
        if not self.exists():
            raise LakeError(
                f"Iceberg table {self.name} ({self.ident}) was deleted under the Replicat: "
                "recreate it from the source, then ALTER REPLICAT."
            )
        self.table = self.catalog.load_table(self.ident)

    def add_columns(self, names: list[str]) -> None:
        self._check()
        with self.table.update_schema() as u:
            for n in names:
                u.add_column(n, StringType())
        self.table = self.catalog.load_table(self.ident)
        self._load()

    def _rows(self, key_cols: tuple[str, ...], values: pa.Table) -> pa.Table:
        col = values.column(0).to_pylist()
        return self.table.scan(row_filter=_in(key_cols[0], col)).to_arrow()

    def _where(self, keys: list[Key], key_cols: tuple[str, ...]) -> BooleanExpression:
        typed = self.key_table(keys, key_cols).to_pylist()
        if len(key_cols) == 1:
            return _in(key_cols[0], [r[key_cols[0]] for r in typed])
        terms = [_all([_eq(c, r[c]) for c in key_cols]) for r in typed]
        return reduce(lambda a, b: Or(a, b), terms)

    @contextlib.contextmanager
    def _transaction(self, what: str = "commit") -> Iterator[Any]:
        """One catalog commit: its transaction for the caller to fill, any failure of it as one
        :class:`LakeError` line, and the table loaded again after it."""
        try:
            with self.table.transaction() as tx:
                yield tx
        except LakeError:
            raise
        except Exception as exc:  # pyiceberg raises many kinds; the message says which
            raise LakeError(f"Iceberg table {self.name}: {what} failed: {_line(exc)}") from exc
        self.table = self.catalog.load_table(self.ident)

    def commit_apply(self, reduced: Reduced, key_cols: tuple[str, ...], stamp: Stamp) -> None:
        self._check()
        upserts, deletes = self.filled(reduced, key_cols)
        summary = self._record(stamp)
        with warnings.catch_warnings(), self._transaction() as tx:
            # a key the batch inserts first is in no file yet: nothing to delete
            warnings.filterwarnings("ignore", "Delete operation did not match any records")
            touched = deletes + [tuple(r.get(k) for k in key_cols) for r in upserts]
            if reduced.truncated:
                tx.delete(AlwaysTrue(), snapshot_properties=summary)
            elif touched:
                tx.delete(self._where(touched, key_cols), snapshot_properties=summary)
            if upserts:
                tx.append(self.arrow(upserts), snapshot_properties=summary)
            if summary:
                tx.set_properties(summary)

    def commit_reduced(
        self, reduced: columns.Reduced, key_cols: tuple[str, ...], stamp: Stamp
    ) -> None:
        """One catalog commit: the partial rows completed from the current rows (one
        scan of the keys they need, joined in Arrow), then one copy-on-write snapshot
        without the rows of every key the batch touches and with the rows that hold
        (:mod:`icebergcow`)."""
        self._check()
        schema = self.schema
        up = columns.cast_table(reduced.upserts, schema, self.name)
        gone = columns.cast_table(reduced.deletes, schema, self.name)
        if reduced.partial.any():
            up = self._completed(up, reduced, key_cols)
        touched = pa.concat_tables([up.select(list(key_cols)), gone.select(list(key_cols))])
        summary = self._record(stamp)
        with self._transaction() as tx:
            icebergcow.apply(self.table, tx, touched, up, key_cols, summary)
            if summary:
                tx.set_properties(summary)

    def _completed(
        self, up: pa.Table, reduced: columns.Reduced, key_cols: tuple[str, ...]
    ) -> pa.Table:
        """``up`` with each partial row's unset columns taken from the table's row."""
        part = up.filter(pa.array(reduced.partial))
        current = self.table.scan().to_arrow()  # (an In filter of the keys costs more)
        current = current.filter(pa.array(icebergcow.hits(current, part, key_cols)))
        current = current.select([f.name for f in self.schema]).cast(self.schema)
        suffix = "__gg_current"
        cur = current.rename_columns(
            [c if c in key_cols else c + suffix for c in current.column_names]
        )
        rowno = "__gg_row"
        probe = up.append_column(rowno, pa.array(np.arange(up.num_rows, dtype=np.int64)))
        joined = probe.join(cur, list(key_cols), join_type="left outer").sort_by(rowno)
        arrays = []
        for f in self.schema:
            col = joined.column(f.name)
            known = reduced.known.get(f.name)
            if f.name in key_cols or known is None:
                arrays.append(col)
                continue
            keep = pa.array(~reduced.partial | known)
            arrays.append(pc.if_else(keep, col, joined.column(f.name + suffix)))
        return pa.Table.from_arrays(arrays, schema=self.schema)

    def commit_table(self, rows: pa.Table, stamp: Stamp) -> None:
        self._check()
        summary = self._record(stamp)
        with self._transaction("append") as tx:
            tx.append(rows, snapshot_properties=summary)
            if summary:
                tx.set_properties(summary)

    def commit_append(self, rows: list[Row], stamp: Stamp) -> None:
        self._check()
        summary = self._record(stamp)
        with self._transaction("append") as tx:
            tx.append(self.arrow(rows), snapshot_properties=summary)
            if summary:
                tx.set_properties(summary)

    def maintain(self, action: str, retain_hours: float) -> str:
        self._check()
        if action == "EXPIRESNAPSHOTS":
            before = len(self.table.metadata.snapshots)
            cutoff = datetime.now(UTC) - timedelta(hours=retain_hours)
            self.table.maintenance.expire_snapshots().older_than(cutoff).commit()
            self.table = self.catalog.load_table(self.ident)
            after = len(self.table.metadata.snapshots)
            return f"{self.name}: {before - after} snapshots expired, {after} kept"
        return f"{self.name}: {action} is not an Iceberg maintenance action (EXPIRESNAPSHOTS)"


def open_catalog(name: str, **props: Any) -> Catalog:
    """pyiceberg's ``load_catalog``, tried again when another process made a new SQL
    catalog's tables between its check and its CREATE TABLE (``table iceberg_tables already
    exists``): a Replicat starting while something else opens the same new catalog (another
    Replicat, a reader) would otherwise abend on a race it did not lose anything to."""
    for attempt in range(3):
        try:
            return load_catalog(name, **props)
        except Exception as exc:
            if attempt == 2 or "already exists" not in str(exc):
                raise
    raise AssertionError("unreachable")


class IcebergStore:
    kind = "iceberg"

    def __init__(
        self,
        location: Location,
        home: Path,
        catalog_type: str = "sql",
        catalog_uri: str | None = None,
        catalog_name: str = "ggsci",
    ) -> None:
        self.location = location
        props: dict[str, Any] = {"warehouse": location.uri, **location.iceberg_options}
        if catalog_type == "rest":
            props |= {"type": "rest", "uri": catalog_uri}
        else:
            if catalog_uri is None:
                where = location.local or home / "dirchk"
                where.mkdir(parents=True, exist_ok=True)
                catalog_uri = f"sqlite:///{where / CATALOG_FILE}"
            props |= {"type": "sql", "uri": catalog_uri}
        try:
            self.catalog = open_catalog(catalog_name, **props)
        except Exception as exc:
            raise LakeError(f"Iceberg catalog {catalog_name}: {_line(exc)}", "OGG-00664") from exc

    def ident(self, owner: str, name: str) -> str:
        return f"{(owner or 'default').lower()}.{name.lower()}"

    def open(self, owner: str, name: str) -> IcebergTable | None:
        ident = self.ident(owner, name)
        try:
            table = self.catalog.load_table(ident)
        except NoSuchTableError:
            return None
        return IcebergTable(_shown(owner, name), ident, self.catalog, table)

    def create(
        self, owner: str, name: str, schema: pa.Schema, key: tuple[str, ...]
    ) -> IcebergTable:
        ident = self.ident(owner, name)
        try:
            with contextlib.suppress(NamespaceAlreadyExistsError):
                self.catalog.create_namespace(ident.rsplit(".", 1)[0])
            table = self.catalog.create_table(
                ident, schema=schema, properties={KEY_PROPERTY: ",".join(key)}
            )
        except Exception as exc:
            raise LakeError(f"Cannot create Iceberg table {ident}: {_line(exc)}") from exc
        return IcebergTable(_shown(owner, name), ident, self.catalog, table)


def _in(column: str, values: list[Any]) -> BooleanExpression:
    return In(column, values)  # type: ignore[call-arg, arg-type]


def _eq(column: str, value: Any) -> BooleanExpression:
    return EqualTo(column, value)  # type: ignore[call-arg, arg-type]


def _all(terms: list[BooleanExpression]) -> BooleanExpression:
    return reduce(lambda a, b: And(a, b), terms)


def _shown(owner: str, name: str) -> str:
    return f"{owner}.{name}" if owner else name


def _line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
