"""The workload's fast path: single-row DML whose redo is packed straight to Oracle's bytes.

The generic path (:mod:`session`, :mod:`dml`) builds change-vector dataclasses and encodes
them with :mod:`engine.redo.payloads`, and keeps undo entries as Python values; that costs
~200 µs per row change. :class:`BulkSession` does the same operations (single-row insert,
update, delete, array insert, commit, rollback) for the workload generator, which must write
tens of thousands of row changes a second: SQLite through one cursor and prepared statements,
and one call per single-row change into the row-change kernel
(:mod:`engine.embedded.redopack`, compiled in ``engine/_native/redopack.c`` when it was
built), which takes the undo addresses, encodes the values and packs the change vectors of
each record in Oracle's format; :meth:`LogWriter.add_vectors` frames them into the log (no
model is built, nothing is decoded). Each statement's records carry one clock reading. It
writes the *same bytes* as the generic path for the same operations (tests: the workload
golden hashes, which both paths give, and ``test_source_redopack``).

A transaction the workload will roll back (it decides up front) keeps what its rollback
needs (``record_undo``): the rolled-back change's undo address, its SQLite before image
and its encoded columns; the compensation records (``5.6`` + inverse row op + index op,
newest first) and array inserts (11.11 QMI per block) are rarer and built as the generic
path's change vectors (:mod:`redogen`), encoded by :mod:`engine.redo.payloads`; a rollback
to a mark (:meth:`BulkSession.rollback_to`) writes them for the changes after it. SQL's named
savepoints and long-running transactions use the generic session path. Row and key locks are
not taken: each workload session changes only rows it owns, and the workload uses the generic
path while another session holds rows of its tables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, NamedTuple

from engine import _native
from engine.embedded import chained, chainpack
from engine.embedded import redogen as rg
from engine.embedded import redopack as rp
from engine.embedded import rows as R
from engine.embedded.database import Database
from engine.embedded.dictionary import TableDef
from engine.embedded.logfile import LAYOUT, ORDER
from engine.embedded.session import Session, Txn, UndoEntry
from engine.embedded.state import Pieces
from engine.embedded.undo import undo_entry
from engine.redo import payloads as P
from engine.redo.codecs import most_bytes
from engine.redo.ids import Uba, make_dba

_EPOCH: Final = datetime(1970, 1, 1)
_NATIVE: Final = _native.load("redopack")
# The row-change kernel: compiled when it was built, else its pure-Python twin (same bytes).
# Module attributes, read when a session first uses a table or ends a transaction: tests
# set them to either.
TABLE_KERNEL: type[rp.Table] = rp.Table if _NATIVE is None else _NATIVE.Table
COMMIT: Callable[[rp.TxHead, int, rp.Uba3, bool], bytes] = (
    rp.commit if _NATIVE is None else _NATIVE.commit
)
ROW_PIECES: Callable[[Sequence[Sequence[bytes | None]]], bytes] = (
    rp.row_pieces if _NATIVE is None else _NATIVE.row_pieces
)


@dataclass
class _Table:
    """One table's kernel and SQL (prepared once per session)."""

    table: TableDef
    shape: rp.Shape
    kern: rp.Table  # or its compiled twin, typed as it (engine/_native/redopack.pyi)
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
    twin: rp.Table | None = None  # the Python kernel, for a row larger than a block
    # the table's chained rows (``Database.chained``: head rid -> pieces); empty (one test
    # per update or delete) unless the table has a row larger than a block
    chained: dict[int, Pieces] = field(default_factory=dict)
    # whether a row can be larger than a block (:func:`can_outgrow`): an update then reads
    # the whole row, to re-chain one it grows past a block
    large: bool = False


