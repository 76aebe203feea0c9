"""A reference decoder: redo records -> row changes -> committed transactions.

This is the sequential, single-process statement of what capture must produce from our
redo (and from imported Oracle dumps): the Extract's Spark pipeline can be tested against
it. Rules, after seed 002 and ARCHITECTURE.md:

- row data comes from layer 11 (11.2 IRP, 11.3 DRP, 11.5 URP, 11.11 QMI, 11.12 QMD) and
  19.1 direct-load blocks; an array insert or a direct-load block is split per row; a row
  inserted in pieces (11.2s flagged L ... F, the head last) is one insert on the head;
- before images and key columns come from the 5.1 undo in the same record (its KDO row and
  its supplemental key columns); index (10.x) and cleanout (4.1) redo are ignored;
- a record with 5.6 (undo applied) is a compensation: the change it names (by UBA) is
  removed from the transaction (rollback to savepoint);
- 5.4 ends a transaction: commit emits it (in commit-SCN order), rollback discards it;
  transactions never ended (an instance crash) stay open: :attr:`Decoded.open`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from engine.embedded.dictionary import Dictionary, TableDef
from engine.embedded.errors import SourceError
from engine.extract.tasks import rowpieces
from engine.redo.codecs import Value
from engine.redo.framing import Rba
from engine.redo.ids import RowId, Uba, Xid, dba_block, dba_file
from engine.redo.model import (
    ChangeVector,
    Column,
    Commit,
    Ddl,
    DirectLoad,
    Kdo,
    RedoRecord,
    SessionInfo,
    SlotAlloc,
    Undo,
    UndoApplied,
)
from engine.redo.rowid import FB_F, FB_H, FB_L, FB_P, fb_value


@dataclass(frozen=True)
class RowChange:
    op: str  # INSERT, UPDATE, DELETE
    owner: str
    table: str
    rowid: RowId
    xid: Xid
    scn: int
    timestamp: datetime
    rba: Rba
    thread: int
    after: dict[str, Value]
    before: dict[str, Value]
    key: dict[str, Value]
    uba: Uba | None
    direct: bool = False


@dataclass
class Transaction:
    xid: Xid
    thread: int
    start_scn: int
    start_time: datetime
    changes: list[RowChange] = field(default_factory=list)
    username: str = ""
    commit_scn: int = 0
    commit_time: datetime | None = None
    rollback: bool = False
    ddl: list[Ddl] = field(default_factory=list)
    load_uba: Uba | None = None


@dataclass
class Decoded:
    committed: list[Transaction]
    rolled_back: list[Transaction]
    open: list[Transaction]


def _cols(table: TableDef, cols: Iterable[Column]) -> dict[str, Value]:
    out: dict[str, Value] = {}
    for c in cols:
        if c.no >= len(table.columns):
            raise SourceError(f"{table.qualified}: column {c.no} not in the dictionary")
        out[table.columns[c.no].name] = table.decode(c.no, c.data)
    return out


def _full_row(table: TableDef, cols: Iterable[Column]) -> dict[str, Value]:
    """A whole row image: columns missing at the end are NULL (Oracle drops trailing NULLs)."""
    values = _cols(table, cols)
    n = max((c.no for c in cols), default=-1) if isinstance(cols, tuple) else -1
    for col in table.columns[n + 1 :]:
        values.setdefault(col.name, None)
    return values


def _key(table: TableDef, *images: dict[str, Value]) -> dict[str, Value]:
    out: dict[str, Value] = {}
    for k in table.key_columns:
        for img in images:
            if k in img:
                out[k] = img[k]
                break
    return out


class Decoder:
    """Feed records in redo order (per thread; threads merged by SCN) with :meth:`feed`."""

    def __init__(self, dictionary: Dictionary) -> None:
        self.dictionary = dictionary
        self.txns: dict[Xid, Transaction] = {}
        self.committed: list[Transaction] = []
        self.rolled_back: list[Transaction] = []
        # a row inserted in pieces (last piece first): the pieces' columns until its head
        self._pieces: dict[Xid, list[tuple[int, tuple[Column, ...]]]] = {}
        # a chained row's update or delete (head first): its pieces until the one with the
        # supplemental L (engine/extract/tasks/rowpieces.py states the rules)
        self._changes: dict[Xid, list[tuple[RedoRecord, Kdo, Undo, Uba | None]]] = {}

    def _txn(self, xid: Xid, rec: RedoRecord) -> Transaction:
        t = self.txns.get(xid)
        if t is None:
            t = Transaction(xid, rec.thread, rec.scn, rec.timestamp)
            self.txns[xid] = t
        return t

    def feed(self, rec: RedoRecord) -> None:
        undo: Undo | None = None
        undo_uba: Uba | None = None
        xid: Xid | None = None
        for cv in rec.changes:
            body = cv.body
            if isinstance(body, Undo):
                undo, xid = body, body.xid
                undo_uba = Uba(cv.dba, body.seq, body.rec)
                t = self._txn(xid, rec)
                if body.opc == (5, 7):
                    t.load_uba = undo_uba
            elif isinstance(body, UndoApplied):
                t = self._txn(body.xid, rec)
                t.changes = [c for c in t.changes if c.uba != body.uba]
                return  # the rest of the record is the compensation itself
            elif isinstance(body, SlotAlloc):
                continue
            elif isinstance(body, SessionInfo):
                if xid is not None:
                    self._txn(xid, rec).username = body.username
            elif isinstance(body, Kdo) and cv.layer == 11:
                kx = body.ktb.xid if body.ktb.kind == "F" else xid
                if kx is None:
                    raise SourceError(f"row change without transaction at {rec.rba.dump()}")
                self._row(rec, cv, body, undo, undo_uba, self._txn(kx, rec))
            elif isinstance(body, DirectLoad):
                t = self._txn(body.xid, rec)
                self._load(rec, cv, body, t)
            elif isinstance(body, Commit):
                self._end(rec, cv, body)
            elif isinstance(body, Ddl):
                self._txn(body.xid, rec).ddl.append(body)
                if body.definition:
                    from json import loads

                    self.dictionary.add(TableDef.from_json(loads(body.definition)))
                elif f"{body.owner}.{body.name}" in self.dictionary.tables:
                    self.dictionary.remove(f"{body.owner}.{body.name}")

    def _table(self, cv: ChangeVector) -> TableDef:
        table = self.dictionary.by_obj(cv.obj)
        if table is None:
            raise SourceError(f"object {cv.obj} is not in the dictionary")
        return table

    def _emit(
        self,
        t: Transaction,
        rec: RedoRecord,
        table: TableDef,
        op: str,
        dba: int,
        slot: int,
        after: dict[str, Value],
        before: dict[str, Value],
        key: dict[str, Value],
        uba: Uba | None,
        direct: bool = False,
    ) -> None:
        rowid = RowId(table.dataobj, dba_file(dba), dba_block(dba), slot)
        t.changes.append(
            RowChange(
                op,
                table.owner,
                table.name,
                rowid,
                t.xid,
                rec.scn,
                rec.timestamp,
                rec.rba,
                rec.thread,
                after,
                before,
                key,
                uba,
                direct,
            )
        )

    def _row(
        self,
        rec: RedoRecord,
        cv: ChangeVector,
        k: Kdo,
        undo: Undo | None,
        uba: Uba | None,
        t: Transaction,
    ) -> None:
        table = self._table(cv)
        supp = _cols(table, undo.supplemental) if undo is not None else {}
        ukdo = undo.kdo if undo is not None else None
        if k.name in _PIECE_KINDS and undo is not None:
            flags = rowpieces.supp_flags(undo)
            if t.xid in self._changes or flags != rowpieces.WHOLE:
                self._change_piece(rec, table, k, undo, uba, t, flags)
                return
        if k.name == "IRP":
            columns = k.columns
            if fb_value(k.fb) & (FB_F | FB_L) != FB_F | FB_L:  # a chained row's piece
                pending = self._pieces.setdefault(t.xid, [])  # (no supplemental flags)
                pending.append((fb_value(k.fb), k.columns))
                if not fb_value(k.fb) & FB_F:
                    return  # the head (F) is logged last
                del self._pieces[t.xid]
                columns = _laid(reversed(pending))
            after = _full_row(table, columns)
            self._emit(t, rec, table, "INSERT", k.bdba, k.slot, after, {}, _key(table, after), uba)
        elif k.name == "QMI":
            for row in k.rows:
                after = _full_row(table, row.columns)
                self._emit(
                    t, rec, table, "INSERT", k.bdba, row.slot, after, {}, _key(table, after), uba
                )
        elif k.name == "DRP":
            before = (
                _full_row(table, ukdo.columns) if ukdo is not None and ukdo.name == "IRP" else {}
            )
            self._emit(
                t, rec, table, "DELETE", k.bdba, k.slot, {}, before, _key(table, supp, before), uba
            )
        elif k.name == "URP":
            after = _cols(table, k.columns)
            before = _cols(table, ukdo.columns) if ukdo is not None else {}
            self._emit(
                t,
                rec,
                table,
                "UPDATE",
                k.bdba,
                k.slot,
                after,
                before,
                _key(table, supp, before),
                uba,
            )
        elif k.name == "QMD":
            for slot in k.slots:
                self._emit(t, rec, table, "DELETE", k.bdba, slot, {}, {}, supp, uba)

    def _change_piece(
        self,
        rec: RedoRecord,
        table: TableDef,
        k: Kdo,
        undo: Undo,
        uba: Uba | None,
        t: Transaction,
        flags: int,
    ) -> None:
        """A piece of a row change in pieces, by the supplemental flags: held until its
        last (L), then one INSERT (all IRPs: a chained insert), DELETE (all DRPs) or UPDATE
        (a chained row's URPs, a migrated or re-chained row's IRPs, DRPs and ORP) on the
        head's ROWID, at the head's record; every piece's columns placed by the supplemental
        before / after, a cut column's parts joined in the row's order."""
        pending = self._changes.setdefault(t.xid, [])
        pending.append((rec, k, undo, uba))
        if not flags & FB_L:
            return
        del self._changes[t.xid]
        kinds = {kdo.name for _, kdo, _, _ in pending if kdo.name != "LKR"}
        head = next(
            (p for p in pending if _own_flags(p[1], p[2]) & FB_H), pending[0]
        )  # (an insert's and a migration's head is logged last, an update's first)
        rec, hk, _, uba = head
        bdba, slot = (hk.bdba, hk.slot)
        if kinds == {"IRP"}:
            cols = _laid([(fb_value(kdo.fb), kdo.columns) for _, kdo, _, _ in reversed(pending)])
            row = _full_row(table, cols)
            self._emit(t, rec, table, "INSERT", bdba, slot, row, {}, _key(table, row), uba)
            return
        before: dict[int, bytes | None] = {}
        after: dict[int, bytes | None] = {}
        supp: dict[str, Value] = {}
        undos = [(u.kdo, u.supp_before) for _, _, u, _ in pending if u.kdo is not None]
        for kdo, at in _in_row_order(undos):
            _joined(before, kdo.columns, at, rowpieces.row_flags(kdo))
        redos = [(kdo, u.supp_after) for _, kdo, u, _ in pending if kdo.name in _AFTER_KINDS]
        for kdo, at in _in_row_order(redos):
            _joined(after, kdo.columns, at, rowpieces.row_flags(kdo))
        for _, _, u, _ in pending:
            supp.update(_cols(table, u.supplemental))
        b = _cols(table, (Column(i, v) for i, v in before.items()))
        key = _key(table, supp, b)
        if kinds == {"DRP"}:
            full = _full_row(table, (Column(i, v) for i, v in sorted(before.items())))
            self._emit(t, rec, table, "DELETE", bdba, slot, {}, full, key, uba)
            return
        a = _cols(table, (Column(i, v) for i, v in after.items()))
        self._emit(t, rec, table, "UPDATE", bdba, slot, a, b, key, uba)

    def _load(self, rec: RedoRecord, cv: ChangeVector, d: DirectLoad, t: Transaction) -> None:
        """Rows of a direct-load block; their block is the change's DBA (the block header's
        own ``bdba`` in Oracle's dump may name the segment header instead)."""
        table = self._table(cv)
        for row in d.rows:
            after = _full_row(table, row.columns)
            self._emit(
                t,
                rec,
                table,
                "INSERT",
                cv.dba,
                row.slot,
                after,
                {},
                _key(table, after),
                t.load_uba,
                direct=True,
            )

    def _end(self, rec: RedoRecord, cv: ChangeVector, c: Commit) -> None:
        """5.4 names slot and sequence; the undo segment (usn) is the one whose header
        block class the change has: class 15 + 2 * usn (seed 002: CLS:23 is usn 4)."""
        usn = (cv.cls - 15) // 2 if cv.cls >= 17 and cv.cls % 2 else None
        match = [
            x
            for x in self.txns
            if x.slot == c.slt and x.sqn == c.sqn and (usn is None or x.usn == usn)
        ]
        if not match:
            return  # a transaction that began before the redo we read
        t = self.txns.pop(match[0])
        t.commit_scn = rec.scn
        t.commit_time = rec.timestamp
        if c.rollback:
            t.rollback = True
            self.rolled_back.append(t)
        else:
            self.committed.append(t)

    def result(self) -> Decoded:
        return Decoded(
            sorted(self.committed, key=lambda t: t.commit_scn),
            self.rolled_back,
            list(self.txns.values()),
        )


