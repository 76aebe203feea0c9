"""The workload's fast path: single-row DML whose redo is packed straight to bytes.

The generic path (:mod:`session`, :mod:`dml`) parses nothing here but still builds
change-vector dataclasses, encodes them with :mod:`redo_codec` and keeps undo entries as
Python values; that costs ~200 µs per row change. :class:`BulkSession` does the same
operations (single-row insert, update, delete, array insert, commit, rollback) for the
workload generator, which must write >= 50,000 row changes/s: SQLite through one cursor and
prepared statements, and one call per single-row change into the row-change kernel
(:mod:`engine.embedded.redopack`, compiled in ``engine/_native/redopack.c`` when it was
built), which takes the undo addresses, encodes the values, packs the change vectors
(:mod:`bulkpack`) and frames the records for the log writer
(:meth:`LogWriter.add_frames`); each statement's records carry one clock reading. It writes
the *same bytes* as the generic path for the same operations (tests: the workload golden
hashes, which both paths give, ``test_source_bulkpack`` and ``test_source_redopack``).

A transaction the workload will roll back (it decides up front) keeps what its rollback
needs (``record_undo``): the rolled-back change's undo address, its SQLite before image
and its encoded columns, so the compensation records (``5.6`` + inverse row op + index op,
newest first) are packed like the forward ones. Savepoints and long-running transactions
use the generic session path. Row and key locks are not taken: each workload session changes
only rows it owns, and the workload uses the generic path while another session holds
rows of its tables.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, NamedTuple

from engine import _native
from engine.embedded import bulkpack as bp
from engine.embedded import redogen as rg
from engine.embedded import redopack as rp
from engine.embedded.database import Database
from engine.embedded.dictionary import TableDef
from engine.embedded.logfile import BLOCK, PAYLOAD, LogWriter
from engine.embedded.session import Session, Txn, UndoEntry
from engine.embedded.undo import undo_entry
from engine.redo.ids import Uba, make_dba

_EPOCH: Final = datetime(1970, 1, 1)
_KEYDATA: Final = struct.Struct(">IH")
_NATIVE: Final = _native.load("redopack")
# The row-change kernel: compiled when it was built, else its pure-Python twin (same bytes).
# Module attributes, read when a session first uses a table or ends a transaction: tests
# set them to either.
TABLE_KERNEL: type[rp.Table] = rp.Table if _NATIVE is None else _NATIVE.Table
COMMIT: Callable[[bp.TxHead, int, bytes, int, int, bp.Uba3, bool], bytes] = (
    rp.commit if _NATIVE is None else _NATIVE.commit
)


@dataclass
class _Table:
    """One table's packer, kernel and SQL (prepared once per session)."""

    table: TableDef
    pack: bp.TablePack
    kern: rp.Table  # or its compiled twin, typed as it (engine/_native/redopack.pyi)
    count: int  # records per single-row insert or delete (the row's, the index's)
    sql_insert: str
    # a delete reads the row by key, then deletes it by _rid (DELETE ... RETURNING costs
    # SQLite more: 2.5% of the instructions of a default-mode row change)
    sql_row: str
    sql_delete: str
    # per column: its Oracle bytes from its SQLite value
    encode: tuple[rp.Stored, ...]
    space: list[int]  # the database's [insert block, next slot, slots per block]
    blocks: int  # block address of block 0 of the table's file (dba = blocks | block)
    selects: dict[tuple[int, ...], str] = field(default_factory=dict)
    updates: dict[tuple[int, ...], str] = field(default_factory=dict)


class _Undone(NamedTuple):
    """What rolling back one fast-path change needs. ``kind``: ``ins`` (``data`` = the
    index key), ``del`` (``data`` = the SQLite row, ``row`` its column vector, ``key`` the
    index key), ``upd`` (``data`` = the old SQLite values of ``cols``, ``row[0]`` their
    column vector)."""

    kind: str
    table: _Table
    rid: int
    uba: bp.Uba3
    data: Sequence[object] | bytes = ()
    row: bp.Row3 = (b"", 0, 0)
    key: bytes = b""
    cols: tuple[int, ...] = ()