class _Undone(NamedTuple):
    """What rolling back one fast-path change needs. ``kind``: ``ins`` (``key`` = the
    key's Oracle bytes), ``del`` (``data`` = the SQLite row, ``enc`` its Oracle bytes),
    ``upd`` (``data`` = the old SQLite values of ``cols``, ``enc`` their Oracle bytes)."""

    kind: str
    table: _Table
    rid: int
    uba: rp.Uba3
    data: Sequence[object] = ()
    enc: tuple[bytes | None, ...] = ()
    key: bytes | None = None
    cols: tuple[int, ...] = ()
    # a chained row's change written a record per piece: its pieces and records
    # (chainpack.Undos), compensated a record per piece (chainpack.undone)
    parts: chainpack.Parts = ()
    undos: chainpack.Undos = ()
    # an update that re-chained the row (chainpack.rechain): its new pieces (``parts`` the
    # old ones, ``enc`` the whole old row's bytes) and the old layout a rollback restores
    # (``Database.keep_pieces``; empty: the row was in one piece)
    moved: chainpack.Parts = ()
    pieces: Pieces = ()


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
        self._log_bytes = db.state.log_bytes  # a log switches once it is this big
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
            shape = rp.shape_of(table)
            kinds, encode = rp.codecs_of(table)
            t = self._tables[table.obj] = _Table(
                table,
                shape,
                TABLE_KERNEL(shape, kinds, encode),
                f'INSERT INTO "{name}" ("_rid", {cols}) VALUES ({marks})',
                f'SELECT "_rid", {cols} FROM "{name}" WHERE "{key}" = ?',
                f'DELETE FROM "{name}" WHERE "_rid" = ?',
                encode,
                self.db.state.space[str(table.obj)],
                make_dba(table.file_no, 0),
                chained=self.db.chained.setdefault(table.obj, {}),
                large=can_outgrow(table),
            )
        return t

    # -- transaction framing -----------------------------------------------------------

    def _begin(self, scn: int) -> rp.Txn:
        db = self.db
        ids = rg.TxnIds(xid=db.new_xid(), undo_seq=(scn >> 4) & 0xFFFF)
        s = self.session
        self.ids = ids
        who = (s.sid, s.serial, s.audit, s.username, s.txn_name)
        if who != self._who:
            self._who = who
            info = rg.session_info(s.sid, s.serial, s.username, s.txn_name, s.audit)
            self._session_info = P.encode_vector(info, ORDER, LAYOUT)
        self.tx = tx = rp.Txn(rp.tx_head(ids), ids, db.dirty_blocks, self._session_info)
        self.undo = []
        return tx

    def _add(self, scn: int, ts: int, records: Sequence[bytes], ends: bool = False) -> None:
        """Append records (their change vectors), timestamped ``ts`` (microseconds: the
        records of one statement carry the time it ran); the log switches after a record
        that makes it ``log_bytes`` big, as ``Database.emit`` does."""
        thread = self.thread
        for vectors in records:
            w = self._writers.get(thread) or self.db.logs.writer(thread, scn)
            if w.add_vectors(scn, ts, vectors, ends=ends) >= self._log_bytes:
                self.db.logs.switch(thread, self.db.state.scn + 1)

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
        self._insert_at(t, tx, scn, ts, rid, row)

    def _insert_at(
        self, t: _Table, tx: rp.Txn, scn: int, ts: int, rid: int, row: tuple[object, ...]
    ) -> None:
        """The records of ``row`` (SQLite's ``(_rid, values...)``) stored at ``rid``, and
        what its rollback needs."""
        undo = self.record_undo
        uba = tx.ids.peek_rec() if undo else None
        dba, slot = t.blocks | rid >> 16, rid & 0xFFFF
        records = t.kern.insert(tx, scn, dba, slot, row)
        if records:
            self._add(scn, ts, records)
            parts: chainpack.Parts = ()
            undos: chainpack.Undos = ()
        else:  # a row larger than a block: its pieces (the Python twin writes them)
            records, uba, parts, undos = self._chained(t, tx, scn, rid, dba, slot, row)
            self._add_held(scn, ts, records, len(records) - 1 - (t.shape.key_index is not None))
        if undo:
            assert uba is not None
            key = t.encode[t.shape.key_col](row[1 + t.shape.key_col])
            self.undo.append(_Undone("ins", t, rid, uba, key=key, parts=parts, undos=undos))

    def _add_held(self, scn: int, ts: int, records: Sequence[bytes], held: int) -> None:
        """``records``, the first ``held`` of them (a chained row's pieces before its last
        record) with no log switch after them."""
        for vectors in records[:held]:
            w = self._writers.get(self.thread) or self.db.logs.writer(self.thread, scn)
            w.add_vectors(scn, ts, vectors)
        self._add(scn, ts, records[held:])

    def _chained(
        self,
        t: _Table,
        tx: rp.Txn,
        scn: int,
        rid: int,
        dba: int,
        slot: int,
        row: Sequence[object],
    ) -> tuple[tuple[bytes, ...], rp.Uba3, chainpack.Parts, chainpack.Undos]:
        """The records of a row larger than a block (``Table.insert_pieces``), its other
        pieces in new blocks as ``Database.allocate`` gives them, kept in
        ``Database.chained`` (dml._redo_insert); the head's undo address, the pieces and
        each record's piece and undo address (the last piece's first)."""
        twin = t.twin or self._twin(t)
        table = t.table
        rids = [rid]
        for _ in range(twin.pieces(row) - 1):
            rids.append(self.db.allocate(table, 1, fresh_block=True)[0])
        addrs = [(t.blocks | r >> 16, r & 0xFFFF) for r in rids]
        ubas = _next_recs(tx.ids, len(rids))  # (one record per piece, the last first)
        records, uba = twin.insert_pieces(tx, scn, addrs, row)
        ranges = R.row_pieces(rg.columns_of_row(twin.encode(row[1:])))
        pieces = tuple((r, *part) for r, part in zip(rids, ranges, strict=True))
        self.db.keep_pieces(table, rid, pieces)
        undos = tuple(zip(range(len(rids) - 1, -1, -1), ubas, strict=True))
        return records, uba, self._parts(t, pieces), undos

    def _parts(self, t: _Table, pieces: Pieces) -> list[tuple[int, int, int, int, int, int]]:
        return [
            (t.blocks | r >> 16, r & 0xFFFF, lo, hi, skip, end)
            for r, lo, hi, skip, end in chained.ranges(t.table, pieces)
        ]

    def _full_row(self, t: _Table, rid: int) -> tuple[object, ...]:
        """The SQLite values of row ``rid`` (a chained row's update reads them all)."""
        cols = ", ".join(f'"{c.name}"' for c in t.table.columns)
        got = self._cur.execute(
            f'SELECT {cols} FROM "{t.table.sqlite_name}" WHERE "_rid" = ?', (rid,)
        ).fetchone()
        return tuple(got)

    def _twin(self, t: _Table) -> rp.Table:
        kinds, encode = rp.codecs_of(t.table)
        t.twin = rp.Table(t.shape, kinds, encode)
        return t.twin

    def insert_array(
        self, table: TableDef, storeds: Sequence[Sequence[object]], at: int | None = None
    ) -> None:
        """An array insert (INSERT ... SELECT / array bind): 11.11 QMI per block
        (:func:`redopack.array_insert`) plus one array index record per index and block,
        built as the generic path builds it (``redogen.index_change``)."""
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
        if any(
            R.piece_bytes(rg.columns_of_row(enc)) > R.PIECE_ROOM
            for group in groups.values()
            for _, enc in group
        ):  # a row larger than a block: single-row inserts, which chain it (as dml.insert)
            for rid, st in zip(rids, storeds, strict=True):
                self._insert_at(t, tx, scn, ts, rid, (rid, *st))
            return
        for block, group in groups.items():
            dba = make_dba(table.file_no, block)
            slots = [rid & 0xFFFF for rid, _ in group]
            rows = ROW_PIECES([enc for _, enc in group])
            vectors, uba = rp.array_insert(t.shape, tx, scn, dba, slots, rows)
            self._add(scn, ts, (vectors,))
            if self.record_undo:
                rid_group = tuple(r for r, _ in group)
                self.undo.append(UndoEntry("ins", table.qualified, rid_group, Uba(*uba)))
            for index in table.indexes:
                cols = tuple(table.column_index(col) for col in index.columns)
                keys = sorted(
                    (rg.index_key(cols, enc), rg.keydata(dba, rid & 0xFFFF), rid & 0xFFFF)
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
        if t.large or (t.chained and rid in t.chained):  # (chained, or it may become so)
            pieces = t.chained.get(rid)
            twin = t.twin or self._twin(t)
            old_enc = twin.encode(self._full_row(t, rid))
            now = list(old_enc)
            for i, v in zip(set_cols, new, strict=True):
                now[i] = t.encode[i](v)
            new_enc = tuple(now)
            if pieces is not None or R.piece_bytes(rg.columns_of_row(new_enc)) > R.PIECE_ROOM:
                return self._update_chained(t, rid, pieces, ts, set_cols, row, new, old_enc,
                                            new_enc)  # fmt: skip
        self._cur.execute(t.updates[set_cols], (*new, rid))
        scn = db.next_scn()
        tx = self.tx or self._begin(scn)
        if self.record_undo:
            old = row[2:]
            enc = t.encode
            before = tuple(enc[i](v) for i, v in zip(set_cols, old, strict=True))
            uba = tx.ids.peek_rec()
            self.undo.append(_Undone("upd", t, rid, uba, old, before, cols=set_cols))
        dba = t.blocks | rid >> 16
        self._add(scn, ts, t.kern.update(tx, scn, dba, rid & 0xFFFF, set_cols, row, new))
        return True

    def _update_chained(
        self,
        t: _Table,
        rid: int,
        pieces: Pieces | None,
        ts: int,
        set_cols: tuple[int, ...],
        row: Sequence[object],
        new: Sequence[object],
        old_enc: tuple[bytes | None, ...],
        new_enc: tuple[bytes | None, ...],
    ) -> bool:
        """:meth:`update` of a chained row (``pieces``), or of a row in one piece grown
        past a block (None), ``old_enc`` / ``new_enc`` its columns' Oracle bytes before and
        after: a record per piece changed and the head's (:func:`chainpack.update`); when
        its pieces would no longer hold it, the row laid anew in pieces
        (:func:`chainpack.rechain`, the new layout kept), or whole when it makes one piece
        (as dml._redo_update)."""
        db = self.db
        table = t.table
        twin = t.twin or self._twin(t)
        self._cur.execute(t.updates[set_cols], (*new, rid))
        scn = db.next_scn()
        tx = self.tx or self._begin(scn)
        uba = tx.ids.peek_rec()
        parts: chainpack.Parts = ()
        undos: chainpack.Undos = ()
        moved: chainpack.Parts = ()
        laid = None  # (the old and new pieces, when the old ones no longer hold it)
        if pieces is not None and chained.fits(table, pieces, new_enc, set_cols):
            parts = self._parts(t, pieces)
            records, undos = chainpack.update(twin, tx, scn, parts, old_enc, new_enc, set_cols)
            self._add_held(scn, ts, records, len(records) - 1)
        else:
            laid = chained.relaid(db, table, rid, pieces, new_enc)
        if laid is not None:  # re-chained (chained.rechain): the head stays, the rest moves
            was, now = laid
            parts = self._parts(t, was)
            moved = [(t.blocks | r >> 16, r & 0xFFFF, lo, hi, skip, end)
                     for r, lo, hi, skip, end in now]  # fmt: skip
            records, undos = chainpack.rechain(twin, tx, scn, parts, moved, old_enc, new_enc)
            self._add_held(scn, ts, records, len(records) - 1)
            db.keep_pieces(table, rid, now)
            uba = undos[-1][1]
        elif not undos:  # whole
            dba = t.blocks | rid >> 16
            self._add(scn, ts, t.kern.update(tx, scn, dba, rid & 0xFFFF, set_cols, row, new))
        if self.record_undo:
            before = old_enc if moved else tuple(old_enc[i] for i in set_cols)
            kept = () if pieces is None else pieces
            self.undo.append(
                _Undone("upd", t, rid, uba, row[2:], before, cols=set_cols, parts=parts,
                        undos=undos, moved=moved, pieces=kept)
            )  # fmt: skip
        return True

    def _prepare_update(self, t: _Table, set_cols: tuple[int, ...]) -> str:
        table = t.table
        names = [f'"{table.columns[i].name}"' for i in set_cols]
        key = table.columns[t.shape.key_col].name
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
        undo = self.record_undo
        if undo:
            enc = tuple(f(v) for f, v in zip(t.encode, row[1:], strict=True))
            uba = tx.ids.peek_rec()
        pieces = t.chained.get(rid) if t.chained else None
        if pieces is not None:  # a record per piece, head first (chainpack)
            twin = t.twin or self._twin(t)
            parts = self._parts(t, pieces)
            records, undos = chainpack.delete(twin, tx, scn, parts, twin.encode(row[1:]))
            self._add_held(scn, ts, records, len(parts) - 1)
            if undo:
                self.undo.append(
                    _Undone("del", t, rid, uba, row, enc, enc[t.shape.key_col], parts=parts,
                            undos=undos)
                )  # fmt: skip
            return True
        if undo:
            self.undo.append(_Undone("del", t, rid, uba, row, enc, enc[t.shape.key_col]))
        self._add(scn, ts, t.kern.delete(tx, scn, t.blocks | rid >> 16, rid & 0xFFFF, row))
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
        scn = self.db.next_scn()
        ts = self._now_us()
        self._undo_to(0, ids, scn, ts)
        if ids.started:
            self._end_record(scn, ts, ids, True)
        self._end(ids)

    def savepoint(self) -> int:
        """A mark of the transaction's changes so far (``record_undo``), for
        :meth:`rollback_to` (as ``Session.savepoint`` names one)."""
        return len(self.undo)

    def rollback_to(self, mark: int) -> None:
        """Roll back the changes made after ``mark`` (:meth:`savepoint`), the transaction
        going on: their compensation records, newest first, at one SCN (as
        ``Session.rollback_to``)."""
        ids = self.ids
        if ids is None:
            return
        self._undo_to(mark, ids, self.db.next_scn(), self._now_us())

    def _undo_to(self, mark: int, ids: rg.TxnIds, scn: int, ts: int) -> None:
        """The changes after ``mark`` put back and compensated, newest first."""
        while len(self.undo) > mark:
            u = self.undo.pop()
            if isinstance(u, _Undone):
                self._undo_one(u, scn, ts)
            else:  # an array insert: the generic undo
                undo_entry(self.session, self.db, Txn(ids, scn, _EPOCH), u, scn)

    def _end_record(self, scn: int, ts: int, ids: rg.TxnIds, rollback: bool) -> None:
        """The 5.4 that ends the transaction (commit, or rollback)."""
        assert self.tx is not None
        self._add(scn, ts, (COMMIT(self.tx.head, scn, ids.current_rec(), rollback),), True)

    def _undo_one(self, u: _Undone, scn: int, ts: int) -> None:
        """Put one change back and write its compensation record (:func:`redopack.undone`:
        ``[5.6, the inverse row op, the inverse index op]`` as ``undo.compensate`` builds
        it)."""
        t = u.table
        table = t.table
        assert self.tx is not None
        dba, slot = make_dba(table.file_no, u.rid >> 16), u.rid & 0xFFFF
        if u.kind == "ins":
            self._cur.execute(f'DELETE FROM "{table.sqlite_name}" WHERE "_rid" = ?', (u.rid,))
        elif u.kind == "del":
            self._cur.execute(t.sql_insert, u.data)
        else:
            self._cur.execute(t.updates[u.cols], (*u.data, u.rid))
        if u.moved:  # a re-chain: the row's old pieces (none: it was in one piece)
            self.db.keep_pieces(table, u.rid, u.pieces)
        if u.undos:  # a chained row's change: a record per piece (chainpack.undone)
            old = u.enc
            if u.kind == "upd" and not u.moved:  # (a re-chain's: the whole old row)
                width: list[bytes | None] = [None] * len(table.columns)
                for i, v in zip(u.cols, u.enc, strict=True):
                    width[i] = v
                old = tuple(width)
            twin = t.twin or self._twin(t)
            x = self.tx.head
            self._add(scn, ts, chainpack.undone(twin, x, scn, u.kind, u.parts, u.undos, old,
                                                u.key, u.cols, u.moved))  # fmt: skip
            return
        rec = t.kern.undone(self.tx.head, scn, u.uba, dba, slot, u.kind, u.enc, u.key, u.cols)
        self._add(scn, ts, (rec,))

    def _end(self, ids: rg.TxnIds) -> None:
        db = self.db
        db.release_xid(ids.xid)
        self.ids = None
        self.tx = None
        self.undo = []
        db.end_transaction(self.thread)


def _next_recs(ids: rg.TxnIds, n: int) -> list[rp.Uba3]:
    """The addresses the next ``n`` undo records will get (:meth:`rg.TxnIds.peek_rec`, ``n``
    of them), none taken."""
    saved = ids.rec, ids.undo_seq, ids.last_uba
    got = [ids.next_rec() for _ in range(n)]
    ids.rec, ids.undo_seq, ids.last_uba = saved
    return got


def can_outgrow(table: TableDef) -> bool:
    """Whether a row of ``table`` can be larger than a block (:data:`rows.PIECE_ROOM`):
    every column at its most (``codecs.most_bytes``; no bound: it can). Decided once per
    table: an update in a table whose rows cannot reads only the columns it sets. The bound
    is the declared lengths, which SQL enforces (``ORA-12899``); the fast path takes the
    workload's values as given, which are within them (a row chained all the same is found
    by its pieces)."""
    most: list[bytes | None] = []
    for c in table.columns:
        n = most_bytes(c.type, c.length)
        if n is None:
            return True
        most.append(bytes(n))
    return R.piece_bytes(tuple(most)) > R.PIECE_ROOM
