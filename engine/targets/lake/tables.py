"""What the Replicat needs of a lakehouse table, whichever the format: its schema and key,
the position its last commit recorded for this Replicat, and the two kinds of commit (a
reduced batch applied by key, rows appended) each carrying the new position.

The position is the trail position after the batch (``seqno``, ``rba``) with the low
watermark CSN and its transaction ids, as :class:`Stamp`; Delta keeps it as the commit's
application transaction (``txn`` action: app id ``ggsci.<GROUP>``, version
``seqno << 32 | rba``) and in the commit info, Iceberg as snapshot summary properties and a
table property written in the same catalog commit.
"""

from __future__ import annotations

import abc
import json
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from engine.targets.lake import columns
from engine.targets.lake.reduce import Key, Reduced, Row
from engine.targets.lake.types import to_arrow
from engine.trail.model import TrailPosition

OP_COLUMN = "__gg_op"


@dataclass(frozen=True, slots=True)
class Stamp:
    """This Replicat's position as a table commit records it."""

    group: str
    position: TrailPosition
    csn: int | None = None
    xids: tuple[str, ...] = ()

    @property
    def app_id(self) -> str:
        return f"ggsci.{self.group}"

    @property
    def version(self) -> int:
        return position_version(self.position)

    def to_json(self) -> str:
        p = self.position
        return json.dumps(
            {
                "group": self.group,
                "seqno": p.seqno,
                "rba": p.rba,
                "csn": self.csn,
                "xids": list(self.xids),
            }
        )

    @classmethod
    def from_json(cls, text: str) -> Stamp:
        d = json.loads(text)
        return cls(
            str(d["group"]),
            TrailPosition(int(d["seqno"]), int(d["rba"])),
            d.get("csn"),
            tuple(d.get("xids") or ()),
        )


def position_version(p: TrailPosition) -> int:
    """A trail position as one increasing number (Delta's txn version is a long)."""
    return (p.seqno << 32) | p.rba


def version_position(v: int) -> TrailPosition:
    return TrailPosition(v >> 32, v & 0xFFFFFFFF)


class LakeTable(abc.ABC):
    """One open table. ``name``: as messages show it; ``key``: recorded key columns."""

    name: str
    schema: pa.Schema
    key: tuple[str, ...]

    @abc.abstractmethod
    def recorded(self, group: str) -> TrailPosition | None:
        """The position the table's newest commit for ``group`` recorded (None: never)."""

    @abc.abstractmethod
    def add_columns(self, names: list[str]) -> None: ...

    @abc.abstractmethod
    def exists(self) -> bool:
        """False when the table was deleted under the Replicat."""

    @abc.abstractmethod
    def _rows(self, key_cols: tuple[str, ...], values: pa.Table) -> pa.Table:
        """The table's current rows whose first key column is among ``values``'s."""

    @abc.abstractmethod
    def commit_apply(self, reduced: Reduced, key_cols: tuple[str, ...], stamp: Stamp) -> None:
        """Apply ``reduced`` and record ``stamp`` in one table commit."""

    @abc.abstractmethod
    def commit_append(self, rows: list[Row], stamp: Stamp) -> None:
        """Append ``rows`` and record ``stamp`` in one table commit."""

    @abc.abstractmethod
    def commit_reduced(
        self, reduced: columns.Reduced, key_cols: tuple[str, ...], stamp: Stamp
    ) -> None:
        """Apply a batch reduced in Arrow (:mod:`columns`) and record ``stamp`` in one
        table commit."""

    @abc.abstractmethod
    def commit_table(self, rows: pa.Table, stamp: Stamp) -> None:
        """Append ``rows`` (of the table's schema) and record ``stamp`` in one commit."""

    @abc.abstractmethod
    def maintain(self, action: str, retain_hours: float) -> str:
        """OPTIMIZE / VACUUM / EXPIRESNAPSHOTS: one line saying what was done."""

    # -- shared by the formats ----------------------------------------------------------
    def arrow(self, rows: list[Row]) -> pa.Table:
        return to_arrow(rows, self.schema, self.name)

    def filled(self, reduced: Reduced, key_cols: tuple[str, ...]) -> tuple[list[Row], list[Key]]:
        """The upserted rows (partial states completed from the table's current rows) and
        the deleted keys of ``reduced``."""
        bases = reduced.bases()
        current: dict[Key, Row] = {}
        if bases:
            probe = self.arrow([dict(zip(key_cols, k, strict=True)) for k in bases])
            found = self._rows(key_cols, probe.select([key_cols[0]]))
            for row in found.to_pylist():
                current[tuple(_text(row.get(c)) for c in key_cols)] = row
        upserts: list[Row] = []
        deletes: list[Key] = []
        for key, state in reduced.states.items():
            if state.row is None:
                deletes.append(key)
                continue
            row = state.row
            if not state.full and state.base is not None:
                base = current.get(tuple(_text(v) for v in state.base), {})
                row = {**{c: _text(v) for c, v in base.items()}, **row}
            upserts.append(row)
        return upserts, deletes

    def key_table(self, keys: list[Key], key_cols: tuple[str, ...]) -> pa.Table:
        return self.arrow([dict(zip(key_cols, k, strict=True)) for k in keys]).select(
            list(key_cols)
        )


def _text(v: object) -> object:
    """A value read back from a table as the trail would carry it (for matching keys)."""
    if v is None or isinstance(v, str):
        return v
    return str(v)


def is_in(table: pa.Table, column: str, values: pa.Array) -> pa.Table:
    return table.filter(pc.is_in(table[column], value_set=values))


def with_op(table: pa.Table, op: str) -> pa.Table:
    return table.append_column(OP_COLUMN, pa.array([op] * table.num_rows, pa.string()))
