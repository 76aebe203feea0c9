"""Sessions and transactions of the embedded database, and the redo each DML writes.

A :class:`Session` runs DML for one user on one redo thread. Its open transaction
(:class:`Txn`) keeps undo entries (what to put back on rollback) and the rows it locks.
Changes go to SQLite at once (other sessions see them, as Oracle's blocks would hold them),
and the redo is written as each statement executes, so the log interleaves sessions exactly
as they ran. A row held by another open transaction is not waited for: the statement fails
with ``ORA-00054`` (:class:`~engine.source.errors.RowLockedError`). A failing statement is
rolled back on its own (statement-level atomicity), its compensation redo included.

The database (:mod:`engine.source.database`) provides SCNs, transaction ids, row slots,
the clock and the log writers through the small :class:`Engine` protocol below.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, TypeVar

from engine.source import redogen as rg
from engine.source.codecs import Value, encode_value
from engine.source.dictionary import Dictionary, IndexDef, TableDef
from engine.source.errors import ConstraintError, RowLockedError, SourceError, SqlError
from engine.source.ids import Uba, Xid, make_dba
from engine.source.redo import ChangeVector, Column, DirectLoad, IndexOp, Ktb, UndoApplied
from engine.source.values import to_python, to_sqlite

Row = tuple[Value, ...]
_T = TypeVar("_T")


class Engine(Protocol):
    """What a session needs from its database."""

    conn: sqlite3.Connection
    dictionary: Dictionary
    locks: dict[tuple[int, int], str]
    table_locks: dict[int, str]
    key_locks: dict[tuple[int, str, tuple[bytes | None, ...]], str]

    def next_scn(self) -> int: ...

    def note_commit(self, blocks: set[int], scn: int) -> None: ...

    def now(self) -> datetime: ...

    def new_xid(self) -> Xid: ...

    def release_xid(self, xid: Xid) -> None: ...

    def allocate(self, table: TableDef, n: int, fresh_block: bool = False) -> list[int]: ...

    def emit(self, thread: int, scn: int, changes: Sequence[ChangeVector]) -> None: ...

    def end_transaction(self, thread: int) -> None: ...


def rid_block(rid: int) -> int:
    return rid >> 16


def rid_slot(rid: int) -> int:
    return rid & 0xFFFF


@dataclass
class UndoEntry:
    """How to undo one change: ``ins``/``load`` (rows ``rids`` were added), ``del`` (row
    ``rids[0]`` had values ``before``), ``upd`` (columns ``cols`` had values ``before``)."""

    kind: str
    table: str
    rids: tuple[int, ...]
    uba: Uba
    before: Row = ()
    cols: tuple[int, ...] = ()


@dataclass
class Txn:
    ids: rg.TxnIds
    start_scn: int
    start_time: datetime
    entries: list[UndoEntry] = field(default_factory=list)
    savepoints: dict[str, int] = field(default_factory=dict)
    locked: set[tuple[int, int]] = field(default_factory=set)
    # unique-key locks, each with the number of undo entries when it was first taken
    keys: dict[tuple[int, str, tuple[bytes | None, ...]], int] = field(default_factory=dict)
    direct_tables: set[int] = field(default_factory=set)
    info_written: bool = False

    @property
    def xid(self) -> Xid:
        return self.ids.xid


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

    def _txn(self, db: Engine, scn: int) -> Txn:
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
        self._undo_to(db, txn, 0, scn)
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
        self._undo_to(db, self.txn, mark, db.next_scn())
        self.txn.savepoints = {k: v for k, v in self.txn.savepoints.items() if v <= mark}

    def abandon(self, db: Engine) -> None:
        """Instance crash: put the rows back without writing any redo (orphaned txn)."""
        txn = self.txn
        if txn is None:
            return
        for entry in reversed(txn.entries):
            table = db.dictionary.tables[entry.table]
            self._apply_undo(db, table, entry)
        for kl in txn.keys:
            db.key_locks.pop(kl, None)
        for key in txn.locked:
            db.locks.pop(key, None)
        for obj in txn.direct_tables:
            db.table_locks.pop(obj, None)
        db.release_xid(txn.xid)
        self.txn = None

    # -- helpers -------------------------------------------------------------------------

    def _first_cvs(self, txn: Txn, scn: int) -> tuple[list[ChangeVector], list[ChangeVector]]:
        """(prefix, suffix) change vectors around a transaction's first change."""
        if txn.ids.started:
            return [], []
        pre = [rg.slot_alloc(txn.ids, scn)]
        return pre, []

    def _session_cv(self, txn: Txn) -> list[ChangeVector]:
        if txn.info_written:
            return []
        txn.info_written = True
        return [rg.session_info(self.sid, self.serial, self.username, self.txn_name, self.audit)]

    def _lock(self, db: Engine, txn: Txn, table: TableDef, rids: Iterable[int]) -> None:
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
                    f"resource busy: row {self._rowid(table, rid)} of {table.qualified} is "
                    f"locked by session {holder}"
                )
        for rid in rids:
            db.locks[(table.obj, rid)] = self.name
            txn.locked.add((table.obj, rid))

    def _lock_keys(
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
            cols = self._index_cols(table, index)
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

    @staticmethod
    def _rowid(table: TableDef, rid: int) -> str:
        from engine.source.ids import RowId

        return str(RowId(table.dataobj, table.file_no, rid_block(rid), rid_slot(rid)))

    def _check_direct(self, txn: Txn | None, table: TableDef) -> None:
        if txn is not None and table.obj in txn.direct_tables:
            raise SqlError(
                f"cannot read/modify {table.qualified} after modifying it in parallel "
                "(direct path) in this transaction",
                "ORA-12838",
            )

    @staticmethod
    def _encode(table: TableDef, row: Row) -> rg.Row:
        return tuple(encode_value(c.type, v) for c, v in zip(table.columns, row, strict=True))

    @staticmethod
    def _supp(table: TableDef, enc: rg.Row) -> tuple[Column, ...]:
        return tuple(
            Column(table.column_index(k), enc[table.column_index(k)]) for k in table.key_columns
        )

    @staticmethod
    def _index_cols(table: TableDef, index: IndexDef) -> tuple[int, ...]:
        return tuple(table.column_index(c) for c in index.columns)

    # -- DML -----------------------------------------------------------------------------

    def insert(self, db: Engine, table: TableDef, rows: Sequence[Row], *, array: bool) -> int:
        """Conventional insert: one row = 11.2; ``array`` (INSERT ... SELECT) = 11.11 per block."""
        if not rows:
            return 0
        self._check_direct(self.txn, table)
        scn = db.next_scn()
        txn = self._txn(db, scn)
        mark = len(txn.entries)
        try:
            self._lock_keys(db, txn, table, rows)
            rids = db.allocate(table, len(rows))
            self._store(db, table, rids, rows)
            self._lock(db, txn, table, rids)
            encoded = [self._encode(table, r) for r in rows]
            if array and len(rows) > 1:
                self._redo_array(db, txn, table, scn, rids, encoded)
            else:
                for rid, enc in zip(rids, encoded, strict=True):
                    self._redo_insert(db, txn, table, scn, rid, enc)
        except (SourceError, sqlite3.Error) as exc:
            self._statement_failed(db, txn, mark, exc)
        return len(rows)

    def _store(self, db: Engine, table: TableDef, rids: list[int], rows: Sequence[Row]) -> None:
        cols = table.columns
        names = ", ".join(f'"{c.name}"' for c in cols)
        marks = ", ".join("?" * (len(cols) + 1))
        data = [
            (rid, *(to_sqlite(c, v) for c, v in zip(cols, row, strict=True)))
            for rid, row in zip(rids, rows, strict=True)
        ]
        try:
            db.conn.executemany(
                f'INSERT INTO "{table.sqlite_name}" ("_rid", {names}) VALUES ({marks})', data
            )
        except sqlite3.IntegrityError as exc:
            raise constraint_error(table, exc) from exc

    def _redo_insert(
        self, db: Engine, txn: Txn, table: TableDef, scn: int, rid: int, enc: rg.Row
    ) -> None:
        dba = make_dba(table.file_no, rid_block(rid))
        slot = rid_slot(rid)
        pre, _ = self._first_cvs(txn, scn)
        undo_kdo = rg.kdo("DRP", rg.UNDO_KTB, table, dba, slot=slot)
        undo_cv, uba = rg.row_undo(txn.ids, table, scn, undo_kdo, self._supp(table, enc))
        txn.ids.started = True
        ktb, _ = rg.ktb_for(txn.ids, dba, uba)
        cols = rg.columns_of(enc)
        redo = rg.kdo(
            "IRP",
            ktb,
            table,
            dba,
            slot=slot,
            size=rg.row_size(cols_data(cols)),
            lb=2,
            cc=len(cols),
            columns=cols,
        )
        cvs = [
            *pre,
            undo_cv,
            rg.row_redo(txn.ids, table, scn, dba, 2, redo),
            *self._session_cv(txn),
        ]
        db.emit(self.thread, scn, cvs)
        txn.entries.append(UndoEntry("ins", table.qualified, (rid,), uba))
        for index in table.indexes:
            key = rg.index_key(self._index_cols(table, index), enc)
            db.emit(
                self.thread,
                scn,
                rg.index_change(
                    txn.ids, table, index, scn, True, [(key, rg.keydata(dba, slot), slot)]
                ),
            )

    def _redo_array(
        self,
        db: Engine,
        txn: Txn,
        table: TableDef,
        scn: int,
        rids: list[int],
        encoded: list[rg.Row],
    ) -> None:
        for block, group in _by_block(rids, encoded):
            dba = make_dba(table.file_no, block)
            slots = tuple(rid_slot(r) for r, _ in group)
            pre, _ = self._first_cvs(txn, scn)
            undo_kdo = rg.kdo("QMD", rg.UNDO_KTB, table, dba, slots=slots)
            undo_cv, uba = rg.row_undo(txn.ids, table, scn, undo_kdo, ())
            txn.ids.started = True
            ktb, _ = rg.ktb_for(txn.ids, dba, uba)
            rows = rg.rows_image([(rid_slot(r), e) for r, e in group])
            redo = rg.kdo("QMI", ktb, table, dba, lock=1, rows=rows)
            cvs = [
                *pre,
                undo_cv,
                rg.row_redo(txn.ids, table, scn, dba, 11, redo),
                *self._session_cv(txn),
            ]
            db.emit(self.thread, scn, cvs)
            txn.entries.append(UndoEntry("ins", table.qualified, tuple(r for r, _ in group), uba))
            self._index_array(db, txn, table, scn, dba, group)

    def _index_array(
        self,
        db: Engine,
        txn: Txn,
        table: TableDef,
        scn: int,
        dba: int,
        group: list[tuple[int, rg.Row]],
    ) -> None:
        for index in table.indexes:
            cols = self._index_cols(table, index)
            keys = sorted(
                (rg.index_key(cols, e), rg.keydata(dba, rid_slot(r)), rid_slot(r)) for r, e in group
            )
            db.emit(self.thread, scn, rg.index_change(txn.ids, table, index, scn, True, keys))

    def direct_insert(self, db: Engine, table: TableDef, rows: Sequence[Row]) -> int:
        """INSERT /*+ APPEND */: new blocks above the high-water mark, 19.1 per block."""
        if not rows:
            return 0
        self._check_direct(self.txn, table)
        scn = db.next_scn()
        txn = self._txn(db, scn)
        mark = len(txn.entries)
        try:
            self._lock(db, txn, table, ())
            holders = {h for (obj, _), h in db.locks.items() if obj == table.obj}
            if holders - {self.name}:
                raise RowLockedError(
                    f"resource busy: {table.qualified} has rows locked by another session"
                )
            self._lock_keys(db, txn, table, rows)
            rids = db.allocate(table, len(rows), fresh_block=True)
            self._store(db, table, rids, rows)
            db.table_locks[table.obj] = self.name
            txn.direct_tables.add(table.obj)
            encoded = [self._encode(table, r) for r in rows]
            pre, _ = self._first_cvs(txn, scn)
            begin = not txn.ids.started
            uba = txn.ids.next_uba()
            from engine.source.redo import Undo

            undo = Undo(
                xid=txn.xid,
                opc=(5, 7),
                objn=0,
                objd=0,
                tsn=0,
                slt=txn.xid.slot,
                flg=0x10,
                seq=uba.seq,
                rec=uba.rec,
                begin=begin,
                logon_user=txn.ids.logon_user if begin else 0,
            )
            txn.ids.started = True
            undo_cv = ChangeVector(
                5,
                1,
                undo,
                typ=0,
                cls=txn.ids.header_cls + 1,
                afn=3,
                dba=txn.ids.undo_dba,
                scn=scn,
                seq=2 if begin else 1,
            )
            db.emit(self.thread, scn, [*pre, undo_cv, *self._session_cv(txn)])
            for block, group in _by_block(rids, encoded):
                dba = make_dba(table.file_no, block)
                body = DirectLoad(
                    xid=txn.xid,
                    seg_obj=table.dataobj,
                    csc=scn,
                    bdba=dba,
                    rows=rg.rows_image([(rid_slot(r), e) for r, e in group]),
                )
                db.emit(
                    self.thread,
                    scn,
                    [
                        ChangeVector(24, 6, None, marker=True),
                        ChangeVector(
                            19,
                            1,
                            body,
                            typ=1,
                            cls=1,
                            afn=table.file_no,
                            dba=dba,
                            obj=table.dataobj,
                            scn=scn,
                        ),
                    ],
                )
                self._index_array(db, txn, table, scn, dba, group)
            txn.entries.append(UndoEntry("load", table.qualified, tuple(rids), uba))
        except (SourceError, sqlite3.Error) as exc:
            self._statement_failed(db, txn, mark, exc)
        return len(rows)

    def update(
        self,
        db: Engine,
        table: TableDef,
        set_cols: list[int],
        set_sql: list[str],
        where_sql: str,
        params: Sequence[object] = (),
    ) -> int:
        self._check_direct(self.txn, table)
        names = ", ".join(f'"{c.name}"' for c in table.columns)
        exprs = "".join(f", {e}" for e in set_sql)
        sql = f'SELECT "_rid", {names}{exprs} FROM "{table.sqlite_name}"{where_sql} ORDER BY "_rid"'
        try:
            found = db.conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise SqlError(f"cannot evaluate statement: {exc}") from exc
        if not found:
            return 0
        scn = db.next_scn()
        txn = self._txn(db, scn)
        mark = len(txn.entries)
        ncol = len(table.columns)
        try:
            self._lock(db, txn, table, [r[0] for r in found])
            if table.indexes:
                images: list[Row] = []
                for r in found:
                    old_img = [
                        to_python(c, v) for c, v in zip(table.columns, r[1 : 1 + ncol], strict=True)
                    ]
                    images.append(tuple(old_img))
                    for i, v in zip(set_cols, r[1 + ncol :], strict=True):
                        old_img[i] = to_python(table.columns[i], v)
                    images.append(tuple(old_img))
                self._lock_keys(db, txn, table, images, set(set_cols))
            assign = ", ".join(f'"{table.columns[i].name}" = ?' for i in set_cols)
            for r in found:
                rid = r[0]
                old = tuple(
                    to_python(c, v) for c, v in zip(table.columns, r[1 : 1 + ncol], strict=True)
                )
                new_vals = [
                    to_python(table.columns[i], v)
                    for i, v in zip(set_cols, r[1 + ncol :], strict=True)
                ]
                for i, v in zip(set_cols, new_vals, strict=True):
                    if v is None and not table.columns[i].nullable:
                        raise ConstraintError(
                            f'cannot update ("{table.owner}"."{table.name}".'
                            f'"{table.columns[i].name}") to NULL',
                            "ORA-01407",
                        )
                try:
                    db.conn.execute(
                        f'UPDATE "{table.sqlite_name}" SET {assign} WHERE "_rid" = ?',
                        [
                            *(
                                to_sqlite(table.columns[i], v)
                                for i, v in zip(set_cols, new_vals, strict=True)
                            ),
                            rid,
                        ],
                    )
                except sqlite3.IntegrityError as exc:
                    raise constraint_error(table, exc) from exc
                new = list(old)
                for i, v in zip(set_cols, new_vals, strict=True):
                    new[i] = v
                self._redo_update(db, txn, table, scn, rid, old, tuple(new), set_cols)
        except (SourceError, sqlite3.Error) as exc:
            self._statement_failed(db, txn, mark, exc)
        return len(found)

    def _redo_update(
        self,
        db: Engine,
        txn: Txn,
        table: TableDef,
        scn: int,
        rid: int,
        old: Row,
        new: Row,
        set_cols: list[int],
    ) -> None:
        dba = make_dba(table.file_no, rid_block(rid))
        slot = rid_slot(rid)
        old_enc = self._encode(table, old)
        new_enc = self._encode(table, new)
        pre, _ = self._first_cvs(txn, scn)
        undo_kdo = rg.kdo(
            "URP",
            rg.UNDO_KTB,
            table,
            dba,
            slot=slot,
            lock=0,
            cc=len(table.columns),
            nnew=len(set_cols),
            columns=tuple(Column(i, old_enc[i]) for i in set_cols),
        )
        undo_cv, uba = rg.row_undo(txn.ids, table, scn, undo_kdo, self._supp(table, old_enc))
        txn.ids.started = True
        ktb, _ = rg.ktb_for(txn.ids, dba, uba)
        redo = rg.kdo(
            "URP",
            ktb,
            table,
            dba,
            slot=slot,
            lock=1,
            cc=len(table.columns),
            nnew=len(set_cols),
            columns=tuple(Column(i, new_enc[i]) for i in set_cols),
        )
        db.emit(
            self.thread,
            scn,
            [*pre, undo_cv, rg.row_redo(txn.ids, table, scn, dba, 5, redo), *self._session_cv(txn)],
        )
        txn.entries.append(
            UndoEntry(
                "upd",
                table.qualified,
                (rid,),
                uba,
                tuple(old[i] for i in set_cols),
                tuple(set_cols),
            )
        )
        for index in table.indexes:
            cols = self._index_cols(table, index)
            if not set(cols) & set(set_cols):
                continue
            old_key, new_key = rg.index_key(cols, old_enc), rg.index_key(cols, new_enc)
            if old_key == new_key:
                continue
            kd = rg.keydata(dba, slot)
            db.emit(
                self.thread,
                scn,
                rg.index_change(txn.ids, table, index, scn, False, [(old_key, kd, slot)]),
            )
            db.emit(
                self.thread,
                scn,
                rg.index_change(txn.ids, table, index, scn, True, [(new_key, kd, slot)]),
            )

    def delete(
        self, db: Engine, table: TableDef, where_sql: str, params: Sequence[object] = ()
    ) -> int:
        self._check_direct(self.txn, table)
        names = ", ".join(f'"{c.name}"' for c in table.columns)
        try:
            found = db.conn.execute(
                f'SELECT "_rid", {names} FROM "{table.sqlite_name}"{where_sql} ORDER BY "_rid"',
                params,
            ).fetchall()
        except sqlite3.Error as exc:
            raise SqlError(f"cannot evaluate statement: {exc}") from exc
        if not found:
            return 0
        scn = db.next_scn()
        txn = self._txn(db, scn)
        mark = len(txn.entries)
        try:
            self._lock(db, txn, table, [r[0] for r in found])
            if table.indexes:
                self._lock_keys(
                    db,
                    txn,
                    table,
                    [
                        tuple(to_python(c, v) for c, v in zip(table.columns, r[1:], strict=True))
                        for r in found
                    ],
                )
            for r in found:
                rid = r[0]
                old = tuple(to_python(c, v) for c, v in zip(table.columns, r[1:], strict=True))
                db.conn.execute(f'DELETE FROM "{table.sqlite_name}" WHERE "_rid" = ?', (rid,))
                self._redo_delete(db, txn, table, scn, rid, old)
        except (SourceError, sqlite3.Error) as exc:
            self._statement_failed(db, txn, mark, exc)
        return len(found)

    def _redo_delete(
        self, db: Engine, txn: Txn, table: TableDef, scn: int, rid: int, old: Row
    ) -> None:
        dba = make_dba(table.file_no, rid_block(rid))
        slot = rid_slot(rid)
        enc = self._encode(table, old)
        cols = rg.columns_of(enc)
        pre, _ = self._first_cvs(txn, scn)
        undo_kdo = rg.kdo(
            "IRP",
            rg.UNDO_KTB,
            table,
            dba,
            slot=slot,
            size=rg.row_size(cols_data(cols)),
            lb=0,
            cc=len(cols),
            columns=cols,
        )
        undo_cv, uba = rg.row_undo(txn.ids, table, scn, undo_kdo, self._supp(table, enc))
        txn.ids.started = True
        ktb, _ = rg.ktb_for(txn.ids, dba, uba)
        redo = rg.kdo("DRP", ktb, table, dba, slot=slot)
        db.emit(
            self.thread,
            scn,
            [*pre, undo_cv, rg.row_redo(txn.ids, table, scn, dba, 3, redo), *self._session_cv(txn)],
        )
        txn.entries.append(UndoEntry("del", table.qualified, (rid,), uba, old))
        for index in table.indexes:
            key = rg.index_key(self._index_cols(table, index), enc)
            db.emit(
                self.thread,
                scn,
                rg.index_change(
                    txn.ids, table, index, scn, False, [(key, rg.keydata(dba, slot), slot)]
                ),
            )

    # -- rollback ------------------------------------------------------------------------

    def _statement_failed(self, db: Engine, txn: Txn, mark: int, exc: Exception) -> None:
        self._undo_to(db, txn, mark, db.next_scn())
        if isinstance(exc, SourceError):
            raise exc
        raise SqlError(f"statement failed: {exc}") from exc

    def _undo_to(self, db: Engine, txn: Txn, mark: int, scn: int) -> None:
        """Undo entries past ``mark`` newest first, writing compensation redo."""
        while len(txn.entries) > mark:
            entry = txn.entries.pop()
            table = db.dictionary.tables[entry.table]
            before_rows = (
                self._rows_of(db, table, entry.rids) if entry.kind in ("ins", "load") else {}
            )
            self._apply_undo(db, table, entry)
            self._compensate(db, txn, table, scn, entry, before_rows)
        for kl, taken in list(txn.keys.items()):
            if taken >= mark:
                del txn.keys[kl]
                db.key_locks.pop(kl, None)
        keep = {(db.dictionary.tables[e.table].obj, rid) for e in txn.entries for rid in e.rids}
        for key in list(txn.locked):
            if key not in keep:
                txn.locked.discard(key)
                db.locks.pop(key, None)

    @staticmethod
    def _rows_of(db: Engine, table: TableDef, rids: tuple[int, ...]) -> dict[int, Row]:
        names = ", ".join(f'"{c.name}"' for c in table.columns)
        out: dict[int, Row] = {}
        for rid in rids:
            r = db.conn.execute(
                f'SELECT {names} FROM "{table.sqlite_name}" WHERE "_rid" = ?', (rid,)
            ).fetchone()
            if r is not None:
                out[rid] = tuple(to_python(c, v) for c, v in zip(table.columns, r, strict=True))
        return out

    def _apply_undo(self, db: Engine, table: TableDef, entry: UndoEntry) -> None:
        name = table.sqlite_name
        if entry.kind in ("ins", "load"):
            db.conn.executemany(
                f'DELETE FROM "{name}" WHERE "_rid" = ?', [(r,) for r in entry.rids]
            )
        elif entry.kind == "del":
            self._store(db, table, list(entry.rids), [entry.before])
        else:
            assign = ", ".join(f'"{table.columns[i].name}" = ?' for i in entry.cols)
            db.conn.execute(
                f'UPDATE "{name}" SET {assign} WHERE "_rid" = ?',
                [
                    *(
                        to_sqlite(table.columns[i], v)
                        for i, v in zip(entry.cols, entry.before, strict=True)
                    ),
                    entry.rids[0],
                ],
            )

    def _compensate(
        self,
        db: Engine,
        txn: Txn,
        table: TableDef,
        scn: int,
        entry: UndoEntry,
        removed: dict[int, Row],
    ) -> None:
        """Redo of applying one undo entry: ``5.6`` then the inverse row (and index) ops."""
        marker = ChangeVector(
            5,
            6,
            UndoApplied(txn.xid, entry.uba),
            typ=0,
            cls=txn.ids.header_cls + 1,
            afn=3,
            dba=entry.uba.dba,
            scn=scn,
        )
        ktb = Ktb(op=0x02, kind="C", uba=entry.uba)
        if entry.kind in ("ins", "load"):
            for block, group in _by_block(
                list(entry.rids), [removed.get(r, ()) for r in entry.rids]
            ):
                dba = make_dba(table.file_no, block)
                slots = tuple(rid_slot(r) for r, _ in group)
                if len(slots) == 1:
                    body = rg.kdo("DRP", ktb, table, dba, slot=slots[0])
                    cv = ChangeVector(
                        11, 3, body, afn=table.file_no, dba=dba, obj=table.dataobj, scn=scn
                    )
                else:
                    body = rg.kdo("QMD", ktb, table, dba, slots=slots)
                    cv = ChangeVector(
                        11, 12, body, afn=table.file_no, dba=dba, obj=table.dataobj, scn=scn
                    )
                idx = [
                    self._index_cv(table, index, scn, False, dba, group, ktb)
                    for index in table.indexes
                ]
                db.emit(self.thread, scn, [marker, cv, *[c for c in idx if c is not None]])
            return
        rid = entry.rids[0]
        dba = make_dba(table.file_no, rid_block(rid))
        slot = rid_slot(rid)
        if entry.kind == "del":
            enc = self._encode(table, entry.before)
            cols = rg.columns_of(enc)
            body = rg.kdo(
                "IRP",
                ktb,
                table,
                dba,
                slot=slot,
                size=rg.row_size(cols_data(cols)),
                lb=0,
                cc=len(cols),
                columns=cols,
            )
            idx = [
                self._index_cv(table, index, scn, True, dba, [(rid, entry.before)], ktb)
                for index in table.indexes
            ]
            db.emit(
                self.thread,
                scn,
                [
                    marker,
                    ChangeVector(
                        11, 2, body, afn=table.file_no, dba=dba, obj=table.dataobj, scn=scn
                    ),
                    *[c for c in idx if c is not None],
                ],
            )
            return
        enc_cols = tuple(
            Column(i, encode_value(table.columns[i].type, v))
            for i, v in zip(entry.cols, entry.before, strict=True)
        )
        body = rg.kdo(
            "URP",
            ktb,
            table,
            dba,
            slot=slot,
            lock=0,
            cc=len(table.columns),
            nnew=len(enc_cols),
            columns=enc_cols,
        )
        db.emit(
            self.thread,
            scn,
            [
                marker,
                ChangeVector(11, 5, body, afn=table.file_no, dba=dba, obj=table.dataobj, scn=scn),
            ],
        )

    def _index_cv(
        self,
        table: TableDef,
        index: IndexDef,
        scn: int,
        insert: bool,
        dba: int,
        group: Sequence[tuple[int, Row]],
        ktb: Ktb,
    ) -> ChangeVector | None:
        cols = self._index_cols(table, index)
        keys = []
        for rid, row in group:
            if not row:
                continue
            enc = self._encode(table, row)
            keys.append((rg.index_key(cols, enc), rg.keydata(dba, rid_slot(rid)), rid_slot(rid)))
        if not keys:
            return None
        array = len(keys) > 1
        body = IndexOp(
            action="insert leaf row" if insert else "delete leaf row",
            ktb=ktb,
            array=array,
            itl=2,
            sno=keys[0][2],
            row_size=sum(len(k) + len(d) + 4 for k, d, _ in keys),
            keys=b"".join(k for k, _, _ in keys) if insert else b"",
            key_sizes=tuple(len(k) + len(d) for k, d, _ in keys) if insert and array else (),
            slots=tuple(s for _, _, s in keys) if array else (),
            keydata=b"".join(d for _, d, _ in keys) if insert else b"",
        )
        leaf = make_dba(table.file_no, index.block)
        return ChangeVector(
            10, 2 if insert else 4, body, afn=table.file_no, dba=leaf, obj=index.dataobj, scn=scn
        )


def cols_data(cols: tuple[Column, ...]) -> rg.Row:
    return tuple(c.data for c in cols)


def _by_block(rids: list[int], rows: Sequence[_T]) -> list[tuple[int, list[tuple[int, _T]]]]:
    groups: dict[int, list[tuple[int, _T]]] = {}
    for rid, row in zip(rids, rows, strict=True):
        groups.setdefault(rid_block(rid), []).append((rid, row))
    return list(groups.items())


def constraint_error(table: TableDef, exc: sqlite3.IntegrityError) -> SourceError:
    msg = str(exc)
    if "NOT NULL" in msg:
        col = msg.rsplit(".", 1)[-1]
        return ConstraintError(
            f'cannot insert NULL into ("{table.owner}"."{table.name}"."{col}")', "ORA-01400"
        )
    if "UNIQUE" in msg:
        cols = tuple(c.split(".", 1)[-1].strip() for c in msg.split(":", 1)[-1].split(","))
        name = next((i.name for i in table.indexes if i.columns == cols), "?")
        return ConstraintError(f"unique constraint ({table.owner}.{name}) violated", "ORA-00001")
    return SqlError(f"constraint violated: {msg}")