def merge_threads(records: Iterable[RedoRecord]) -> list[RedoRecord]:
    """Records of all threads in SCN order (stable: within a thread, log order)."""
    return sorted(records, key=lambda r: r.scn)


def decode(records: Iterable[RedoRecord], dictionary: Dictionary) -> Decoded:
    dec = Decoder(dictionary)
    for rec in merge_threads(records):
        dec.feed(rec)
    return dec.result()


def replay(transactions: Iterable[Transaction]) -> dict[str, dict[RowId, dict[str, Any]]]:
    """Apply committed transactions in order, by ROWID: ``{table: {rowid: row}}``."""
    tables: dict[str, dict[RowId, dict[str, Any]]] = {}
    for t in transactions:
        for c in t.changes:
            rows = tables.setdefault(f"{c.owner}.{c.table}", {})
            if c.op == "INSERT":
                rows[c.rowid] = dict(c.after)
            elif c.op == "UPDATE":
                rows[c.rowid].update(c.after)
            else:
                rows.pop(c.rowid, None)
    return tables


def _joined(image: dict[int, bytes | None], cols: tuple[Column, ...], at: int, fb: int) -> None:
    """A piece's columns, placed by ``at``, into ``image`` (pieces head first): its column
    0, when its row flags ``fb`` say P, is the image's column of that number continued
    (bytes appended)."""
    cut = bool(fb & FB_P)
    for c, (n, v) in zip(cols, rowpieces.placed(cols, at).items(), strict=True):
        if cut and c.no == 0 and n in image:
            v = (image[n] or b"") + (v or b"")
        image[n] = v


