"""Sessions and transactions of the embedded database: transaction control and locks.

A :class:`Session` runs DML for one user on one redo thread. Its open transaction
(:class:`Txn`) keeps undo entries (what to put back on rollback) and the rows it locks.
Changes go to SQLite at once (other sessions see them, as Oracle's blocks would hold them),
and the redo is written as each statement executes, so the log interleaves sessions exactly
as they ran. A row held by another open transaction is not waited for: the statement fails
with ``ORA-00054`` (:class:`~engine.embedded.errors.RowLockedError`). A failing statement is
rolled back on its own (statement-level atomicity), its compensation redo included.

The database (:mod:`engine.embedded.database`) provides SCNs, transaction ids, row slots,
the clock and the log writers through the small protocol
:class:`~engine.embedded.state.Engine`. The DML
statements and the redo they write are in :mod:`engine.embedded.dml`; rollback and its
compensation redo in :mod:`engine.embedded.undo`; row helpers in :mod:`engine.embedded.rows`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from engine.embedded import redogen as rg
from engine.embedded.dictionary import TableDef
from engine.embedded.errors import RowLockedError, SqlError
from engine.embedded.rows import Row, index_cols, rowid_text
from engine.embedded.state import Engine, Txn, UndoEntry
from engine.embedded.undo import apply_undo, undo_to
from engine.redo.codecs import encode_value
from engine.redo.model import ChangeVector

__all__ = ["Engine", "Session", "Txn", "UndoEntry"]


@dataclass
class Session:
    """One session: a name, a redo thread, Oracle session identity and maybe a transaction."""

    name: str
    thread: int
    sid: int
    serial: int
    username: str
    audit: int
    txn: Txn | None = None
    txn_name: str = ""
    pending_savepoints: dict[str, int] = field(default_factory=dict)

    # -- transaction control -------------------------------------------------------------

    def begin(self, db: Engine, scn: int) -> Txn:
        if self.txn is None:
            ids = rg.TxnIds(xid=db.new_xid(), undo_seq=(scn >> 4) & 0xFFFF)
            self.txn = Txn(ids, scn, db.now())
            self.txn.savepoints.update(self.pending_savepoints)
            self.pending_savepoints.clear()
        return self.txn

    def commit(self, db: Engine) -> int | None:
        """Commit; returns the commit SCN (None when there was nothing to commit)."""
        txn = self.txn
        if txn is None:
            self.pending_savepoints.clear()
            return None
        scn = db.next_scn()
        if txn.ids.started:
            db.emit(self.thread, scn, [rg.commit_cv(txn.ids, scn, rollback=False)])
            db.note_commit(txn.ids.blocks, scn)
        self._end(db, txn)
        return scn

    def rollback(self, db: Engine) -> None:
        txn = self.txn
        if txn is None:
            self.pending_savepoints.clear()
            return
        scn = db.next_scn()
        undo_to(self, db, txn, 0, scn)
        if txn.ids.started:
            db.emit(self.thread, scn, [rg.commit_cv(txn.ids, scn, rollback=True)])
        self._end(db, txn)

    def _end(self, db: Engine, txn: Txn) -> None:
        for kl in txn.keys:
            db.key_locks.pop(kl, None)
        for key in txn.locked:
            db.locks.pop(key, None)
        for obj in txn.direct_tables:
            db.table_locks.pop(obj, None)
        db.release_xid(txn.xid)
        self.txn = None
        self.txn_name = ""
        db.end_transaction(self.thread)

    def savepoint(self, name: str) -> None:
        if self.txn is None:
            self.pending_savepoints[name.upper()] = 0
        else:
            self.txn.savepoints[name.upper()] = len(self.txn.entries)

    def rollback_to(self, db: Engine, name: str) -> None:
        key = name.upper()
        if self.txn is None:
            if key not in self.pending_savepoints:
                raise SqlError(f"savepoint '{key}' never established in this session", "ORA-01086")
            return
        if key not in self.txn.savepoints:
            raise SqlError(f"savepoint '{key}' never established in this session", "ORA-01086")
        mark = self.txn.savepoints[key]
        undo_to(self, db, self.txn, mark, db.next_scn())
        self.txn.savepoints = {k: v for k, v in self.txn.savepoints.items() if v <= mark}

    def abandon(self, db: Engine) -> None:
        """Instance crash: put the rows back without writing any redo (orphaned txn)."""
        txn = self.txn
        if txn is None:
            return
        for entry in reversed(txn.entries):
            table = db.dictionary.tables[entry.table]
            apply_undo(db, table, entry)
        for kl in txn.keys:
            db.key_locks.pop(kl, None)
        for key in txn.locked:
            db.locks.pop(key, None)
        for obj in txn.direct_tables:
            db.table_locks.pop(obj, None)
        db.release_xid(txn.xid)
        self.txn = None

    # -- helpers -------------------------------------------------------------------------

    # -- helpers for the DML and undo modules --------------------

    def first_cvs(self, txn: Txn, scn: int) -> tuple[list[ChangeVector], list[ChangeVector]]:
        """(prefix, suffix) change vectors around a transaction's first change."""
        if txn.ids.started:
            return [], []
        pre = [rg.slot_alloc(txn.ids, scn)]
        return pre, []

    def session_cv(self, txn: Txn) -> list[ChangeVector]:
        if txn.info_written:
            return []
        txn.info_written = True
        return [rg.session_info(self.sid, self.serial, self.username, self.txn_name, self.audit)]

    def lock_rows(self, db: Engine, txn: Txn, table: TableDef, rids: Iterable[int]) -> None:
        owner = db.table_locks.get(table.obj)
        if owner is not None and owner != self.name:
            raise RowLockedError(
                f"resource busy: {table.qualified} is locked by a direct-path load "
                f"of session {owner}"
            )
        for rid in rids:
            holder = db.locks.get((table.obj, rid))
            if holder is not None and holder != self.name:
                raise RowLockedError(
                    f"resource busy: row {rowid_text(table, rid)} of {table.qualified} is "
                    f"locked by session {holder}"
                )
        for rid in rids:
            db.locks[(table.obj, rid)] = self.name
            txn.locked.add((table.obj, rid))

    def lock_keys(
        self,
        db: Engine,
        txn: Txn,
        table: TableDef,
        rows: Iterable[Row],
        only: set[int] | None = None,
    ) -> None:
        """Unique-key values a statement creates or removes are locked until the transaction
        ends, so another session cannot take a key this one may still give back (Oracle
        makes it wait on the index entry; we fail with ORA-00054)."""
        wanted = []
        for index in table.indexes:
            cols = index_cols(table, index)
            if only is not None and not set(cols) & only:
                continue
            for row in rows:
                key = tuple(encode_value(table.columns[i].type, row[i]) for i in cols)
                wanted.append((table.obj, index.name, key))
        for kl in wanted:
            holder = db.key_locks.get(kl)
            if holder is not None and holder != self.name:
                raise RowLockedError(
                    f"resource busy: a key of {table.qualified} ({kl[1]}) is held by "
                    f"session {holder}"
                )
        for kl in wanted:
            db.key_locks[kl] = self.name
            txn.keys.setdefault(kl, len(txn.entries))

    def check_direct(self, txn: Txn | None, table: TableDef) -> None:
        if txn is not None and table.obj in txn.direct_tables:
            raise SqlError(
                f"cannot read/modify {table.qualified} after modifying it in parallel "
                "(direct path) in this transaction",
                "ORA-12838",
            )
