"""What a redo-mining task is given and what it hands back.

Built on the driver once per batch and broadcast to the tasks: the :class:`MinePlan` (the
tables by object number, as :class:`TableInfo`, with the selection's rules). Handed back, in
log order (:class:`Mined`): *events* (plain tuples, :data:`EVENT_FIELDS`), transactions
closed in the task (:class:`Closed`) and fragments of open ones
(:class:`~engine.changes.Fragment`). The miner that makes them is
:mod:`engine.extract.tasks.miner`; the closing of transactions :mod:`engine.extract.tasks.closing`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from engine.changes import Fragment
from engine.embedded.dictionary import Dictionary
from engine.expr.rowrule import Process, RowRule
from engine.extract.tasks.decode import BEFORES_NONE, Selection

#: An event: the fields of an :class:`~engine.changes.Lcr`, its position flattened.
EVENT_FIELDS: Final = (
    "kind", "xid", "thread", "offset", "end", "scn", "subscn", "time_us", "io_type", "table",
    "rowid", "columns", "before_columns", "ref", "user", "txn_name", "text", "record",
)  # fmt: skip
Event = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class TableInfo:
    """What the miner needs of one table, resolved on the driver."""

    qualified: str
    name: bytes
    dataobj: int
    types: tuple[str, ...]
    key: tuple[int, ...]
    captured: bool
    truncates: bool
    hooked: bool
    befores: int = BEFORES_NONE  # decode.BEFORES_*: GETUPDATEBEFORES, UPDATERECORDFORMAT
    full_deletes: bool = False  # NOCOMPRESSDELETES: a delete carries the whole before image
    # an attached database's table: its container (the C walk then skips another
    # container's object of this number, and walks strictly: engine/extract/oracle_source.py)
    con_id: int | None = None


@dataclass(frozen=True)
class MinePlan:
    """Built on the driver once per batch and broadcast to the tasks."""

    tables: dict[int, TableInfo]  # by object number and data object number
    compact: bool = True
    fine_xids: frozenset[str] = frozenset()  # never closed in a task (BR-restored ones)
    # only a transaction that ends at or below this SCN is closed in a task (None: any); one
    # ending above may be held for a later batch by the driver's thread merge (capture.py)
    horizon: int | None = None
    # TABLE row options by table (engine.extract.tasks.tablerules): applied where a transaction
    # is closed in the task, and in its fragments for tablerules.fragment_tables; other
    # rows of these tables reach the driver with columns
    rules: Mapping[str, RowRule] = field(default_factory=dict)
    process: Process | None = None
    # a closed transaction's records are sealed here (the trail's CHECKSUM, as the writer
    # seals them): a cost per byte taken off the driver, which the tasks share
    seal: bool = False


def mine_plan(
    dictionary: Dictionary,
    selection: Selection,
    *,
    hooked: frozenset[str] = frozenset(),
    keys: Mapping[str, tuple[int, ...]] | None = None,
    rules: Mapping[str, RowRule] | None = None,
    process: Process | None = None,
    compact: bool = True,
    fine_xids: frozenset[str] = frozenset(),
    seal: bool = False,
) -> MinePlan:
    """``keys``: the key of tables whose TABLE gives KEYCOLS (column indices); ``seal``:
    closed transactions' records sealed by the miner (:attr:`MinePlan.seal`)."""
    tables: dict[int, TableInfo] = {}
    for t in dictionary.tables.values():
        ident = (t.owner.upper(), t.name.upper())
        info = TableInfo(
            t.qualified,
            t.qualified.encode("utf-8"),
            t.dataobj,
            tuple(c.type for c in t.columns),
            (keys or {}).get(t.qualified) or tuple(t.column_index(k) for k in t.key_columns),
            selection.captured(t),
            ident in selection.truncates,
            t.qualified in hooked,
            selection.befores_of(t),
            selection.deletes_full(t),
        )
        tables[t.obj] = info
        tables[t.dataobj] = info
    return MinePlan(tables, compact, fine_xids, rules=dict(rules or {}), process=process, seal=seal)


@dataclass(frozen=True, slots=True)
class Closed:
    """A transaction that began and ended inside the range, assembled, at its 5.4."""

    xid: str
    thread: int
    sequence: int
    offset: int  # of the commit (or rollback) record
    end: int
    scn: int
    subscn: int
    time_us: int
    rollback: bool
    sessions: tuple[tuple[str, str], ...]  # (user, transaction name) of its 5.20s
    records: bytes  # the finished trail records, concatenated
    count: int
    by_op: tuple[tuple[str, int], ...]
    tables: tuple[str, ...]  # tables of its records, in order of first appearance
    lcrs: int  # the logical changes it stands for
    max_time_us: int
    max_scn: int
    table_ops: tuple[tuple[str, str, int], ...] = ()  # (table, io-type name, count): STATS
    sealed: bool = False  # records carry their checksum tokens (MinePlan.seal)


@dataclass(slots=True)
class Mined:
    """The output of one range: ``items`` are events and :class:`Closed`, in log order."""

    items: list[Event | Closed | Fragment] = field(default_factory=list)
    resume: int | None = None
    records: int = 0
    sequence: int = 0
    first_time_us: int = 0  # redo time of the first change (0: none)
    max_time_us: int = 0


Item = Event | Closed | Fragment
