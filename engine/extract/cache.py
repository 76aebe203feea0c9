"""The transaction cache: every open transaction, within a memory budget.

Every transaction is cached from its first change, even when none of its rows belong to a
captured table (a later change might; seed 000/002). A commit hands back the transaction's
rows in the order they were made, minus those undone by a rollback to savepoint; a rollback
discards it. When the rows held in memory exceed the budget (``CACHEMGR CACHESIZE``), the
largest transaction's rows are paged out to a file in ``dirtmp/`` and read back at commit,
so a transaction larger than memory still commits whole. A page-out file is a sequence of
data-only frames (:mod:`engine.home.datafile`: length, SHA-256) of row batches in the layout of
:mod:`engine.extract.lcrcodec`; a damaged one is a :class:`CacheError`, never code run.

Driver-side only. The clock is the redo's: ages are measured against the time of the last
record read, which is what WARNLONGTRANS and Bounded Recovery use.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from engine.changes import Entry, Fragment, Kind, Lcr, Position
from engine.extract.lcrcodec import decode_lcrs, encode_lcrs
from engine.extract.tasks.assemble import surviving
from engine.home import datafile as df

DEFAULT_BUDGET = 256 << 20
SPILL_MAGIC = b"GGSCI-TXN-PAGE\x01"
SPILL_BATCH = 4096  # rows per frame: the encoding of one page-out is never held whole


@dataclass
class Txn:
    """An open transaction: where and when it started, who runs it, its rows."""

    xid: str
    start: Position
    start_scn: int
    start_time_us: int
    user: str = ""
    name: str = ""
    rows: list[Entry] = field(default_factory=list)  # changes, and fragments of them
    weight: int = 0
    spilled: int = 0
    spill_path: Path | None = None
    undone: set[str] = field(default_factory=set)
    row_count: int = 0
    changes: int = 0  # rows held change by change (the others are in fragments)
    last_time_us: int = 0

    @property
    def captured_rows(self) -> int:
        return self.row_count - len(self.undone)


class CacheError(Exception):
    pass


class TransactionCache:
    def __init__(self, spill_dir: Path, budget: int = DEFAULT_BUDGET) -> None:
        self.spill_dir = spill_dir
        self.budget = budget
        self.txns: dict[str, Txn] = {}
        self.weight = 0
        self.spills = 0
        # Page files left by a run that was killed belong to no transaction of this cache
        # (it starts empty and is rebuilt from redo): a page-out must not append to them.
        for stale in spill_dir.glob("txn_*.spill") if spill_dir.is_dir() else ():
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()

    # -- events ---------------------------------------------------------------------
    def begin(self, lcr: Lcr) -> Txn:
        """Open ``lcr.xid`` if it is not open yet (any first change opens it)."""
        return self._open(lcr.xid, lcr.pos, lcr.scn, lcr.time_us)

    def _open(self, xid: str, pos: Position, scn: int, time_us: int) -> Txn:
        txn = self.txns.get(xid)
        if txn is None:
            txn = Txn(xid, pos, scn, time_us, last_time_us=time_us)
            self.txns[xid] = txn
        return txn

    def session(self, lcr: Lcr) -> None:
        txn = self.begin(lcr)
        txn.user, txn.name = lcr.user, lcr.txn_name

    def add(self, lcr: Lcr) -> None:
        self._hold(self.begin(lcr), lcr, 1, lcr.time_us)

    def add_fragment(self, f: Fragment) -> Txn:
        """A fragment (parallel assembly): its changes as one item, in change order."""
        txn = self._open(f.xid, f.pos, f.first_scn, f.first_time_us)
        if f.sessions:
            txn.user, txn.name = f.sessions[-1]
        if f.undone:
            txn.undone.update(f.undone)
        self._hold(txn, f, f.count, f.time_us)
        return txn

    def _hold(self, txn: Txn, entry: Entry, rows: int, time_us: int) -> None:
        txn.rows.append(entry)
        txn.row_count += rows
        if isinstance(entry, Lcr):
            txn.changes += 1
        txn.last_time_us = time_us
        w = entry.weight()
        txn.weight += w
        self.weight += w
        if self.weight > self.budget:
            self._page_out()

    def undo(self, lcr: Lcr) -> None:
        """A rollback to savepoint undid the change whose undo record is ``lcr.ref``."""
        txn = self.txns.get(lcr.xid)
        if txn is not None and lcr.ref:
            txn.undone.add(lcr.ref)

    def commit(self, xid: str) -> tuple[Txn, list[Lcr]] | None:
        """Close ``xid`` and return it with its surviving rows, in change order."""
        done = self.commit_stream(xid)
        if done is None:
            return None
        txn, rows = done
        return txn, list(rows)

    def commit_stream(self, xid: str) -> tuple[Txn, Iterator[Lcr]] | None:
        """Like :meth:`commit`, but the rows come one at a time, paged-out ones read back
        as they are needed: a transaction larger than memory is never held whole."""
        done = self.commit_entries(xid)
        if done is None:
            return None
        txn, entries = done
        return txn, surviving(entries, txn.undone)

    def commit_entries(self, xid: str) -> tuple[Txn, Iterator[Entry]] | None:
        """Close ``xid``: its entries (changes and fragments) in change order, paged-out
        ones read back as they are needed, rows undone by a rollback to savepoint still
        in them (``txn.undone`` names those)."""
        txn = self.txns.pop(xid, None)
        if txn is None:
            return None
        self.weight -= txn.weight
        txn.weight = 0

        def entries() -> Iterator[Entry]:
            try:
                yield from self._spilled_rows(txn)
                memory, txn.rows = txn.rows, []
                yield from memory
            finally:
                self._release(txn)

        return txn, entries()

    def hold(self, lcr: Lcr) -> None:
        """An open transaction's record, by its kind (BEGIN, SESSION, ROW, UNDO, ROLLBACK); a
        COMMIT is its reader's, each of which writes the transaction its own way."""
        _HOLD[lcr.kind](self, lcr)

    def rollback(self, xid: str) -> Txn | None:
        txn = self.txns.pop(xid, None)
        if txn is not None:
            self._release(txn)
        return txn

    def restore(self, txn: Txn, rows: list[Entry]) -> None:
        """Bounded Recovery: a transaction read back from its persisted-object file."""
        txn.rows = []
        txn.weight = 0
        txn.row_count = 0
        txn.changes = 0
        self.txns[txn.xid] = txn
        for r in rows:
            if isinstance(r, Fragment):
                self._hold(txn, r, r.count, r.time_us)
            else:
                self.add(r)

    def all_rows(self, txn: Txn) -> list[Entry]:
        """Every row ``txn`` holds, paged-out ones included, undone ones included."""
        return list(self._spilled_rows(txn)) + txn.rows

    # -- queries --------------------------------------------------------------------
    def oldest(self) -> Txn | None:
        """The open transaction that started first (the recovery checkpoint's position)."""
        return min(self.txns.values(), key=lambda t: t.start, default=None)

    def open_transactions(self) -> list[Txn]:
        return sorted(self.txns.values(), key=lambda t: t.start)

    def __len__(self) -> int:
        return len(self.txns)

    def __contains__(self, xid: object) -> bool:
        return xid in self.txns

    # -- paging ---------------------------------------------------------------------
    def _page_out(self) -> None:
        while self.weight > self.budget:
            victim = max(self.txns.values(), key=lambda t: t.weight, default=None)
            if victim is None or not victim.rows:
                return
            self.spill_dir.mkdir(parents=True, exist_ok=True)
            mode = "ab"
            if victim.spill_path is None:
                victim.spill_path = self.spill_dir / f"txn_{victim.xid.replace('.', '_')}.spill"
                mode = "wb"  # a file of the same name from before is not this transaction's
            rows = victim.rows
            try:
                with open(victim.spill_path, mode) as fh:
                    for i in range(0, len(rows), SPILL_BATCH):
                        fh.write(df.seal(SPILL_MAGIC, encode_lcrs(rows[i : i + SPILL_BATCH])))
            except OSError as exc:  # dirtmp full: the file, named (the Extract abends)
                raise OSError(exc.errno, exc.strerror, str(victim.spill_path)) from None
            victim.spilled += len(victim.rows)
            self.weight -= victim.weight
            victim.weight = 0
            victim.rows = []
            self.spills += 1

    def _spilled_rows(self, txn: Txn) -> Iterator[Entry]:
        if txn.spill_path is None:
            return
        with open(txn.spill_path, "rb") as fh:
            while True:
                try:
                    payload = df.read_frame(fh, SPILL_MAGIC)
                    if payload is None:
                        return
                    chunk = decode_lcrs(payload)
                except df.DataError as exc:
                    raise CacheError(f"page-out file {txn.spill_path.name}: {exc}") from exc
                yield from chunk

    def _release(self, txn: Txn) -> None:
        self.weight -= txn.weight
        if txn.spill_path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(txn.spill_path)


#: :meth:`TransactionCache.hold`'s dispatch by record kind.
_HOLD: dict[Kind, Callable[[TransactionCache, Lcr], object]] = {
    Kind.BEGIN: TransactionCache.begin,
    Kind.SESSION: TransactionCache.session,
    Kind.ROW: TransactionCache.add,
    Kind.UNDO: TransactionCache.undo,
    Kind.ROLLBACK: lambda cache, lcr: cache.rollback(lcr.xid),
}
