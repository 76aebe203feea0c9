"""The workload's fast path: single-row DML whose redo is packed straight to bytes.

The generic path (:mod:`session`, :mod:`dml`) parses nothing here but still builds
change-vector dataclasses, encodes them with :mod:`redo_codec` and keeps undo entries as
Python values; that costs ~200 µs per row change. :class:`BulkSession` does the same
operations (single-row insert, update, delete, array insert, commit, rollback) for the
workload generator, which must write >= 50,000 row changes/s: SQLite through one cursor and
prepared statements, change vectors from :mod:`bulkpack`, records appended to the log
writer as payloads (:meth:`LogWriter.add_native`), each statement's records with one clock
reading. It writes the *same bytes* as the generic path for the same operations (tests: the
workload golden hashes, which both paths give, and ``test_source_bulkpack``). Hot paths
keep Python steps few: per-table and per-transaction constants prepared once, no starred
calls, the common case (a later change, in a block the transaction holds) inline.

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
from decimal import Decimal
from typing import Final, NamedTuple

from engine.source import bulkpack as bp
from engine.source import redogen as rg
from engine.source.codecs import encode_date, encode_number, encode_scaled, encode_text
from engine.source.database import Database
from engine.source.dictionary import TableDef
from engine.source.ids import Uba, make_dba
from engine.source.logfile import BLOCK, PAYLOAD
from engine.source.session import Session, Txn, UndoEntry
from engine.source.undo import undo_entry

_EPOCH: Final = datetime(1970, 1, 1)
_KEYDATA: Final = struct.Struct(">IH")


@dataclass
class _Table:
    """One table's packer and SQL (prepared once per session)."""

    table: TableDef
    pack: bp.TablePack
    sql_insert: str
    sql_delete: str
    # per column: its Oracle bytes from its SQLite value
    encode: tuple[Callable[[object], bytes | None], ...]
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
        self.head: bp.TxHead | None = None
        # what a rollback needs, kept only for a transaction that will roll back
        self.record_undo = False
        self.undo: list[_Undone | UndoEntry] = []
        self._tables: dict[int, _Table] = {}
        self._cur = db.conn.cursor()
        self._now_us = db.now_us
        self._writers = db.logs.writers
        # logical stream length at which the log reaches the switch size (see logfile)
        self._switch_at = max(1, db.state.log_bytes // BLOCK - 1) * PAYLOAD

    def _table(self, table: TableDef) -> _Table:
        t = self._tables.get(table.obj)
        if t is None:
            key = table.key_columns[0]
            name = table.sqlite_name
            cols = ", ".join(f'"{c.name}"' for c in table.columns)
            marks = ", ".join("?" * (len(table.columns) + 1))
            t = self._tables[table.obj] = _Table(
                table,
                bp.TablePack(table),
                f'INSERT INTO "{name}" ("_rid", {cols}) VALUES ({marks})',
                f'DELETE FROM "{name}" WHERE "{key}" = ? RETURNING "_rid", {cols}',
                tuple(_STORED.get(c.type, _stored_text) for c in table.columns),
                self.db.state.space[str(table.obj)],
                make_dba(table.file_no, 0),
            )
        return t

    # -- transaction framing -----------------------------------------------------------

    def _begin(self, scn: int) -> rg.TxnIds:
        ids = rg.TxnIds(xid=self.db.new_xid(), undo_seq=(scn >> 4) & 0xFFFF)
        x = ids.xid
        self.ids = ids
        self.head = bp.tx_head(ids.header_cls, ids.header_dba, x.usn, x.slot, x.sqn, ids.logon_user)
        self.undo = []
        return ids

    def _change(self, ids: rg.TxnIds, scn: int, dba: int, slot: int) -> tuple[bp.Change, bytes]:
        """The :data:`bulkpack.Change` of a row change about to be packed (its undo record
        address taken), and the 5.2 slot allocation that precedes a transaction's first."""
        x = self.head
        assert x is not None
        pre = b""
        begin = not ids.started
        if begin:
            pre = bp.slot_cv(x, scn, (ids.undo_dba, ids.undo_seq, ids.rec + 1))
            ids.started = True
        uba = udba, useq, urec = ids.next_rec()
        if dba in ids.blocks:
            return (x, begin, scn, uba, dba, slot, bp.ktb_continue(udba, useq, urec), 0), pre
        return (x, begin, scn, uba, dba, slot, self._first_ktb(ids, dba, uba, scn), 2), pre

    def _session_cv(self) -> bytes:
        s = self.session
        return bp.session_cv(s.sid, s.serial, s.audit, s.username, s.txn_name)

    def _first_ktb(self, ids: rg.TxnIds, dba: int, uba: bp.Uba3, scn: int = 0) -> bytes:
        """The KTB of the transaction's first change in block ``dba`` (:func:`redogen.ktb_for`;
        index leaves pass no SCN: no cleanout)."""
        assert self.head is not None
        ids.blocks.add(dba)
        entries = self.db.dirty_blocks.pop(dba, None) if scn else None
        if entries:
            return bp.ktb_first(self.head, uba, entries, scn)
        return bp.ktb_first(self.head, uba)

    def _emit(self, scn: int, ts: int, ncv: int, cvs: bytes) -> None:
        """Append one record of ``ncv`` change vectors, timestamped ``ts`` (microseconds:
        the records of one statement carry the time it ran)."""
        w = self._writers.get(self.thread) or self.db.logs.writer(self.thread, scn)
        w.add_native(scn, ts, ncv, cvs)
        if w.logical >= self._switch_at:
            self.db.logs.switch(self.thread, self.db.state.scn + 1)

    def _first_change(self, c: bp.Change, ts: int, pre: bytes, cvs: bytes) -> None:
        """Emit a transaction's first row change: ``[undo, redo]`` framed by the 5.2 slot
        allocation and the 5.20 session information (later ones: ``_emit(scn, ts, 2, cvs)``)."""
        self._emit(c[2], ts, 4, b"".join((pre, cvs, self._session_cv())))

    def _index(
        self, ids: rg.TxnIds, t: _Table, c: bp.Change, ts: int, insert: bool, key: bytes
    ) -> None:
        """The index record after a row change ``c`` (same SCN, block and slot)."""
        pack = t.pack
        assert pack.index is not None
        leaf = pack.index[2]
        uba = udba, useq, urec = ids.next_rec()
        if leaf in ids.blocks:
            ktb = bp.ktb_continue(udba, useq, urec)
        else:
            ktb = self._first_ktb(ids, leaf, uba)
        ic = (c[0], False, c[2], uba, c[4], c[5], ktb, 0)
        self._emit(c[2], ts, 2, pack.index_change(ic, insert, key))

    # -- DML ---------------------------------------------------------------------------

    def insert(
        self,
        table: TableDef,
        enc: tuple[bytes | None, ...],
        stored: Sequence[object],
        at: int | None = None,
    ) -> None:
        """Insert one row: ``enc`` its Oracle bytes, ``stored`` its SQLite values; ``at``
        the statement's time (microseconds) when the caller read the clock for the row."""
        db = self.db
        ts = self._now_us() if at is None else at
        t = self._tables.get(table.obj) or self._table(table)
        scn = db.next_scn()
        ids = self.ids or self._begin(scn)
        block, slot, per = t.space
        if slot < per:  # Database.allocate, in the insert block
            t.space[1] = slot + 1
        else:
            block, slot = divmod(db.allocate(table, 1)[0], 0x10000)
        rid = block << 16 | slot
        self._cur.execute(t.sql_insert, (rid, *stored))
        c, pre = self._change(ids, scn, t.blocks | block, slot)
        pack = t.pack
        key = enc[pack.key_col]
        cvs = pack.insert(c, bp.columns(enc), key)
        if pre:
            self._first_change(c, ts, pre, cvs)
        else:
            self._emit(scn, ts, 2, cvs)
        ikey = b"\xff" if key is None else bytes((len(key),)) + key  # as redogen.index_key
        if self.record_undo:
            self.undo.append(_Undone("ins", t, rid, c[3], key=ikey))
        if pack.index is not None:
            self._index(ids, t, c, ts, True, ikey)

    def insert_array(
        self,
        table: TableDef,
        encs: Sequence[tuple[bytes | None, ...]],
        storeds: Sequence[Sequence[object]],
        at: int | None = None,
    ) -> None:
        """An array insert (INSERT ... SELECT / array bind): 11.11 QMI per block plus one
        array index record per index and block (built with the generic index builder: the
        per-row cost here is in values and SQLite, not in records)."""
        db = self.db
        ts = self._now_us() if at is None else at
        t = self._tables.get(table.obj) or self._table(table)
        scn = db.next_scn()
        ids = self.ids or self._begin(scn)
        rids = db.allocate(table, len(encs))
        self._cur.executemany(
            t.sql_insert, [(rid, *st) for rid, st in zip(rids, storeds, strict=True)]
        )
        groups: dict[int, list[tuple[int, tuple[bytes | None, ...]]]] = {}
        for rid, enc in zip(rids, encs, strict=True):
            groups.setdefault(rid >> 16, []).append((rid, enc))
        for block, group in groups.items():
            dba = make_dba(table.file_no, block)
            c, pre = self._change(ids, scn, dba, 0)
            rows = [(rid & 0xFFFF, bp.columns(enc)[0]) for rid, enc in group]
            cvs = t.pack.array_insert(c, rows)
            if pre:
                self._first_change(c, ts, pre, cvs)
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
        self,
        table: TableDef,
        key: object,
        set_cols: tuple[int, ...],
        new_enc: tuple[bytes | None, ...],
        new_stored: Sequence[object],
    ) -> bool:
        """Update the row with primary key ``key``; False when it does not exist."""
        db = self.db
        ts = self._now_us()
        t = self._tables.get(table.obj) or self._table(table)
        sql = t.selects.get(set_cols) or self._prepare_update(t, set_cols)
        row = self._cur.execute(sql, (key,)).fetchone()
        if row is None:
            return False
        rid = row[0]
        old = row[2:]
        self._cur.execute(t.updates[set_cols], (*new_stored, rid))
        scn = db.next_scn()
        ids = self.ids or self._begin(scn)
        c, pre = self._change(ids, scn, t.blocks | rid >> 16, rid & 0xFFFF)
        encode = t.encode
        old_cols = bp.some_columns(
            set_cols, [encode[i](v) for i, v in zip(set_cols, old, strict=True)]
        )
        pack = t.pack
        new_cols = bp.some_columns(set_cols, new_enc)
        key_enc = encode[pack.key_col](row[1])
        cvs = pack.update(c, len(set_cols), old_cols, new_cols, key_enc)
        if pre:
            self._first_change(c, ts, pre, cvs)
        else:
            self._emit(scn, ts, 2, cvs)
        if self.record_undo:
            self.undo.append(_Undone("upd", t, rid, c[3], old, (old_cols, 0, 0), cols=set_cols))
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
        row = self._cur.execute(t.sql_delete, (key,)).fetchone()
        if row is None:
            return False
        rid = row[0]
        scn = db.next_scn()
        ids = self.ids or self._begin(scn)
        c, pre = self._change(ids, scn, t.blocks | rid >> 16, rid & 0xFFFF)
        enc = [f(v) for f, v in zip(t.encode, row[1:], strict=True)]
        pack = t.pack
        key_enc = enc[pack.key_col]
        cols = bp.columns(enc)
        cvs = pack.delete(c, cols, key_enc)
        if pre:
            self._first_change(c, ts, pre, cvs)
        else:
            self._emit(scn, ts, 2, cvs)
        ikey = b"\xff" if key_enc is None else bytes((len(key_enc),)) + key_enc
        if self.record_undo:
            self.undo.append(_Undone("del", t, rid, c[3], row, cols, ikey))
        if pack.index is not None:
            self._index(ids, t, c, ts, False, ikey)
        return True

    # -- transaction end ---------------------------------------------------------------

    def commit(self) -> None:
        ids = self.ids
        if ids is None:
            return
        db = self.db
        scn = db.next_scn()
        if ids.started:
            assert self.head is not None
            self._emit(scn, self._now_us(), 1, bp.commit_cv(self.head, scn, ids.current_rec()))
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
            assert self.head is not None
            end = bp.commit_cv(self.head, scn, ids.current_rec(), rollback=True)
            self._emit(scn, ts, 1, end)
        self._end(ids)

    def _undo_one(self, u: _Undone, scn: int, ts: int) -> None:
        t = u.table
        pack = t.pack
        table = t.table
        assert self.head is not None
        c = bp.compensating(
            self.head, scn, u.uba, make_dba(table.file_no, u.rid >> 16), u.rid & 0xFFFF
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
        self.head = None
        self.undo = []
        db.end_transaction(self.thread)


def _stored_number(value: object) -> bytes | None:
    """Oracle bytes of a NUMBER as SQLite stores it (INTEGER or REAL); the same bytes the
    generic path gets through ``values.to_python`` and ``codecs.encode_value``."""
    if type(value) is int:
        return encode_scaled(value)
    if type(value) is float:
        text = repr(value)
        if "e" not in text and "n" not in text:
            ip, _, fp = text.partition(".")
            fp = fp.rstrip("0")
            if len(fp) % 2:
                fp += "0"
            return encode_scaled(int(ip + fp), len(fp) // 2)
        return encode_number(Decimal(text))
    if value is None or value == "":
        return None
    return encode_number(Decimal(str(value)))


def _stored_date(value: object) -> bytes | None:
    if value is None or value == "":
        return None
    text = str(value)
    raw = _DATES.get(text)
    if raw is None:
        if len(_DATES) > 4096:
            _DATES.clear()
        raw = _DATES[text] = encode_date(datetime.fromisoformat(text))
    return raw


def _stored_text(value: object) -> bytes | None:
    if value is None or value == "":
        return None
    return encode_text(str(value))


_DATES: dict[str, bytes] = {}  # workload dates repeat (one per second of redo time)
_STORED: Final[dict[str, Callable[[object], bytes | None]]] = {
    "NUMBER": _stored_number,
    "DATE": _stored_date,
}  # any other type: _stored_text (the workload's tables have NUMBER, VARCHAR2, DATE, CHAR)
