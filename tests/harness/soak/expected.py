"""What the pipeline must deliver: the source's committed transactions, read from its redo.

The embedded source's redo logs are decoded from their first record by the sequential
reference decoder (:func:`tests.harness.logical.decode`), which shares no code with the
Extract's Spark tasks or C kernels; rolled-back and open transactions drop out there.
Each committed transaction that changed a captured table becomes a :class:`Txn` in commit
order, its row changes in the order they were made. Each change carries two images, both
in one canonical spelling (:func:`canon`) so that redo values, trail text and target
values compare equal when they are the same value:

* ``values``: what the trail carries: the whole row (insert), the key and the columns set
  (update), the key (delete);
* ``row``: the whole row after the change (insert, update) or before it (delete), by
  replaying the transactions in commit order: what an apply trigger sees as NEW or OLD.

The logs are read without opening the database, so no lock is taken; read them once the
workload has stopped (a log being appended may end in a torn record).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from engine.embedded.dictionary import Dictionary, TableDef, load_dictionary
from engine.embedded.logfile import read_records
from engine.embedded.logs import list_logs
from engine.targets.base import parse_temporal
from tests.harness.logical import Transaction, decode

Image = tuple[tuple[str, str | None], ...]
"""Column name (upper case) and canonical value, in the table's column order."""


def canon(type_name: str, value: object) -> str | None:
    """One spelling per value, whatever carried it: a redo value (Decimal, datetime), trail
    text (``2026-01-02:03:04:05``), an SQLite value (int, float, ISO text) or a PostgreSQL
    one (Decimal, datetime, ``2026-01-02T03:04:05`` from JSON)."""
    if value is None:
        return None
    kind = type_name.upper()
    if kind.startswith(("NUMBER", "INTEGER", "FLOAT", "DECIMAL", "NUMERIC", "BINARY_")):
        return format(Decimal(str(value)).normalize(), "f")
    if kind.startswith(("DATE", "TIMESTAMP")):
        if not isinstance(value, datetime):
            text = str(value)
            value = parse_temporal(text[:10] + " " + text[11:] if len(text) > 10 else text)
        return value.isoformat(" ")
    if isinstance(value, bytes):
        return value.hex().upper()
    return str(value)


@dataclass(frozen=True, slots=True)
class Change:
    """One row change of a committed transaction (see the module's docstring)."""

    table: str  # OWNER.NAME
    op: str  # INSERT, UPDATE, DELETE
    values: Image
    row: Image


@dataclass(frozen=True, slots=True)
class Txn:
    """A committed transaction: its id and commit SCN as the trail's TRANID and LOGCSN."""

    xid: str
    csn: str
    changes: tuple[Change, ...]

    @property
    def key(self) -> tuple[str, str]:
        return (self.xid, self.csn)


def image(table: TableDef, values: Mapping[str, object]) -> Image:
    """``values`` (by column name, any case) in the table's column order, canonical; columns
    not in ``values`` are left out."""
    folded = {name.upper(): v for name, v in values.items()}
    return tuple(
        (c.name.upper(), canon(c.type, folded[c.name.upper()]))
        for c in table.columns
        if c.name.upper() in folded
    )


class _Replay:
    """The rows of the captured tables as the committed transactions leave them, by key."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, Image], dict[str, object]] = {}

    def step(self, table: TableDef, op: str, key: Image, after: Mapping[str, object]) -> Image:
        name = table.qualified
        if op == "INSERT":
            row = dict(after)
        elif op == "UPDATE":
            row = {**self.rows.pop((name, key), {}), **after}
        else:
            return image(table, self.rows.pop((name, key), dict(key)))
        self.rows[(name, image(table, {k: row.get(k) for k in table.key_columns}))] = row
        return image(table, row)


def _changes(t: Transaction, tables: Mapping[str, TableDef], replay: _Replay) -> list[Change]:
    out = []
    for c in t.changes:
        table = tables.get(f"{c.owner}.{c.table}")
        if table is None:
            continue
        key = image(table, c.key)
        values = image(table, c.after if c.op == "INSERT" else {**c.key, **c.after})
        if c.op == "DELETE":
            values = key
        row = replay.step(table, c.op, key, c.after)
        out.append(Change(table.qualified, c.op, values, row))
    return out


def captured_tables(dictionary: Dictionary, owners: Collection[str]) -> dict[str, TableDef]:
    """The dictionary's tables of ``owners`` (case-insensitive), by ``OWNER.NAME``."""
    wanted = {o.upper() for o in owners}
    return {q: t for q, t in dictionary.tables.items() if t.owner.upper() in wanted}


def transactions(decoded: Iterable[Transaction], tables: Mapping[str, TableDef]) -> list[Txn]:
    """Committed transactions (in commit order) as :class:`Txn`; those that changed no table
    of ``tables`` (DDL, other schemas) are left out, as the Extract leaves them out."""
    replay = _Replay()
    out = []
    for t in decoded:
        changes = _changes(t, tables, replay)
        if changes:
            out.append(Txn(str(t.xid), str(t.commit_scn), tuple(changes)))
    return out


@dataclass(frozen=True)
class Source:
    """The committed transactions of a source database and the tables they were read with."""

    txns: tuple[Txn, ...]
    tables: Mapping[str, TableDef]

    @property
    def changes(self) -> int:
        return sum(len(t.changes) for t in self.txns)


def read_source(root: Path, owners: Collection[str]) -> Source:
    """The committed transactions of the database at ``root`` (``dirdb/<NAME>``) that changed
    a table of ``owners``, decoded from all its redo logs, in commit order."""
    dictionary = load_dictionary(root / "dictionary.json")
    records = [lr.record for info in list_logs(root / "redo") for lr in read_records(info.path)]
    decoded = decode(records, dictionary)
    tables = captured_tables(dictionary, owners)
    return Source(tuple(transactions(decoded.committed, tables)), tables)
