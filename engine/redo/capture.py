"""Committed transactions of captured tables, assembled from Oracle redo records.

Feed records in log order (:meth:`Capture.feed`); each 5.4 commit gives back the
transaction it ends, with its row changes in redo order, typed by the dictionary. Rolled-back
transactions are dropped; a 5.6 / 5.11 (undo applied: rollback to a savepoint) with its
level-11 partner takes back the latest change of that transaction to the row it names.
Only vectors of captured tables (and the transaction layer) are decoded, so what the
database does elsewhere is read but never an error.

Stops (:class:`CaptureStop`, with table and SCN): a change to a captured table's dictionary
rows (SYS.COL$, SYS.OBJ$, SYS.TAB$ rows whose OBJ# is the table's) after the dictionary's
SCN; a compressed row of a captured table. Columns of types we do not decode (LOBs, LONG,
XMLTYPE, JSON, objects) are reported once per table and column by ``warn`` and left out.
The commit SCN is the SCN of the log writer write (LWN) holding the 5.4 (docs/redo_format.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

from engine.redo import vectors as V
from engine.redo.dictionary import Column, Dictionary, Table
from engine.redo.errors import RedoError
from engine.redo.framing import Rba, Record, Vector
from engine.redo.rowid import FB_F, FB_L, rowid
from engine.redo.values import DECODERS, Value, decode_value

DICTIONARY_TABLES = ("SYS.COL$", "SYS.OBJ$", "SYS.TAB$")


class CaptureStop(RedoError):
    default_code = "OGG-01433"


@dataclass(frozen=True)
class RowEvent:
    op: str  # INSERT, UPDATE, DELETE
    table: Table
    scn: int
    rba: Rba
    rowid: str
    before: tuple[tuple[str, Value], ...]
    after: tuple[tuple[str, Value], ...]


@dataclass(frozen=True)
class Transaction:
    xid: V.Xid
    begin_scn: int
    commit_scn: int
    commit_time: int  # redo time of the commit's LWN
    user: str
    changes: tuple[RowEvent, ...]


@dataclass
class _Open:
    begin_scn: int
    user: str = ""
    changes: list[RowEvent] = field(default_factory=list)
    pieces: list[V.RowChange] = field(default_factory=list)


class Capture:
    def __init__(
        self,
        dictionary: Dictionary,
        captured: Callable[[Table], bool],
        warn: Callable[[str], None] = lambda _m: None,
    ) -> None:
        self.dictionary = dictionary
        self.warn = warn
        self.tables = {k: t for k, t in dictionary.by_data_obj().items() if captured(t)}
        self.captured_objs = {(t.con_id, t.obj): t for t in self.tables.values()}
        self.dict_tables = {  # data objects (clusters too) of the dictionary's own tables
            (t.con_id, d)
            for t in dictionary.tables
            if t.full_name in DICTIONARY_TABLES
            for d in t.data_objs
        }
        self.open: dict[V.Xid, _Open] = {}
        self.lwn_scn = 0
        self.lwn_time = 0
        self.records = 0
        self._warned: set[tuple[str, str]] = set()
        for t in self.tables.values():
            for c in t.columns:
                if c.type.upper().split("(")[0] not in DECODERS:
                    self._warn_once(t, c)

    def _warn_once(self, t: Table, c: Column) -> None:
        if (t.full_name, c.name) not in self._warned:
            self._warned.add((t.full_name, c.name))
            self.warn(
                f"OGG-01431: column {c.name} of {t.full_name} has type {c.type}, not captured"
            )

    def feed(self, rec: Record) -> list[Transaction]:
        self.records += 1
        if rec.lwn:
            self.lwn_scn, self.lwn_time = rec.lwn.scn, rec.lwn.time
        done: list[Transaction] = []
        xid: V.Xid | None = None
        undo: V.Undo | None = None
        undone: tuple[int, int] | None = None  # (con, data obj) of a 5.6 / 5.11
        for v in rec.vectors:
            op = v.op
            if op == "5.2":
                b = V.decode(v)
                assert isinstance(b, V.Begin)
                xid = b.xid
                self.open.setdefault(xid, _Open(rec.scn))
            elif op == "5.1":
                uxid, _objn, objd, opc = V.undo_ids(v)
                xid = uxid or xid
                undo = None
                if opc == "11.1" and (
                    (v.con_id, objd) in self.tables or (v.con_id, objd) in self.dict_tables
                ):
                    d = V.decode(v)
                    assert isinstance(d, V.Undo)
                    undo = d
            elif op in ("5.6", "5.11"):
                _x, _objn, objd, _opc = V.undo_ids(v)
                undone = (v.con_id, objd)
            elif op == "5.20":
                s = V.decode(v)
                assert isinstance(s, V.Session)
                if xid and xid in self.open and s.user:
                    self.open[xid].user = s.user
            elif op == "5.4":
                e = V.decode(v)
                assert isinstance(e, V.End)
                t = self.open.pop(e.xid, None)
                if t is not None and not e.rollback and t.changes:
                    done.append(
                        Transaction(
                            e.xid,
                            t.begin_scn,
                            self.lwn_scn or rec.scn,
                            self.lwn_time,
                            t.user,
                            tuple(t.changes),
                        )
                    )
            elif v.layer == 11:
                key = (v.con_id, v.obj)
                if key in self.dict_tables:
                    self._dictionary_change(v, undo, rec)
                elif key in self.tables:
                    self._row(v, undo, rec, xid, undone == key)
                undo = None
                undone = None
        return done

    # ------------------------------------------------------------------ rows

    def _dictionary_change(self, v: Vector, undo: V.Undo | None, rec: Record) -> None:
        if rec.scn <= self.dictionary.scn:
            return
        d = V.decode(v)
        pieces = [d.row.columns] if isinstance(d, V.Redo) else []
        if undo and undo.row:
            pieces.append(undo.row.columns)
        for cols in pieces:
            first = dict(cols).get(0)
            if not first:
                continue
            try:
                obj = decode_value("NUMBER", first)
            except RedoError:
                continue
            if not isinstance(obj, Decimal):
                continue
            t = self.captured_objs.get((v.con_id, int(obj)))
            if t is not None:
                raise CaptureStop(
                    f"the structure of {t.full_name} changed at SCN {rec.scn} "
                    f"(RBA {rec.rba.dump()}): "
                    f"take a new dictionary from that SCN and restart the Extract after it"
                )

    def _values(
        self, t: Table, cols: tuple[tuple[int, bytes | None], ...]
    ) -> tuple[tuple[str, Value], ...]:
        out = []
        for n, raw in cols:
            c = t.column_at(n + 1)
            if c is None:
                continue
            if c.type.upper().split("(")[0] not in DECODERS:
                self._warn_once(t, c)
                continue
            try:
                out.append((c.name, decode_value(c.type, raw, self.dictionary.charset(c))))
            except RedoError as exc:
                raise CaptureStop(f"{t.full_name}.{c.name}: {exc.message}") from exc
        return tuple(out)

    def _row(
        self, v: Vector, undo: V.Undo | None, rec: Record, xid: V.Xid | None, undoing: bool
    ) -> None:
        t = self.tables[(v.con_id, v.obj)]
        d = V.decode(v)
        if not isinstance(d, V.Redo):
            return
        row = d.row
        xid = d.xid or (undo.xid if undo else None) or xid
        if xid is None:
            return
        tx = self.open.setdefault(xid, _Open(rec.scn))
        if row.compressed:
            raise CaptureStop(
                f"{t.full_name}: a compressed row at SCN {rec.scn}: "
                "compressed segments are not supported"
            )
        rid = rowid(v.obj, v.dba, row.slot)
        if undoing:  # rollback to savepoint: the partner takes back the latest change to this row
            for i in range(len(tx.changes) - 1, -1, -1):
                if tx.changes[i].rowid == rid:
                    del tx.changes[i]
                    break
            return
        supp = undo.supp.columns if undo and undo.supp else ()
        before_cols = (undo.row.columns if undo and undo.row else ()) + supp
        name = row.name
        if name == "IRP":
            fb = row.fb or 0
            if not (fb & FB_F and fb & FB_L):
                self._piece(tx, t, v, row, rec, rid)
                return
            self._emit(tx, "INSERT", t, rec, rid, (), row.columns)
        elif name == "DRP":
            self._emit(tx, "DELETE", t, rec, rid, before_cols, ())
        elif name in ("URP", "ORP"):
            self._emit(tx, "UPDATE", t, rec, rid, before_cols, row.columns + supp)
        elif name == "QMI":
            for slot, cols in zip(row.slots, row.rows, strict=False):
                self._emit(tx, "INSERT", t, rec, rowid(v.obj, v.dba, slot), (), cols)
        elif name == "QMD":
            rows = undo.row.rows if undo and undo.row else ()
            for i, slot in enumerate(row.slots):
                self._emit(
                    tx,
                    "DELETE",
                    t,
                    rec,
                    rowid(v.obj, v.dba, slot),
                    rows[i] if i < len(rows) else (),
                    (),
                )

    def _piece(self, tx: _Open, t: Table, v: Vector, row: V.RowOp, rec: Record, rid: str) -> None:
        """A row inserted in several pieces: Oracle writes the last piece first and the head
        (F) last; the row is complete when both ends are in."""
        tx.pieces.append(
            V.RowChange(v.op, v.obj, v.con_id, None, row.fb, None, rid, row.columns, (), ())
        )
        fbs = [p.fb or 0 for p in tx.pieces]
        if any(f & FB_F for f in fbs) and any(f & FB_L for f in fbs):
            cols: list[tuple[int, bytes | None]] = []
            for p in reversed(tx.pieces):
                base = len(cols)
                cols += [(base + n, val) for n, val in p.after]
            head = tx.pieces[-1].rowid
            tx.pieces.clear()
            self._emit(tx, "INSERT", t, rec, head, (), tuple(cols))

    def _emit(
        self,
        tx: _Open,
        op: str,
        t: Table,
        rec: Record,
        rid: str,
        before: tuple[tuple[int, bytes | None], ...],
        after: tuple[tuple[int, bytes | None], ...],
    ) -> None:
        tx.changes.append(
            RowEvent(op, t, rec.scn, rec.rba, rid, self._values(t, before), self._values(t, after))
        )