#: the redo operations whose records may be a piece of a row change (supplemental flags)
_PIECE_KINDS = frozenset({*rowpieces.CODES, "IRP", "ORP"})
#: of those, the ones whose redo holds the row's new values
_AFTER_KINDS = frozenset({"URP", "IRP", "ORP"})


def _own_flags(kdo: Kdo, undo: Undo) -> int:
    """A piece's own row flags: its redo's, a DRP's (which has none) its undo's."""
    if kdo.name == "DRP" and undo.kdo is not None:
        return rowpieces.row_flags(undo.kdo)
    return rowpieces.row_flags(kdo) if kdo.name in _AFTER_KINDS else 0


def _laid(pieces: Iterable[tuple[int, tuple[Column, ...]]]) -> tuple[Column, ...]:
    """Pieces' columns (each numbered from its first; with its row flags), head first,
    laid end to end: a piece's first column continues the one before when its flags say
    P."""
    bound: list[Column] = []
    for fb, piece in pieces:
        cols = list(piece)
        if fb & FB_P and cols and bound:  # its first column continues the last
            tail = bound.pop()
            cols[0] = Column(0, (tail.data or b"") + (cols[0].data or b""))
        base = len(bound)
        bound += [Column(base + c.no, c.data) for c in cols]
    return tuple(bound)


def _in_row_order(kdos: list[tuple[Kdo, int]]) -> list[tuple[Kdo, int]]:
    """One image's pieces (each with its supplemental column number) in the row's order:
    from the head (H) along the next-piece addresses (a migrated or re-chained row's pieces
    are logged last first), the others after, as logged (an update's URPs, head first)."""
    head = next((x for x in kdos if rowpieces.row_flags(x[0]) & FB_H and x[0].nrid), None)
    if head is None:
        return kdos
    at = {(k.bdba, k.slot): (k, n) for k, n in kdos}
    out = [head]
    while out[-1][0].nrid in at and at[out[-1][0].nrid] not in out:
        out.append(at[out[-1][0].nrid])
    return out + [x for x in kdos if x not in out]
