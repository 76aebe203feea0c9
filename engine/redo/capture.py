"""Committed transactions of captured tables, assembled from Oracle redo records.

Two layers: :class:`Miner` turns each record into transaction events in log order (begin,
session, row, undo of a row, end), the stream a transaction cache consumes (the Extract's,
through engine/extract/oracle_source.py); :class:`Capture` assembles them itself: feed
records in log order (:meth:`Capture.feed`); each 5.4 commit gives back the
transaction it ends, with its row changes in redo order, typed by the dictionary. Rolled-back
transactions are dropped; a 5.6 / 5.11 (undo applied: rollback to a savepoint) with its
level-11 partner takes back the latest change of that transaction to the row it names.
A row in several pieces (chained, migrated, or its supplemental data split over records)
is bound into one row change by the rules of engine/redo/pieces.py: the miner keeps an open
change's pieces per transaction (:attr:`MinerState.pieces`, frozen values) and emits the
change at its last piece; never half (a commit with one open stops, a rollback drops it).
A 19.1 direct-path block of a captured table gives an insert per row, in the transaction of
the record's 5.1 / 5.2, else the loader's its block's first ITL entry names (one with
neither is not attributed: not captured).
Only vectors of captured tables (and the transaction layer) are decoded, so what the
database does elsewhere is read but never an error.

Stops (:class:`CaptureStop`, with table and SCN): a change to a captured table's dictionary
rows (SYS.COL$, SYS.OBJ$, SYS.TAB$ rows whose OBJ# is the table's) or a DDL marker (24.1)
naming it, after the dictionary's SCN; a compressed row of a captured table. Columns of
types we do not decode (LOBs, LONG, XMLTYPE, JSON, objects) are reported once per table
and column by ``warn`` and left out.
The commit SCN is the SCN of the log writer write (LWN) holding the 5.4 (docs/redo_format.md).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from engine._native import load as load_native
from engine.redo import pieces as P
from engine.redo import vectors as V
from engine.redo.dictionary import Column, Dictionary, Table
from engine.redo.errors import RedoError
from engine.redo.framing import Rba, Record, Vector
from engine.redo.frozen import quick_init
from engine.redo.rowid import FB_F, FB_H, FB_L, fb_text, rowid
from engine.redo.values import DECODERS, Value, decode_value

DICTIONARY_TABLES = ("SYS.COL$", "SYS.OBJ$", "SYS.TAB$")
VALUES_KEPT = 4096  # decoded values kept per column (and ROWID heads), then forgotten
#: The C NUMBER text (engine/_native/redomine.c, the Extract's), when built: a NUMBER's value
#: read from it (:func:`number`)
_NATIVE = load_native("redomine")
NUMBER_TYPES = frozenset({"NUMBER", "FLOAT", "INTEGER"})
ROWID_HEAD = 15  # an extended ROWID's data object, file and block characters (OOOOOOFFFBBBBBB)
_ANY_OBJECT = (-1, -1)  # a 5.6 / 5.11 whose undo header names no object


class CaptureStop(RedoError):
    default_code = "OGG-01433"


@quick_init
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


@quick_init
@dataclass(frozen=True)
class TxBegin:
    xid: V.Xid
    scn: int


@quick_init
@dataclass(frozen=True)
class TxSession:
    xid: V.Xid
    user: str
    name: str


@quick_init
@dataclass(frozen=True)
class TxRow:
    xid: V.Xid
    row: RowEvent
    ref: str  # names this change for a TxUndo
    #: the ROWIDs of the row's other pieces that carry data (a row in several pieces), in
    #: log order; instance recovery keeps a chained row's pieces from them
    pieces: tuple[str, ...] = ()


@quick_init
@dataclass(frozen=True)
class TxUndo:
    xid: V.Xid
    ref: str


@quick_init
@dataclass(frozen=True)
class TxEnd:
    xid: V.Xid
    rollback: bool
    commit_scn: int
    time: int  # redo time of the LWN


TxEvent = TxBegin | TxSession | TxRow | TxUndo | TxEnd


@dataclass(frozen=True)
class MinerState:
    """What a :class:`Miner` carries between records (:meth:`Miner.state`)."""

    live: dict[tuple[V.Xid, str], list[str]] = field(default_factory=dict)
    pieces: dict[V.Xid, list[P.Piece]] = field(default_factory=dict)


class Miner:
    """Records to transaction events. Only vectors of captured tables (and the transaction
    layer, and the dictionary's own tables for structure changes) are decoded."""

    def __init__(
        self,
        dictionary: Dictionary,
        captured: Callable[[Table], bool],
        warn: Callable[[str], None] = lambda _m: None,
        *,
        befores: bool = True,
    ) -> None:
        self.dictionary = dictionary
        self.warn = warn
        #: whether row events carry their before images (False: ``before`` is empty, for a
        #: reader that needs only what the change sets: instance recovery's roll forward)
        self.befores = befores
        self.tables = {k: t for k, t in dictionary.by_data_obj().items() if captured(t)}
        self.captured_objs = {(t.con_id, t.obj): t for t in self.tables.values()}
        self.dict_tables = {  # data objects (clusters too) of the dictionary's own tables
            (t.con_id, d)
            for t in dictionary.tables
            if t.full_name in DICTIONARY_TABLES
            for d in t.data_objs
        }
        self.lwn_scn = 0
        self.lwn_time = 0
        self.records = 0
        self._warned: set[tuple[str, str]] = set()
        self._made = 0  # changes named so far in the record being fed
        self._live: dict[tuple[V.Xid, str], list[str]] = {}  # refs of a row's changes, newest last
        self._pieces: dict[V.Xid, list[P.Piece]] = {}  # an open row change's pieces
        #: the transactions (id texts) of savepoint rollbacks (a 5.6 / 5.11's level-11
        #: partner) that found no change of their row to take back: mined from no state (a
        #: Spark task), that change may lie in redo read before (engine/extract/oracle_source.py)
        self.missed: set[str] = set()
        #: by table and segment position: the column, its character set (None: a type not
        #: decoded) and the values decoded so far (:data:`VALUES_KEPT` at most)
        self._columns: dict[
            str, dict[int, tuple[Column, str | None, dict[bytes, Value], bool]]
        ] = {}
        self._rba: tuple[Rba, str] | None = None  # the last record's RBA and its dump text
        self._heads: dict[tuple[int, int], str] = {}  # ROWID heads by (data object, dba)
        self._tails: dict[int, str] = {}  # and their slot parts by slot
        for t in self.tables.values():
            for c in t.columns:
                if not _decoded(c):
                    self._warn_once(t, c)

    def _user(self, con_id: int, user: str) -> str:
        """A 5.20's user, named as TRANLOGOPTIONS EXCLUDEUSER names it: ``PDB.USER`` in a
        container the dictionary names, the bare name elsewhere (a non-CDB)."""
        container = self.dictionary.containers.get(con_id)
        return f"{container}.{user}" if container else user

    def _warn_once(self, t: Table, c: Column) -> None:
        if (t.full_name, c.name) not in self._warned:
            self._warned.add((t.full_name, c.name))
            self.warn(
                f"OGG-01431: column {c.name} of {t.full_name} has type {c.type}, not captured"
            )

    def state(self) -> MinerState:
        """What this miner carries from one record to the next (open transactions' row
        pieces and the changes a savepoint rollback may take back), as a copy."""
        return MinerState(
            {k: list(v) for k, v in self._live.items()},
            {k: list(v) for k, v in self._pieces.items()},
        )

    def restore(self, state: MinerState) -> None:
        """Go on from ``state`` (:meth:`state`), as a copy."""
        self._live = {k: list(v) for k, v in state.live.items()}
        self._pieces = {k: list(v) for k, v in state.pieces.items()}

    def seed(self, changes: Iterable[tuple[str, str, str]]) -> None:
        """Changes read before a restart, as (transaction id text, ROWID, ref): Bounded
        Recovery restored them, so a savepoint rollback after the restart can take them
        back."""
        for xid, rid, ref in changes:
            usn, slt, sqn = (int(x) for x in xid.split("."))
            live = self._live.setdefault((V.Xid(usn, slt, sqn), rid), [])
            if ref not in live:
                live.append(ref)

    def forget(self, xids: Iterable[str]) -> None:
        """Transactions (their id texts) that ended in redo another miner read (the task
        miner's fast path: engine/extract/oracle_source.py)."""
        gone = set()
        for x in xids:
            usn, slt, sqn = (int(p) for p in x.split("."))
            gone.add(V.Xid(usn, slt, sqn))
        if gone:
            for xid in gone:
                self._pieces.pop(xid, None)
            self._live = {k: v for k, v in self._live.items() if k[0] not in gone}

    def _ref(self, rec: Record) -> str:
        """A name for the next change of ``rec``: its RBA and its place in the record, the
        same whenever the record is read (a restart, a batch mined again)."""
        self._made += 1
        rba = self._rba
        if rba is None or rba[0] is not rec.rba:
            rba = self._rba = (rec.rba, rec.rba.dump())
        return f"{rba[1]}#{self._made}"

    def feed(self, rec: Record) -> list[TxEvent]:
        self.records += 1
        self._made = 0
        if rec.lwn:
            self.lwn_scn, self.lwn_time = rec.lwn.scn, rec.lwn.time
        out: list[TxEvent] = []
        xid: V.Xid | None = None
        undo: V.Undo | None = None
        undone: tuple[int, int] | None = None  # (con, data obj) of a 5.6 / 5.11
        for v in rec.vectors:
            op = v.op
            if op == "5.2":
                b = V.decode(v)
                assert isinstance(b, V.Begin)
                xid = b.xid
                out.append(TxBegin(xid, rec.scn))
            elif op == "5.1":
                uxid, _objn, objd, opc = V.undo_ids(v)
                xid = uxid or xid
                undo = None
                undone = None  # a new change: not the partner of a 5.6 / 5.11 before it
                if opc == "11.1" and (
                    (v.con_id, objd) in self.tables or (v.con_id, objd) in self.dict_tables
                ):
                    d = V.decode(v)
                    assert isinstance(d, V.Undo)
                    undo = d
            elif op in ("5.6", "5.11"):
                ux, _objn, objd, _opc = V.undo_ids(v)
                # its undo header names the object (one that names none, 0, applies to the
                # level-11 partner that follows it); the embedded database's writer names the
                # transaction after the header, in a field Oracle's (ktuxvoff) is too short to
                # be read as (layout ours: docs/redo_format.md)
                undone = (v.con_id, objd) if objd else _ANY_OBJECT
                xid = ux or _applied_xid(v) or xid
            elif op == "5.20":
                s = V.decode(v)
                assert isinstance(s, V.Session)
                if xid and s.user:
                    out.append(TxSession(xid, self._user(v.con_id, s.user), s.transaction_name))
            elif op == "5.4":
                e = V.decode(v)
                assert isinstance(e, V.End)
                if not e.rollback:
                    self._unbound(e.xid, rec)
                self._forget(e.xid)
                out.append(TxEnd(e.xid, e.rollback, self.lwn_scn or rec.scn, self.lwn_time))
            elif op == "24.1":
                self._ddl_marker(v, rec)
            elif op == "19.1" and (v.con_id, v.obj) in self.tables:
                out += self._direct(v, rec, xid)
            elif v.layer == 11:
                key = (v.con_id, v.obj)
                if key in self.dict_tables:
                    self._dictionary_change(v, undo, rec)
                elif key in self.tables:
                    out += self._row(v, undo, rec, xid, undone in (key, _ANY_OBJECT))
                undo = None
                undone = None
        return out

    def _unbound(self, xid: V.Xid, rec: Record) -> None:
        """A commit with a row change in pieces still open: never emitted half, a stop."""
        open_ = [p for p in self._pieces.get(xid, ()) if p.carries]
        if open_:
            p = open_[0]
            t = self.tables.get((p.con_id, p.obj))
            raise CaptureStop(
                f"transaction {xid.text()} committed at SCN {rec.scn} with a row change of "
                f"{t.full_name if t else p.obj} in pieces not bound (its first piece at RBA "
                f"{p.rba.dump()}): not captured half"
            )

    def _forget(self, xid: V.Xid) -> None:
        self._pieces.pop(xid, None)
        for k in [k for k in self._live if k[0] == xid]:
            del self._live[k]

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

    def _ddl_marker(self, v: Vector, rec: Record) -> None:
        """24.1, the marker of a DDL statement: one on a captured table (the object of its
        vector header, or the one its body names: in Oracle's layout as OpenLogReplicator
        reads it, field 12, unless its DDL type is a temporary object's; or in ours,
        docs/redo_format.md) after the
        dictionary's SCN stops capture, as a change of its dictionary rows does (a TRUNCATE
        too: it gives the table a new data object)."""
        if rec.scn <= self.dictionary.scn:
            return
        objs = [v.obj]
        body = v.fields[0] if v.fields else b""
        if len(v.fields) > V.ORACLE_DDL_OBJ_FIELD and len(body) >= V.ORACLE_DDL_SIZE:
            off, fmt = V.ORACLE_DDL_AT["type"]  # Oracle's layout (vectors.ORACLE_DDL_AT)
            if struct.unpack_from(v.order + fmt, body, off)[0] in V.ORACLE_DDL_TEMPORARY:
                return
            named = v.fields[V.ORACLE_DDL_OBJ_FIELD]
            off, fmt = V.ORACLE_DDL_OBJ_AT
            if len(named) >= off + struct.calcsize(fmt):
                objs.append(struct.unpack_from(v.order + fmt, named, off)[0])
        elif len(body) >= V.DDL_SIZE:
            off, fmt = V.DDL_AT["obj"]
            objs.append(struct.unpack_from(v.order + fmt, body, off)[0])
        for o in objs:
            t = self.captured_objs.get((v.con_id, o)) or self.tables.get((v.con_id, o))
            if t is not None:
                raise CaptureStop(
                    f"a DDL statement on {t.full_name} at SCN {rec.scn} "
                    f"(RBA {rec.rba.dump()}): its structure may have changed: "
                    f"take a new dictionary from that SCN and restart the Extract after it"
                )

    def _values(
        self, t: Table, cols: tuple[tuple[int, bytes | None], ...]
    ) -> tuple[tuple[str, Value], ...]:
        out: list[tuple[str, Value]] = []
        at = self._columns.get(t.full_name)
        if at is None:  # by segment position: the column, and its character set if decoded
            at = self._columns[t.full_name] = {
                c.seg_col - 1: (
                    c,
                    self.dictionary.charset(c) if _decoded(c) else None,
                    {},
                    _base(c) in NUMBER_TYPES,
                )
                for c in t.columns
            }
        for n, raw in cols:
            got = at.get(n)
            if got is None:
                continue
            c, charset, seen, numeric = got
            if charset is None:
                self._warn_once(t, c)
                continue
            if not raw:
                out.append((c.name, None))
                continue
            value = seen.get(raw)
            if value is None:
                try:
                    value = number(raw) if numeric else None
                    if value is None:
                        value = decode_value(c.type, raw, charset)
                except RedoError as exc:
                    raise CaptureStop(f"{t.full_name}.{c.name}: {exc.message}") from exc
                if len(seen) >= VALUES_KEPT:
                    seen.clear()
                seen[raw] = value
            out.append((c.name, value))
        return tuple(out)

    def _rowid(self, obj: int, dba: int, slot: int) -> str:
        """:func:`engine.redo.rowid.rowid`, its data object, file and block part kept."""
        head = self._heads.get((obj, dba))
        if head is None:
            if len(self._heads) >= VALUES_KEPT:
                self._heads.clear()
            head = self._heads[(obj, dba)] = rowid(obj, dba, 0)[:ROWID_HEAD]
        tail = self._tails.get(slot)
        if tail is None:
            tail = self._tails[slot] = rowid(0, 0, slot)[ROWID_HEAD:]
        return head + tail

    def _row(
        self, v: Vector, undo: V.Undo | None, rec: Record, xid: V.Xid | None, undoing: bool
    ) -> list[TxEvent]:
        t = self.tables[(v.con_id, v.obj)]
        d = V.decode(v)
        if not isinstance(d, V.Redo):
            if v.op in V.UNDECODED_ROW_OPS:  # rows changed that cannot be read: never lose them
                raise CaptureStop(
                    f"{t.full_name}: {V.UNDECODED_ROW_OPS[v.op]} ({v.op}) at SCN {rec.scn} "
                    f"(RBA {rec.rba.dump()}): not supported"
                )
            return []
        row = d.row
        # the undo's transaction first: a KTB's xid (op F) is not always the transaction's
        # (oracdc's 19c DRP and LKR records carry others)
        xid = (undo.xid if undo else None) or d.xid or xid
        if xid is None:
            return []
        if row.compressed:
            raise CaptureStop(
                f"{t.full_name}: a compressed row at SCN {rec.scn}: "
                "compressed segments are not supported"
            )
        rid = self._rowid(v.obj, v.dba, row.slot)
        if undoing:  # rollback to savepoint: the partner takes back the latest change to this row
            self._pieces.pop(xid, None)  # (a statement undone partway: its pieces go with it)
            live = self._live.get((xid, rid))
            if not live:
                self.missed.add(xid.text())
                return []
            return [TxUndo(xid, live.pop())]
        out: list[TxEvent] = []

        def emit(
            op: str,
            r: str,
            before: tuple[tuple[int, bytes | None], ...],
            after: tuple[tuple[int, bytes | None], ...],
            at: tuple[int, Rba] = (rec.scn, rec.rba),
            rows: tuple[str, ...] = (),
        ) -> None:
            ref = self._ref(rec)
            for each in (r, *rows):  # a savepoint rollback's partner of any piece takes it back
                live = self._live.setdefault((xid, each), [])
                if ref not in live:  # (a record read again after a restart: the same name)
                    live.append(ref)
            bvals = self._values(t, before) if self.befores else ()
            ev = RowEvent(op, t, at[0], at[1], r, bvals, self._values(t, after))
            out.append(TxRow(xid, ev, ref, rows))

        name = row.name
        if name == "QMI":
            for slot, cols in zip(row.slots, row.rows, strict=False):
                emit("INSERT", self._rowid(v.obj, v.dba, slot), (), cols)
            return out
        if name == "QMD":
            rows = undo.row.rows if undo and undo.row else ()
            for i, slot in enumerate(row.slots):
                emit(
                    "DELETE", self._rowid(v.obj, v.dba, slot), rows[i] if i < len(rows) else (), ()
                )
            return out
        if name not in _PIECE_OPS:
            return out
        piece = row_piece(v, row, undo, rec, rid)
        if self._deferred(v, undo, rec, xid, piece, out):
            return out
        pend = self._pieces.get(xid)
        if pend and not any(q.carries for q in pend) and P.ends(piece)[0]:
            pend = None  # (a lock that opened nothing: replaced)
        if not pend:
            first, last = P.ends(piece, open_=False)
            if first and last:
                self._pieces.pop(xid, None)
                self._whole(name, piece, undo, rid, row, emit)
            elif P.starts(piece):
                self._pieces[xid] = [piece]
            return out
        if P.clashes(pend, piece):
            raise CaptureStop(
                f"{t.full_name}: a row change in pieces at RBA {rec.rba.dump()} (SCN {rec.scn}) "
                f"begins before the one begun at RBA {pend[0].rba.dump()} ended"
            )
        pend.append(piece)
        try:
            b = P.bind(pend)
        except P.Unplaced as exc:
            raise CaptureStop(f"{t.full_name}: {exc} at SCN {rec.scn}") from exc
        if b is not None:
            del self._pieces[xid]
            pieces = tuple(
                dict.fromkeys(p.rowid for p in pend if p.kind in P.DATA_OPS and p.rowid != b.rowid)
            )
            emit(b.op, b.rowid, b.before, b.after, (b.scn, b.rba), pieces)
        return out

    def _deferred(
        self,
        v: Vector,
        undo: V.Undo | None,
        rec: Record,
        xid: V.Xid,
        piece: P.Piece,
        out: list[TxEvent],
    ) -> bool:
        """Whether a row piece of ``xid`` (a row change in one record or a piece of one) is
        left for later instead of bound here: never here; a miner of a range mined alone,
        from no state, leaves those of a transaction whose open pieces it cannot know
        (engine/extract/oracle_source.py)."""
        return False

    @staticmethod
    def _whole(
        name: str,
        piece: P.Piece,
        undo: V.Undo | None,
        rid: str,
        row: V.RowOp,
        emit: Callable[..., None],
    ) -> None:
        """A row change in one record."""
        supp = undo.supp.columns if undo and undo.supp else ()
        before_cols = (undo.row.columns if undo and undo.row else ()) + supp
        if name == "IRP":
            emit("INSERT", rid, (), row.columns)
        elif name == "DRP":
            emit("DELETE", rid, before_cols, ())
        elif name in ("URP", "ORP"):
            # the supplemental columns (the key as it was) complete the after image where
            # the change does not set them: a key update's new value is the redo's
            changed = {n for n, _ in row.columns}
            emit(
                "UPDATE",
                rid,
                before_cols,
                row.columns + tuple(c for c in supp if c[0] not in changed),
            )
        # (a whole LMN, CFA or LKR changes no value: nothing)

    def _direct(self, v: Vector, rec: Record, xid: V.Xid | None) -> list[TxEvent]:
        """19.1: a block written by a direct-path load; each of its rows an insert, in the
        transaction of the record's 5.1 / 5.2, else the loader's the block's first ITL
        entry names (a block in a record of its own: the embedded database's writer logs
        them so, after the load's 5.1), as the Extract's task miner attributes them."""
        t = self.tables[(v.con_id, v.obj)]
        d = V.decode(v)
        if not isinstance(d, V.DirectLoad):
            return []
        xid = xid or d.xid
        if xid is None:
            return []  # (no transaction to put the rows in: not captured)
        out: list[TxEvent] = []
        for slot, fb, cols in d.rows:
            if fb & (FB_F | FB_L) != FB_F | FB_L:  # (a piece: its row's other pieces elsewhere)
                raise CaptureStop(
                    f"{t.full_name}: a row in pieces ({fb_text(fb)}) in a direct-path load at "
                    f"SCN {rec.scn} (RBA {rec.rba.dump()}): not supported"
                )
            r = self._rowid(v.obj, v.dba, slot)
            ev = RowEvent("INSERT", t, rec.scn, rec.rba, r, (), self._values(t, cols))
            out.append(TxRow(xid, ev, self._ref(rec)))
        return out


_PIECE_OPS = frozenset({"IRP", "DRP", "URP", "ORP", "LMN", "CFA", "LKR"})


def row_piece(v: Vector, row: V.RowOp, undo: V.Undo | None, rec: Record, rid: str) -> P.Piece:
    """A record's part of a row change (engine/redo/pieces.py), its columns placed where the
    supplemental header's column numbers (or the head flag) say where."""
    urow = undo.row if undo else None
    supp = undo.supp if undo else None
    name = row.name
    if name in ("IRP", "ORP", "URP") and row.fb is not None:
        fb = row.fb
    else:  # (a DRP's redo carries no flags; an LMN's, a CFA's, an LKR's none)
        fb = urow.fb if urow is not None and urow.fb is not None else 0
    head_piece = bool(fb & FB_H or (urow is not None and (urow.fb or 0) & FB_H))
    placed = True

    def place(
        cols: tuple[tuple[int, bytes | None], ...], start: int, urp: bool
    ) -> tuple[tuple[int, bytes | None], ...]:
        nonlocal placed
        if not cols:
            return cols
        off = P.offset(start, cols[0][0], urp)
        if off is None:
            if not head_piece:
                placed = False
            return cols
        return tuple((n + off, val) for n, val in cols) if off else cols

    before = place(urow.columns if urow else (), supp.before if supp else 0,
                   urow is not None and urow.name == "URP")  # fmt: skip
    after = place(row.columns, supp.after if supp else 0, name == "URP")
    head = rowid(v.obj, supp.bdba, supp.slot or 0) if supp and supp.bdba else None
    ufb = (urow.fb or 0) if urow is not None else 0
    if name == "URP":  # (a P of its piece's first column: only if the URP sets that one)
        fb = P.urp_flags(fb, row.columns[0][0] if row.columns else None)
    if urow is not None and urow.name == "URP":
        ufb = P.urp_flags(ufb, urow.columns[0][0] if urow.columns else None)
    return P.Piece(
        name, v.con_id, v.obj, rec.rba, rec.scn, rid, head, fb,
        supp.fb if supp else None, before, after, supp.columns if supp else (), placed,
        ufb,
    )  # fmt: skip


def _applied_xid(v: Vector) -> V.Xid | None:
    """The transaction a 5.6 / 5.11 of the embedded database's writer names in its field 1
    (:data:`engine.redo.vectors.UNDO_APPLIED_AT`), None when it has none."""
    f = v.fields[1] if len(v.fields) > 1 else b""
    if len(f) < V.UNDO_APPLIED_SIZE:
        return None
    at = V.UNDO_APPLIED_AT
    usn, slt, sqn = (
        struct.unpack_from(v.order + at[k][1], f, at[k][0])[0] for k in ("usn", "slt", "sqn")
    )
    return V.Xid(usn, slt, sqn) if (usn, slt, sqn) != (0, 0, 0) else None


def _decoded(c: Column) -> bool:
    """Whether values of ``c``'s type are decoded (the others are warned and left out)."""
    return c.type.upper().split("(")[0] in DECODERS


def _base(c: Column) -> str:
    return c.type.upper().split("(")[0].strip()


def number(raw: bytes) -> Decimal | None:
    """A NUMBER's value from the C kernel's text of it, the same Decimal as
    :func:`engine.redo.codecs.decode_number` gives (tests/redo/test_capture.py holds the two
    equal); None where the kernel is not built or leaves the value to Python (a bad or
    unusual encoding: ``decode_value`` then reads it, and says what is wrong)."""
    if _NATIVE is None:
        return None
    text = _NATIVE.number_text(raw)
    return Decimal(text) if text is not None else None


@dataclass
class _Open:
    begin_scn: int
    user: str = ""
    changes: list[tuple[str, RowEvent]] = field(default_factory=list)


class Capture:
    """The events of a :class:`Miner` assembled into committed transactions."""

    def __init__(
        self,
        dictionary: Dictionary,
        captured: Callable[[Table], bool],
        warn: Callable[[str], None] = lambda _m: None,
    ) -> None:
        self.miner = Miner(dictionary, captured, warn)
        self.open: dict[V.Xid, _Open] = {}

    @property
    def records(self) -> int:
        return self.miner.records

    def feed(self, rec: Record) -> list[Transaction]:
        done: list[Transaction] = []
        for ev in self.miner.feed(rec):
            if isinstance(ev, TxBegin):
                self.open.setdefault(ev.xid, _Open(ev.scn))
            elif isinstance(ev, TxSession):
                if ev.xid in self.open:
                    self.open[ev.xid].user = ev.user
            elif isinstance(ev, TxRow):
                self.open.setdefault(ev.xid, _Open(ev.row.scn)).changes.append((ev.ref, ev.row))
            elif isinstance(ev, TxUndo):
                tx = self.open.get(ev.xid)
                if tx:
                    tx.changes = [(r, c) for r, c in tx.changes if r != ev.ref]
            else:
                t = self.open.pop(ev.xid, None)
                if t is not None and not ev.rollback and t.changes:
                    changes = tuple(c for _r, c in t.changes)
                    done.append(
                        Transaction(ev.xid, t.begin_scn, ev.commit_scn, ev.time, t.user, changes)
                    )
        return done
