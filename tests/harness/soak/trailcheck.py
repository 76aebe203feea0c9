"""A trail held to the source's committed transactions (:mod:`tests.harness.soak.expected`).

The trail's records are grouped into transactions strictly by their TransInd: a record
that begins a transaction while another is open, or continues one when none is, breaks a
boundary (``torn``), unless a RestartAbend marker closed the open one first (append-mode
recovery after a crash: ``abandoned``, which is allowed). Each whole transaction is named
by the TRANID and LOGCSN of its first record and compared with the source's transaction of
that id and commit SCN, change by change (table, operation, every column the record
carries, canonical values):

* ``lost``: source row changes that no trail transaction holds;
* ``dup``: row changes the trail holds more often than the source made them (a
  transaction written twice, a change twice, a change the source never committed);
* ``txns_lost`` / ``txns_dup``: the same counted in whole transactions;
* ``torn``: transactions that are not whole: boundaries broken, or records that differ
  from their source transaction's changes (a change missing, added, moved or altered);
* ``out_of_order``: transactions written after one that committed later;
* ``unknown``: trail transactions with no source transaction of their id and SCN;
* ``unreadable``: why the trail could not be read to its end (what follows is lost).

:class:`TrailTally` counts a trail's whole transactions and changes incrementally while
it is written (for telling effective kills): it rereads from the end of the last whole
transaction each time, so a trail cut back by recovery (TRUNCATE) is read correctly.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from engine.embedded.dictionary import TableDef
from engine.trail.errors import TrailError
from engine.trail.files import TrailName
from engine.trail.layout import IOType
from engine.trail.model import TrailPosition, TrailRecord
from engine.trail.reader import TrailReader
from tests.harness.soak.expected import Change, Image, Source, canon

OPS: dict[int, str] = {
    IOType.INSERT: "INSERT",
    IOType.UPDATE: "UPDATE",
    IOType.FIELDCOMP: "UPDATE",
    IOType.KEYFIELDCOMP: "UPDATE",
    IOType.UNIFIED_UPDATE: "UPDATE",
    IOType.UNIFIED_PK_UPDATE: "UPDATE",
    IOType.DELETE: "DELETE",
}


@dataclass(frozen=True)
class TrailTxn:
    """A whole transaction of the trail (TRANID and LOGCSN from its first record)."""

    xid: str | None
    csn: str | None
    records: tuple[TrailRecord, ...]


@dataclass
class Grouping:
    txns: list[TrailTxn] = field(default_factory=list)
    torn: int = 0
    abandoned: int = 0
    error: str = ""  # why reading stopped before the end of the trail


def group(records: Iterable[TrailRecord]) -> Grouping:
    """The trail's row records as whole transactions (see the module's docstring)."""
    out = Grouping()
    open_records: list[TrailRecord] = []
    for record in records:
        if record.io_type == IOType.METADATA:
            continue
        if record.io_type == IOType.RESTART_ABEND:
            out.abandoned += bool(open_records)
            open_records = []
            continue
        if record.begins_transaction == bool(open_records):
            out.torn += 1  # a begin inside a transaction, or a continuation outside one
            open_records = []
            if not record.begins_transaction:
                continue
        open_records.append(record)
        if record.ends_transaction:
            first = open_records[0]
            out.txns.append(TrailTxn(first.tranid, first.logcsn, tuple(open_records)))
            open_records = []
    out.torn += bool(open_records)  # the trail ends inside a transaction
    return out


def read_trail(trail: str | os.PathLike[str]) -> Grouping:
    """Every record of the trail ``trail`` (``dirdat/lt``), grouped; a record that cannot be
    read (corrupt, failing its checksum) ends the reading, with ``error`` saying why."""
    records: list[TrailRecord] = []
    error = ""
    with TrailReader(trail) as reader:
        try:
            records.extend(r for _, r in reader.records())
        except TrailError as exc:
            error = f"{type(exc).__name__}: {exc}"
    grouping = group(records)
    grouping.error = error
    return grouping


def change_of(record: TrailRecord, tables: Mapping[str, TableDef]) -> tuple[str, str, Image]:
    """``(table, operation, values)`` of a trail record, comparable with a source change."""
    op = OPS.get(record.io_type, record.op_name)
    table = tables.get(record.table)
    if table is None:
        return (record.table, op, tuple((str(i), v) for i, v in record.columns))
    cols = table.columns
    return (
        record.table,
        op,
        tuple(
            (cols[i].name.upper(), canon(cols[i].type, v)) if i < len(cols) else (str(i), v)
            for i, v in record.columns
        ),
    )


def _wanted(c: Change) -> tuple[str, str, Image]:
    return (c.table, c.op, c.values)


@dataclass(frozen=True)
class TrailVerdict:
    transactions: int = 0
    lost: int = 0
    dup: int = 0
    txns_lost: int = 0
    txns_dup: int = 0
    torn: int = 0
    out_of_order: int = 0
    unknown: int = 0
    abandoned: int = 0
    unreadable: str = ""

    @property
    def ok(self) -> bool:
        bad = (self.lost, self.dup, self.txns_lost, self.txns_dup, self.torn)
        return not any(bad) and not self.out_of_order and not self.unknown and not self.unreadable

    def lines(self, prefix: str) -> list[str]:
        """``prefix_name=value`` lines, every field."""
        return [f"{prefix}_{k}={v}" for k, v in self.__dict__.items()]


def compare(grouping: Grouping, source: Source) -> TrailVerdict:
    """The trail's transactions against the source's (see the module's docstring)."""
    index = {t.key: i for i, t in enumerate(source.txns)}
    seen: dict[int, list[list[tuple[str, str, Image]]]] = {}
    unknown: list[int] = []
    order: list[int] = []
    for t in grouping.txns:
        changes = [change_of(r, source.tables) for r in t.records]
        i = index.get((t.xid or "", t.csn or ""))
        if i is None:
            unknown.append(len(changes))
            continue
        if i not in seen:
            order.append(i)
        seen.setdefault(i, []).append(changes)
    lost = dup = txns_lost = txns_dup = 0
    torn = grouping.torn
    for i, txn in enumerate(source.txns):
        want = [_wanted(c) for c in txn.changes]
        copies = seen.get(i, [])
        txns_lost += not copies
        txns_dup += max(0, len(copies) - 1)
        torn += sum(c != want for c in copies)
        got = Counter(c for copy in copies for c in copy)
        expected = Counter(want)
        lost += sum((expected - got).values())
        dup += sum((got - expected).values())
    out_of_order = 0
    latest = -1
    for i in order:
        out_of_order += i < latest
        latest = max(latest, i)
    return TrailVerdict(
        transactions=len(grouping.txns),
        lost=lost,
        dup=dup + sum(unknown),
        txns_lost=txns_lost,
        txns_dup=txns_dup + len(unknown),
        torn=torn,
        out_of_order=out_of_order,
        unknown=len(unknown),
        abandoned=grouping.abandoned,
        unreadable=grouping.error,
    )


def check_trail(trail: str | os.PathLike[str], source: Source) -> TrailVerdict:
    return compare(read_trail(trail), source)


@dataclass(frozen=True)
class Tally:
    txns: int
    changes: int


class TrailTally:
    """Whole transactions and their row changes written to a trail so far."""

    def __init__(self, trail: str | os.PathLike[str]) -> None:
        self.trail = trail
        self.reader: TrailReader | None = None
        self.position: TrailPosition | None = None
        self.tally = Tally(0, 0)

    def poll(self) -> Tally:
        txns, changes, pending = self.tally.txns, self.tally.changes, 0
        if self.reader is None:
            if not TrailName.parse(self.trail).seqnos():
                return self.tally
            self.reader = TrailReader(self.trail)
            self.position = self.reader.position
        try:
            for entry, record in self.reader.records():
                if record.io_type == IOType.RESTART_ABEND:
                    pending = 0
                    continue
                pending = 1 if record.begins_transaction else pending + 1
                if record.ends_transaction:
                    txns, changes, pending = txns + 1, changes + pending, 0
                    self.position = entry.end
        except TrailError:
            pass  # no progress beyond it: the checks at the end say what is wrong
        finally:
            self.reader.close()
            assert self.position is not None
            self.reader.position = self.position  # a partial transaction is read again
        self.tally = Tally(txns, changes)
        return self.tally
