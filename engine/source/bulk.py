"""The workload's fast path: row changes encoded straight to redo bytes.

The generic path (:mod:`session`) builds change-vector dataclasses and encodes them with
:mod:`redo_codec`; that costs ~200 µs per row change in CPython. For the workload
generator, which must write >= 50,000 row changes/s, :class:`BulkSession` produces the
*same bytes* for the same operations (single-row insert, update, delete, commit) by packing
the codec's structs directly, and writes SQLite with prepared statements. A test runs one
seeded workload both ways and requires identical decoded redo.

A transaction the workload will roll back (it decides up front) keeps undo entries
(``record_undo``) and is rolled back by the generic undo code, so its compensation redo is
the sessions' own. Savepoints and long-running transactions use the generic session path.
Row and key locks are not taken: the workload partitions keys between its sessions, and it
uses the generic path for a table while another session holds rows of it.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Final

from engine.source import redo_codec as rc
from engine.source import redogen as rg
from engine.source.codecs import encode_date, encode_number, encode_scaled, encode_text
from engine.source.database import Database
from engine.source.dictionary import TableDef
from engine.source.ids import Uba, make_dba
from engine.source.logfile import physical
from engine.source.redo import OBJ_UNDO
from engine.source.session import Session, Txn, UndoEntry
from engine.source.undo import undo_to
from engine.source.values import to_python

_EPOCH: Final = datetime(1970, 1, 1)
_U16 = struct.Struct("<H")
_ENTRY = struct.Struct("<HHQ")
_REC_HEAD = rc._REC_HEAD
_U32 = struct.Struct("<I")
_COL = struct.Struct("<Hi")
_STR_CACHE: dict[str, bytes] = {}
_EMPTY_ROWS_SLOTS: Final = _U16.pack(0) + _U16.pack(0)  # rows: 0, slots: 0 (ints of length 0)


def _s(text: str) -> bytes:
    b = _STR_CACHE.get(text)
    if b is None:
        raw = text.encode("utf-8")
        b = _U32.pack(len(raw)) + raw
        _STR_CACHE[text] = b
    return b


def _cols(cols: Sequence[tuple[int, bytes | None]]) -> bytes:
    out = [_U16.pack(len(cols))]
    for no, data in cols:
        if data is None:
            out.append(_COL.pack(no, -1))
        else:
            out.append(_COL.pack(no, len(data)))
            out.append(data)
    return b"".join(out)


def _ktb(
    op: int, kind: bytes, usn: int, slot: int, sqn: int, udba: int, useq: int, urec: int
) -> bytes:
    return rc._KTB.pack(op, kind, usn, slot, sqn, udba, useq, urec, 0, 0, 0, -1) + _s("C---")


_UNDO_KTB: Final = _ktb(0x03, b"Z", 0, 0, 0, 0, 0, 0)
# change-vector head + undo (+ xid) + KDO, and change-vector head + KDO, in one struct each
_URP_UNDO: Final = struct.Struct(
    "<" + "".join(f.format.lstrip("<") for f in (rc._CV_HEAD, rc._UNDO, rc._XID, rc._KDO))
)
_URP_REDO: Final = struct.Struct(
    "<" + "".join(f.format.lstrip("<") for f in (rc._CV_HEAD, rc._KDO))
)
_FB: Final = _s("--H-FL--")
_URP_MID: Final = _s("URP") + _FB
_ROW_HEAD: Final = struct.Struct("<HBh")


def _kdo(
    name: str,
    ktb: bytes,
    bdba: int,
    hdba: int,
    slot: int,
    *,
    lock: int = 0,
    size: int = 0,
    lb: int = 0,
    cc: int = 0,
    nnew: int = 0,
    cols: bytes = b"\0\0",
) -> bytes:
    return b"".join(
        (
            rc._KDO.pack(bdba, hdba, slot, 0x2C, 2, lock, size, lb, cc, nnew),
            _s(name),
            _s("--H-FL--"),
            ktb,
            cols,
            _EMPTY_ROWS_SLOTS,
        )
    )


@dataclass
class _TableInfo:
    table: TableDef
    hdba: int
    ncols: int
    key_col: int
    index: tuple[int, int, int, int] | None  # (obj, dataobj, leaf dba, indexid)
    sel_update: str
    sql_insert: str
    sql_delete: str
    updates: dict[tuple[int, ...], str]


class BulkSession:
    """Fast single-row DML for one session (whose generic ``Session`` gives identity)."""

    def __init__(self, db: Database, session: Session) -> None:
        self.db = db
        self.session = session
        self.ids: rg.TxnIds | None = None
        # undo entries, kept only for a transaction that will roll back (record_undo)
        self.record_undo = False
        self.undo: list[UndoEntry] = []
        self.info_written = False
        self._tables: dict[str, _TableInfo] = {}
        # logical stream length at which the log reaches the switch size (see logfile)
        self._switch_at = max(1, db.state.log_bytes // 512 - 1) * 496

    def _info(self, table: TableDef) -> _TableInfo:
        info = self._tables.get(table.qualified)
        if info is None:
            key = table.key_columns[0]
            index = None
            if table.indexes:
                ix = table.indexes[0]
                index = (
                    ix.obj,
                    ix.dataobj,
                    make_dba(table.file_no, ix.block),
                    make_dba(table.file_no, ix.block - 1),
                )
            name = table.sqlite_name
            cols = ", ".join(f'"{c.name}"' for c in table.columns)
            marks = ", ".join("?" * (len(table.columns) + 1))
            info = _TableInfo(
                table,
                make_dba(table.file_no, table.header_block),
                len(table.columns),
                table.column_index(key),
                index,
                f'SELECT "_rid", {cols} FROM "{name}" WHERE "{key}" = ?',
                f'INSERT INTO "{name}" ("_rid", {cols}) VALUES ({marks})',
                f'DELETE FROM "{name}" WHERE "{key}" = ? RETURNING "_rid", {cols}',
                {},
            )
            self._tables[table.qualified] = info
        return info

    # -- framing -------------------------------------------------------------------------

    def _begin(self, scn: int) -> rg.TxnIds:
        if self.ids is None:
            self.ids = rg.TxnIds(xid=self.db.new_xid(), undo_seq=(scn >> 4) & 0xFFFF)
            self.info_written = False
            self.undo = []
            self.db.now()  # the generic path reads the clock here (transaction start time)
        return self.ids

    def _emit(self, scn: int, cvs: list[bytes], ts: int) -> None:
        db = self.db
        thread = self.session.thread
        w = db.logs.writers.get(thread) or db.logs.writer(thread, scn)
        pos = physical(w.logical)
        head = _REC_HEAD.pack(
            thread, 0x01, 0, w.header.sequence, pos >> 9, pos & 0x1FF, 0, scn, 1, ts, len(cvs)
        )
        w.append_payload(head + b"".join(cvs), scn)
        if w.logical >= self._switch_at:
            db.logs.switch(thread, db.state.scn + 1)

    def _now(self) -> int:
        return self.db.now_us()

    def _prefix_suffix(self, ids: rg.TxnIds, scn: int) -> tuple[list[bytes], list[bytes]]:
        if ids.started:
            return [], []
        x = ids.xid
        slot_cv = (
            rc._CV_HEAD.pack(5, 2, 0, 0, ids.header_cls, 3, ids.header_dba, OBJ_UNDO, scn, 1, 3)
            + rc._SLOT.pack(x.slot, x.sqn, 0x12, 0, 0)
            + rc._UBA.pack(ids.undo_dba, ids.undo_seq, ids.rec + 1)
            + rc._XID.pack(0, 0, 0)
        )
        return [slot_cv], []

    def _session_cv(self) -> list[bytes]:
        if self.info_written:
            return []
        self.info_written = True
        s = self.session
        return [
            rc._CV_HEAD.pack(5, 20, 0, 1, 1, 4, 0, OBJ_UNDO, 0, 1, 7)
            + rc._SESSION.pack(s.sid, s.serial, 186647296, s.audit)
            + _s(s.username)
            + _s(s.txn_name)
            + _s("")
        ]

    def _undo(
        self,
        ids: rg.TxnIds,
        scn: int,
        objn: int,
        objd: int,
        kdo: bytes | None,
        supp: bytes,
        opc: tuple[int, int] = (11, 1),
        index: bytes | None = None,
    ) -> tuple[bytes, int, int, int]:
        begin = not ids.started
        uba = ids.next_uba()
        x = ids.xid
        bits = (1 if begin else 0) | (2 if kdo is not None else 0) | (4 if index is not None else 0)
        body = rc._UNDO.pack(
            opc[0],
            opc[1],
            objn,
            objd,
            x.slot,
            0 if begin else uba.rec - 1,
            4,
            0,
            0,
            0x12 if begin and opc == (11, 1) else 0x22,
            uba.seq,
            uba.rec,
            ids.logon_user if begin else 0,
            bits,
        ) + rc._XID.pack(x.usn, x.slot, x.sqn)
        head = rc._CV_HEAD.pack(
            5, 1, 0, 0, ids.header_cls + 1, 3, ids.undo_dba, OBJ_UNDO, scn, 2 if begin else 1, 4
        )
        return head + body + (kdo or b"") + (index or b"") + supp, uba.dba, uba.seq, uba.rec

    def _redo_ktb(
        self, ids: rg.TxnIds, block_dba: int, udba: int, useq: int, urec: int, scn: int = 0
    ) -> tuple[bytes, int]:
        """:func:`redogen.ktb_for`, encoded (index leaves pass no SCN: no cleanout)."""
        x = ids.xid
        if block_dba in ids.blocks:
            return _ktb(0x02, b"C", 0, 0, 0, udba, useq, urec), 0
        ids.blocks.add(block_dba)
        entries = self.db.dirty_blocks.pop(block_dba, None) if scn else None
        if entries:
            head = rc._KTB.pack(
                0x11, b"F", x.usn, x.slot, x.sqn, udba, useq, urec, 0, len(entries), 0, scn
            )
            return head + _s("C---") + b"".join(_ENTRY.pack(*e) for e in entries), 2
        return _ktb(0x01, b"F", x.usn, x.slot, x.sqn, udba, useq, urec), 2

    def _index(
        self,
        ids: rg.TxnIds,
        info: _TableInfo,
        scn: int,
        insert: bool,
        key: bytes,
        kd: bytes,
        slot: int,
    ) -> None:
        assert info.index is not None
        iobj, idataobj, leaf, indexid = info.index
        action = "purge leaf row" if insert else "restore leaf row (clear leaf delete flags)"
        undo_index = (
            rc._IDX.pack(0, 2, 0, 0, indexid, leaf, 0x1)
            + _s(action)
            + _UNDO_KTB
            + _U32.pack(len(key))
            + key
            + b"\0\0\0\0"
            + (b"\0\0\0\0" if insert else _U32.pack(len(kd)) + kd)
        )
        undo_cv, udba, useq, urec = self._undo(
            ids, scn, iobj, idataobj, None, b"\0\0", opc=(10, 22), index=undo_index
        )
        ktb, _ = self._redo_ktb(ids, leaf, udba, useq, urec)
        rs = len(key) + len(kd) + 4
        redo = (
            rc._CV_HEAD.pack(
                10, 2 if insert else 4, 0, 0, 1, info.table.file_no, leaf, idataobj, scn, 1, 2
            )
            + rc._IDX.pack(0, 2, slot, rs, 0, 0, 0x1)
            + _s("insert leaf row" if insert else "delete leaf row")
            + ktb
            + (_U32.pack(len(key)) + key if insert else b"\0\0\0\0")
            + b"\0\0\0\0"
            + (_U32.pack(len(kd)) + kd if insert else b"\0\0\0\0")
        )
        self._emit(scn, [undo_cv, redo], self._now())

    # -- DML -----------------------------------------------------------------------------

    def insert(
        self, table: TableDef, enc: tuple[bytes | None, ...], stored: Sequence[object]
    ) -> None:
        """Insert one row: ``enc`` its Oracle bytes, ``stored`` its SQLite values."""
        db = self.db
        info = self._info(table)
        scn = db.next_scn()
        ids = self._begin(scn)
        rid = db.allocate(table, 1)[0]
        db.conn.execute(info.sql_insert, (rid, *stored))
        block, slot = rid >> 16, rid & 0xFFFF
        dba = make_dba(table.file_no, block)
        pre, _ = self._prefix_suffix(ids, scn)
        keyc = info.key_col
        supp = _cols([(keyc, enc[keyc])])
        undo_kdo = _kdo("DRP", _UNDO_KTB, dba, info.hdba, slot)
        undo_cv, udba, useq, urec = self._undo(ids, scn, table.obj, table.dataobj, undo_kdo, supp)
        ids.started = True
        ktb, typ = self._redo_ktb(ids, dba, udba, useq, urec, scn)
        n = len(enc)
        while n and enc[n - 1] is None:
            n -= 1
        cols = [(i, enc[i]) for i in range(n)]
        size = 3 + sum(1 + (len(v) if v else 0) for _, v in cols)
        redo = rc._CV_HEAD.pack(
            11, 2, typ, 0, 1, table.file_no, dba, table.dataobj, scn, 1, 1
        ) + _kdo("IRP", ktb, dba, info.hdba, slot, size=size, lb=2, cc=n, cols=_cols(cols))
        self._emit(scn, [*pre, undo_cv, redo, *self._session_cv()], self._now())
        if self.record_undo:
            self.undo.append(UndoEntry("ins", table.qualified, (rid,), Uba(udba, useq, urec)))
        if info.index is not None:
            key = bytes([len(enc[keyc] or b"")]) + (enc[keyc] or b"")
            self._index(ids, info, scn, True, key, struct.pack(">IH", dba, slot), slot)

    def insert_array(
        self,
        table: TableDef,
        encs: Sequence[tuple[bytes | None, ...]],
        storeds: Sequence[Sequence[object]],
    ) -> None:
        """An array insert (INSERT ... SELECT / array bind): 11.11 QMI per block plus one
        array index record per index and block, built with the generic change-vector
        builders (the per-row cost here is in values and SQLite, not in records)."""
        db = self.db
        info = self._info(table)
        scn = db.next_scn()
        ids = self._begin(scn)
        rids = db.allocate(table, len(encs))
        db.conn.executemany(
            info.sql_insert, [(rid, *st) for rid, st in zip(rids, storeds, strict=True)]
        )
        thread = self.session.thread
        groups: dict[int, list[tuple[int, tuple[bytes | None, ...]]]] = {}
        for rid, enc in zip(rids, encs, strict=True):
            groups.setdefault(rid >> 16, []).append((rid, enc))
        for block, group in groups.items():
            dba = make_dba(table.file_no, block)
            slots = [rid & 0xFFFF for rid, _ in group]
            pre, _ = self._prefix_suffix(ids, scn)
            undo_kdo = b"".join(
                (
                    rc._KDO.pack(dba, info.hdba, 0, 0x2C, 2, 0, 0, 0, 0, 0),
                    _s("QMD"),
                    _FB,
                    _UNDO_KTB,
                    b"\0\0\0\0",
                    _U16.pack(len(slots)),
                    struct.pack(f"<{len(slots)}I", *slots),
                )
            )
            undo_cv, udba, useq, urec = self._undo(
                ids, scn, table.obj, table.dataobj, undo_kdo, b"\0\0"
            )
            ids.started = True
            ktb, typ = self._redo_ktb(ids, dba, udba, useq, urec, scn)
            rows = [_U16.pack(len(group))]
            for rid, enc in group:
                n = len(enc)
                while n and enc[n - 1] is None:
                    n -= 1
                rows.append(_ROW_HEAD.pack(rid & 0xFFFF, 0, -1))
                rows.append(_FB)
                rows.append(_cols([(i, enc[i]) for i in range(n)]))
            redo = b"".join(
                (
                    rc._CV_HEAD.pack(
                        11, 11, typ, 0, 1, table.file_no, dba, table.dataobj, scn, 1, 1
                    ),
                    rc._KDO.pack(dba, info.hdba, 0, 0x2C, 2, 1, 0, 0, 0, 0),
                    _s("QMI"),
                    _FB,
                    ktb,
                    b"\0\0",
                    *rows,
                    b"\0\0",
                )
            )
            self._emit(scn, [*pre, undo_cv, redo, *self._session_cv()], self._now())
            if self.record_undo:
                self.undo.append(
                    UndoEntry(
                        "ins", table.qualified, tuple(r for r, _ in group), Uba(udba, useq, urec)
                    )
                )
            for index in table.indexes:
                cols = tuple(table.column_index(c) for c in index.columns)
                keys = sorted(
                    (rg.index_key(cols, enc), struct.pack(">IH", dba, rid & 0xFFFF), rid & 0xFFFF)
                    for rid, enc in group
                )
                db.emit(thread, scn, rg.index_change(ids, table, index, scn, True, keys))

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
        info = self._info(table)
        row = db.conn.execute(info.sel_update, (key,)).fetchone()
        if row is None:
            return False
        rid = row[0]
        sql = info.updates.get(set_cols)
        if sql is None:
            assign = ", ".join(f'"{table.columns[i].name}" = ?' for i in set_cols)
            sql = info.updates[set_cols] = (
                f'UPDATE "{table.sqlite_name}" SET {assign} WHERE "_rid" = ?'
            )
        db.conn.execute(sql, (*new_stored, rid))
        scn = db.next_scn()
        ids = self._begin(scn)
        block, slot = rid >> 16, rid & 0xFFFF
        dba = make_dba(table.file_no, block)
        keyc = info.key_col
        old = row[1:]
        if ids.started and not self.record_undo:
            self._update_record(info, ids, scn, dba, slot, set_cols, new_enc, old)
            return True
        pre, _ = self._prefix_suffix(ids, scn)
        old_enc = [_enc_stored(table, i, old[i]) for i in set_cols]
        supp = _cols([(keyc, _enc_stored(table, keyc, old[keyc]))])
        ncols = info.ncols
        undo_kdo = _kdo(
            "URP",
            _UNDO_KTB,
            dba,
            info.hdba,
            slot,
            lock=0,
            cc=ncols,
            nnew=len(set_cols),
            cols=_cols(list(zip(set_cols, old_enc, strict=True))),
        )
        undo_cv, udba, useq, urec = self._undo(ids, scn, table.obj, table.dataobj, undo_kdo, supp)
        ids.started = True
        ktb, typ = self._redo_ktb(ids, dba, udba, useq, urec, scn)
        redo = rc._CV_HEAD.pack(
            11, 5, typ, 0, 1, table.file_no, dba, table.dataobj, scn, 1, 1
        ) + _kdo(
            "URP",
            ktb,
            dba,
            info.hdba,
            slot,
            lock=1,
            cc=ncols,
            nnew=len(set_cols),
            cols=_cols(list(zip(set_cols, new_enc, strict=True))),
        )
        self._emit(scn, [*pre, undo_cv, redo, *self._session_cv()], self._now())
        if self.record_undo:
            before = tuple(to_python(table.columns[i], old[i]) for i in set_cols)
            self.undo.append(
                UndoEntry("upd", table.qualified, (rid,), Uba(udba, useq, urec), before, set_cols)
            )
        return True

    def _update_record(
        self,
        info: _TableInfo,
        ids: rg.TxnIds,
        scn: int,
        dba: int,
        slot: int,
        set_cols: tuple[int, ...],
        new_enc: tuple[bytes | None, ...],
        old: Sequence[object],
    ) -> None:
        """The update record of a transaction's later change, packed with two structs (the
        same bytes as the general path above; the workload equivalence test checks it)."""
        table = info.table
        uba = ids.next_uba()
        x = ids.xid
        ncols, nnew = info.ncols, len(set_cols)
        undo_head = _URP_UNDO.pack(
            5,
            1,
            0,
            0,
            ids.header_cls + 1,
            3,
            ids.undo_dba,
            OBJ_UNDO,
            scn,
            1,
            4,
            11,
            1,
            table.obj,
            table.dataobj,
            x.slot,
            uba.rec - 1,
            4,
            0,
            0,
            0x22,
            uba.seq,
            uba.rec,
            0,
            2,
            x.usn,
            x.slot,
            x.sqn,
            dba,
            info.hdba,
            slot,
            0x2C,
            2,
            0,
            0,
            0,
            ncols,
            nnew,
        )
        old_cols = _cols([(i, _enc_stored(table, i, old[i])) for i in set_cols])
        keyc = info.key_col
        supp = _cols([(keyc, _enc_stored(table, keyc, old[keyc]))])
        ktb, typ = self._redo_ktb(ids, dba, uba.dba, uba.seq, uba.rec, scn)
        redo_head = _URP_REDO.pack(
            11,
            5,
            typ,
            0,
            1,
            table.file_no,
            dba,
            table.dataobj,
            scn,
            1,
            1,
            dba,
            info.hdba,
            slot,
            0x2C,
            2,
            1,
            0,
            0,
            ncols,
            nnew,
        )
        new_cols = _cols(list(zip(set_cols, new_enc, strict=True)))
        self._emit(
            scn,
            [
                undo_head + _URP_MID + _UNDO_KTB + old_cols + _EMPTY_ROWS_SLOTS + supp,
                redo_head + _URP_MID + ktb + new_cols + _EMPTY_ROWS_SLOTS,
            ],
            self._now(),
        )

    def delete(self, table: TableDef, key: object) -> bool:
        db = self.db
        info = self._info(table)
        row = db.conn.execute(info.sql_delete, (key,)).fetchone()
        if row is None:
            return False
        rid = row[0]
        scn = db.next_scn()
        ids = self._begin(scn)
        block, slot = rid >> 16, rid & 0xFFFF
        dba = make_dba(table.file_no, block)
        pre, _ = self._prefix_suffix(ids, scn)
        enc = [_enc_stored(table, i, v) for i, v in enumerate(row[1:])]
        keyc = info.key_col
        n = len(enc)
        while n and enc[n - 1] is None:
            n -= 1
        cols = [(i, enc[i]) for i in range(n)]
        size = 3 + sum(1 + (len(v) if v else 0) for _, v in cols)
        undo_kdo = _kdo(
            "IRP", _UNDO_KTB, dba, info.hdba, slot, size=size, lb=0, cc=n, cols=_cols(cols)
        )
        undo_cv, udba, useq, urec = self._undo(
            ids, scn, table.obj, table.dataobj, undo_kdo, _cols([(keyc, enc[keyc])])
        )
        ids.started = True
        ktb, typ = self._redo_ktb(ids, dba, udba, useq, urec, scn)
        redo = rc._CV_HEAD.pack(
            11, 3, typ, 0, 1, table.file_no, dba, table.dataobj, scn, 1, 1
        ) + _kdo("DRP", ktb, dba, info.hdba, slot)
        self._emit(scn, [*pre, undo_cv, redo, *self._session_cv()], self._now())
        if self.record_undo:
            before = tuple(to_python(c, v) for c, v in zip(table.columns, row[1:], strict=True))
            self.undo.append(
                UndoEntry("del", table.qualified, (rid,), Uba(udba, useq, urec), before)
            )
        if info.index is not None:
            kb = enc[keyc] or b""
            self._index(
                ids, info, scn, False, bytes([len(kb)]) + kb, struct.pack(">IH", dba, slot), slot
            )
        return True

    def commit(self) -> None:
        ids = self.ids
        if ids is None:
            return
        db = self.db
        scn = db.next_scn()
        if ids.started:
            uba = ids.last_uba
            assert uba is not None
            x = ids.xid
            cv = (
                rc._CV_HEAD.pack(5, 4, 0, 0, ids.header_cls, 3, ids.header_dba, OBJ_UNDO, scn, 1, 5)
                + rc._COMMIT.pack(x.slot, x.sqn, 0, 9, 0x2, 0, 0, 0)
                + rc._UBA.pack(uba.dba, uba.seq, uba.rec)
            )
            self._emit(scn, [cv], self._now())
            db.note_commit(ids.blocks, scn)
        db.release_xid(ids.xid)
        self.ids = None
        db.end_transaction(self.session.thread)

    def rollback(self) -> None:
        """Roll back (the transaction must have run with ``record_undo``): the generic undo
        machinery puts rows back and writes the same compensation redo as a session would."""
        ids = self.ids
        if ids is None:
            return
        db = self.db
        scn = db.next_scn()
        txn = Txn(ids, scn, _EPOCH, entries=self.undo)
        undo_to(self.session, db, txn, 0, scn)
        if ids.started:
            db.emit(self.session.thread, scn, [rg.commit_cv(ids, scn, rollback=True)])
        db.release_xid(ids.xid)
        self.ids = None
        self.undo = []
        db.end_transaction(self.session.thread)


def _enc_stored(table: TableDef, i: int, value: object) -> bytes | None:
    """Oracle bytes of a value as SQLite stores it (the workload's column types); the same
    bytes the generic path gets through ``values.to_python`` and ``codecs.encode_value``."""
    if value is None or value == "":
        return None
    t = table.columns[i].type
    if t == "NUMBER":
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
        return encode_number(Decimal(str(value)))
    if t == "DATE":
        text = str(value)
        raw = _DATES.get(text)
        if raw is None:
            if len(_DATES) > 4096:
                _DATES.clear()
            raw = _DATES[text] = encode_date(datetime.fromisoformat(text))
        return raw
    return encode_text(str(value))


_DATES: dict[str, bytes] = {}  # workload dates repeat (one per second of redo time)