class BulkSession:
    """Fast single-row DML for one session (whose generic ``Session`` gives identity)."""

    def __init__(self, db: Database, session: Session) -> None:
        self.db = db
        self.session = session
        self.thread = session.thread
        self.ids: rg.TxnIds | None = None
        self.tx: rp.Txn | None = None  # the open transaction as the kernel sees it
        # what a rollback needs, kept only for a transaction that will roll back
        self.record_undo = False
        self.undo: list[_Undone | UndoEntry] = []
        self._tables: dict[int, _Table] = {}
        self._cur = db.conn.cursor()
        self._now_us = db.now_us
        self._writers = db.logs.writers
        # logical stream length at which the log reaches the switch size (see logfile)
        self._switch_at = max(1, db.state.log_bytes // BLOCK - 1) * PAYLOAD
        # the session's 5.20 (session information) and what it was made of
        self._who: tuple[int, int, int, str, str] | None = None
        self._session_info = b""

    def _table(self, table: TableDef) -> _Table:
        t = self._tables.get(table.obj)
        if t is None:
            key = table.key_columns[0]
            name = table.sqlite_name
            cols = ", ".join(f'"{c.name}"' for c in table.columns)
            marks = ", ".join("?" * (len(table.columns) + 1))
            pack = bp.TablePack(table)
            kinds, encode = rp.codecs_of(table)
            t = self._tables[table.obj] = _Table(
                table,
                pack,
                TABLE_KERNEL(pack, kinds, encode),
                1 if pack.index is None else 2,
                f'INSERT INTO "{name}" ("_rid", {cols}) VALUES ({marks})',
                f'SELECT "_rid", {cols} FROM "{name}" WHERE "{key}" = ?',
                f'DELETE FROM "{name}" WHERE "_rid" = ?',
                encode,
                self.db.state.space[str(table.obj)],
                make_dba(table.file_no, 0),
            )
        return t

    # -- transaction framing -----------------------------------------------------------

    def _begin(self, scn: int) -> rp.Txn:
        db = self.db
        ids = rg.TxnIds(xid=db.new_xid(), undo_seq=(scn >> 4) & 0xFFFF)
        x = ids.xid
        s = self.session
        self.ids = ids
        who = (s.sid, s.serial, s.audit, s.username, s.txn_name)
        if who != self._who:
            self._who = who
            self._session_info = bp.session_cv(*who)
        self.tx = tx = rp.Txn(
            bp.tx_head(ids.header_cls, ids.header_dba, x.usn, x.slot, x.sqn, ids.logon_user),
            ids,
            db.dirty_blocks,
            self._session_info,
        )
        self.undo = []
        return tx

    def _emit(self, scn: int, ts: int, ncv: int, cvs: bytes) -> None:
        """Append one record of ``ncv`` change vectors, timestamped ``ts`` (microseconds:
        the records of one statement carry the time it ran)."""
        w = self._writers.get(self.thread) or self.db.logs.writer(self.thread, scn)
        w.add_native(scn, ts, ncv, cvs)
        if w.logical >= self._switch_at:
            self.db.logs.switch(self.thread, self.db.state.scn + 1)

    def _switch(self, w: LogWriter, count: int, records: rp.Records, scn: int, ts: int) -> None:
        """The log switch is due with the ``count`` records of a row change that the kernel
        framed for ``w``: after them (``records`` are their frames, appended), or between
        them (the frames before the switch, not appended yet, and the records for the next
        log). The DML methods append the common case themselves::

            if not isinstance(r, bytes) or w.add_frames(r, scn, count) >= self._switch_at:
                self._switch(w, count, r, scn, ts)
        """
        if isinstance(records, bytes):
            self.db.logs.switch(self.thread, self.db.state.scn + 1)
            return
        frames, rest = records
        w.add_frames(frames, scn, count - len(rest))
        self.db.logs.switch(self.thread, self.db.state.scn + 1)
        for ncv, cvs in rest:
            self._emit(scn, ts, ncv, cvs)

    # -- DML ---------------------------------------------------------------------------

    def insert(self, table: TableDef, stored: Sequence[object], at: int | None = None) -> None:
        """Insert one row, ``stored`` its SQLite values; ``at`` the statement's time
        (microseconds) when the caller read the clock for the row."""
        db = self.db
        ts = self._now_us() if at is None else at
        t = self._tables.get(table.obj) or self._table(table)
        scn = db.next_scn()
        tx = self.tx or self._begin(scn)
        block, slot, per = t.space
        if slot < per:  # Database.allocate, in the insert block
            t.space[1] = slot + 1
        else:
            block, slot = divmod(db.allocate(table, 1)[0], 0x10000)
        rid = block << 16 | slot
        row = (rid, *stored)
        self._cur.execute(t.sql_insert, row)
        if self.record_undo:
            key = rp.index_key(t.encode[t.pack.key_col](stored[t.pack.key_col]))
            self.undo.append(_Undone("ins", t, rid, tx.ids.peek_rec(), key=key))
        w = self._writers.get(self.thread) or db.logs.writer(self.thread, scn)
        sw = self._switch_at
        r = t.kern.insert(tx, w.logical, w.rec_ids, sw, scn, ts, t.blocks | block, slot, row)
        if not isinstance(r, bytes) or w.add_frames(r, scn, t.count) >= sw:
            self._switch(w, t.count, r, scn, ts)

    def insert_array(
        self, table: TableDef, storeds: Sequence[Sequence[object]], at: int | None = None
    ) -> None:
        """An array insert (INSERT ... SELECT / array bind): 11.11 QMI per block plus one
        array index record per index and block (built with the generic index builder: the
        per-row cost here is in values and SQLite, not in records)."""
        db = self.db
        ts = self._now_us() if at is None else at
        t = self._tables.get(table.obj) or self._table(table)
        scn = db.next_scn()
        tx = self.tx or self._begin(scn)
        ids = tx.ids
        rids = db.allocate(table, len(storeds))
        self._cur.executemany(
            t.sql_insert, [(rid, *st) for rid, st in zip(rids, storeds, strict=True)]
        )
        groups: dict[int, list[tuple[int, tuple[bytes | None, ...]]]] = {}
        for rid, st in zip(rids, storeds, strict=True):
            groups.setdefault(rid >> 16, []).append((rid, t.kern.encode(st)))
        for block, group in groups.items():
            dba = make_dba(table.file_no, block)
            c, pre = rp.change(tx, scn, dba, 0)
            rows = [(rid & 0xFFFF, bp.columns(enc)[0]) for rid, enc in group]
            cvs = t.pack.array_insert(c, rows)
            if pre:
                self._emit(scn, ts, 4, b"".join((pre, cvs, tx.session)))
            else:
                self._emit(scn, ts, 2, cvs)
            if self.record_undo:
                rid_group = tuple(r for r, _ in group)
                self.undo.append(UndoEntry("ins", table.qualified, rid_group, Uba(*c[3])))
            for index in table.indexes:
                cols = tuple(table.column_index(col) for col in index.columns)
                keys = sorted(
                    (rg.index_key(cols, enc), _KEYDATA.pack(dba, rid & 0xFFFF), rid & 0xFFFF)
                    for rid, enc in group
                )
                db.emit(self.thread, scn, rg.index_change(ids, table, index, scn, True, keys))

    def update(
        self, table: TableDef, key: object, set_cols: tuple[int, ...], new: Sequence[object]
    ) -> bool:
        """Set columns ``set_cols`` of the row with primary key ``key`` to ``new`` (SQLite
        values); False when the row does not exist."""
        db = self.db
        ts = self._now_us()
        t = self._tables.get(table.obj) or self._table(table)
        sql = t.selects.get(set_cols) or self._prepare_update(t, set_cols)
        row = self._cur.execute(sql, (key,)).fetchone()
        if row is None:
            return False
        rid = row[0]
        self._cur.execute(t.updates[set_cols], (*new, rid))
        scn = db.next_scn()
        tx = self.tx or self._begin(scn)
        if self.record_undo:
            old = row[2:]
            enc = t.encode
            cols = bp.some_columns(
                set_cols, [enc[i](v) for i, v in zip(set_cols, old, strict=True)]
            )
            uba = tx.ids.peek_rec()
            self.undo.append(_Undone("upd", t, rid, uba, old, (cols, 0, 0), cols=set_cols))
        w = self._writers.get(self.thread) or db.logs.writer(self.thread, scn)
        r = t.kern.update(
            tx, w.logical, w.rec_ids, self._switch_at, scn, ts, t.blocks | rid >> 16, rid & 0xFFFF,
            set_cols, row, new,
        )  # fmt: skip
        if not isinstance(r, bytes) or w.add_frames(r, scn, 1) >= self._switch_at:
            self._switch(w, 1, r, scn, ts)
        return True

    def _prepare_update(self, t: _Table, set_cols: tuple[int, ...]) -> str:
        table = t.table
        names = [f'"{table.columns[i].name}"' for i in set_cols]
        key = table.columns[t.pack.key_col].name
        t.updates[set_cols] = (
            f'UPDATE "{table.sqlite_name}" SET {", ".join(n + " = ?" for n in names)} '
            'WHERE "_rid" = ?'
        )
        sql = t.selects[set_cols] = (
            f'SELECT "_rid", "{key}", {", ".join(names)} FROM "{table.sqlite_name}" '
            f'WHERE "{key}" = ?'
        )
        return sql

    def delete(self, table: TableDef, key: object) -> bool:
        """Delete the row with primary key ``key``; False when it does not exist."""
        db = self.db
        ts = self._now_us()
        t = self._tables.get(table.obj) or self._table(table)
        row = self._cur.execute(t.sql_row, (key,)).fetchone()
        if row is None:
            return False
        rid = row[0]
        self._cur.execute(t.sql_delete, (rid,))
        scn = db.next_scn()
        tx = self.tx or self._begin(scn)
        if self.record_undo:
            enc = [f(v) for f, v in zip(t.encode, row[1:], strict=True)]
            ikey = rp.index_key(enc[t.pack.key_col])
            uba = tx.ids.peek_rec()
            self.undo.append(_Undone("del", t, rid, uba, row, bp.columns(enc), ikey))
        w = self._writers.get(self.thread) or db.logs.writer(self.thread, scn)
        sw = self._switch_at
        r = t.kern.delete(
            tx, w.logical, w.rec_ids, sw, scn, ts, t.blocks | rid >> 16, rid & 0xFFFF, row
        )
        if not isinstance(r, bytes) or w.add_frames(r, scn, t.count) >= sw:
            self._switch(w, t.count, r, scn, ts)
        return True

    # -- transaction end ---------------------------------------------------------------

    def commit(self) -> None:
        ids = self.ids
        if ids is None:
            return
        db = self.db
        scn = db.next_scn()
        if ids.started:
            assert self.tx is not None
            self._end_record(scn, self._now_us(), ids, False)
            db.note_commit(ids.blocks, scn)
        self._end(ids)

    def rollback(self) -> None:
        """Roll back (the transaction must have run with ``record_undo``): rows put back,
        compensation records newest first, then the 5.4 with the rollback flag."""
        ids = self.ids
        if ids is None:
            return
        db = self.db
        scn = db.next_scn()
        ts = self._now_us()
        while self.undo:
            u = self.undo.pop()
            if isinstance(u, _Undone):
                self._undo_one(u, scn, ts)
            else:  # an array insert: the generic undo
                undo_entry(self.session, db, Txn(ids, scn, _EPOCH), u, scn)
        if ids.started:
            self._end_record(scn, ts, ids, True)
        self._end(ids)

    def _end_record(self, scn: int, ts: int, ids: rg.TxnIds, rollback: bool) -> None:
        """The 5.4 that ends the transaction (commit, or rollback)."""
        assert self.tx is not None
        w = self._writers.get(self.thread) or self.db.logs.writer(self.thread, scn)
        uba = ids.current_rec()
        end = COMMIT(self.tx.head, w.logical, w.rec_ids, scn, ts, uba, rollback)
        if w.add_frames(end, scn, 1) >= self._switch_at:
            self.db.logs.switch(self.thread, self.db.state.scn + 1)

    def _undo_one(self, u: _Undone, scn: int, ts: int) -> None:
        t = u.table
        pack = t.pack
        table = t.table
        assert self.tx is not None
        c = bp.compensating(
            self.tx.head, scn, u.uba, make_dba(table.file_no, u.rid >> 16), u.rid & 0xFFFF
        )
        if u.kind == "ins":
            self._cur.execute(f'DELETE FROM "{table.sqlite_name}" WHERE "_rid" = ?', (u.rid,))
            cvs = pack.undone_insert(c, u.key)
        elif u.kind == "del":
            self._cur.execute(t.sql_insert, u.data)
            cvs = pack.undone_delete(c, u.row, u.key)
        else:
            self._cur.execute(t.updates[u.cols], (*u.data, u.rid))
            cvs = pack.undone_update(c, len(u.cols), u.row[0])
        self._emit(scn, ts, 2 if u.kind == "upd" or pack.index is None else 3, cvs)

    def _end(self, ids: rg.TxnIds) -> None:
        db = self.db
        db.release_xid(ids.xid)
        self.ids = None
        self.tx = None
        self.undo = []
        db.end_transaction(self.thread)
