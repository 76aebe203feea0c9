"""Redo records to logical change records (the Extract's "log miner").

Pure and picklable: :class:`Decoder` is built on the driver (dictionary + TABLE selection)
and shipped to Spark tasks, where :meth:`Decoder.decode` runs over the records of a byte
range of one log. Seed 002's rules:

- transaction control: 5.2 begins, 5.4 commits or rolls back, 5.20 names the user and the
  transaction, 5.6 marks an undo applied (a rollback to savepoint cancels that change);
- rows: 11.2 IRP insert (all columns), 11.3 DRP delete (key only), 11.5 URP update (key
  plus changed columns, "FieldComp"; a changed key makes a key update with the before
  key), 11.11 QMI array insert and 19.1 direct load (one record per row), 11.12 QMD
  multi-row delete (one record per row);
- before images (GETUPDATEBEFORES, per TABLE): the undo (5.1) of an update holds the old
  values of its changed columns and the key; they are written as a before-image record
  (BeforeAfter B) ahead of the update, or with UPDATERECORDFORMAT FULL / COMPACT in one
  GGSUnifiedUpdate record (:meth:`Decoder._update`; docs/extract.md, "Before images");
- not extracted: undo (5.1, used only for before images), index redo (10.x),
  block cleanouts (4.1);
- every transaction opens at its 5.2, whether or not it touches a captured table, so it
  is cached from its first change as GoldenGate does; rows of other tables yield nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Context, Decimal

from engine.changes import Kind, Lcr, Position
from engine.embedded.dictionary import Dictionary, TableDef
from engine.redo.ids import RowId, Uba, Xid
from engine.redo.model import (
    ChangeVector,
    Commit,
    Ddl,
    DirectLoad,
    Kdo,
    LocatedRecord,
    SessionInfo,
    SlotAlloc,
    Undo,
    UndoApplied,
)
from engine.trail.layout import BEFORE_IMAGE, IOType
from engine.trail.model import Columns, datetime_to_micros

_WIDE = Context(prec=200)

#: Undo header class of undo segment ``usn`` is 15 + 2 * usn (seed 002: class 27 is usn 6).
UNDO_HEADER_CLASS_BASE = 15


def usn_of_class(cls: int) -> int:
    return (cls - UNDO_HEADER_CLASS_BASE) // 2


def text_of(type_name: str, value: object) -> str | None:
    """A column value as the trail carries it (text, GoldenGate's formats)."""
    if value is None:
        return None
    if isinstance(value, Decimal):
        # NUMBER holds 40 digits and exponents to 1E+125: wider than Decimal's default
        # context, which would round (or refuse) them.
        if value == value.to_integral_value():
            return str(value.quantize(Decimal(1), context=_WIDE))
        return format(value.normalize(_WIDE), "f")
    if isinstance(value, datetime):
        if type_name.upper().startswith("TIMESTAMP"):
            return value.strftime("%Y-%m-%d:%H:%M:%S.%f") + "000"
        return value.strftime("%Y-%m-%d:%H:%M:%S")
    if isinstance(value, bytes):
        return value.hex().upper()
    return str(value)


def uba_key(uba: Uba) -> str:
    return f"{uba.dba:x}.{uba.seq:x}.{uba.rec:x}"


#: How the updates of a table are written (:meth:`Selection.befores_of`): no before image
#: (IGNOREUPDATEBEFORES, the default); a before-image record ahead of each update
#: (GETUPDATEBEFORES); one GGSUnifiedUpdate record whose after image carries the key and
#: the changed columns (UPDATERECORDFORMAT FULL) or the changed columns only (COMPACT).
BEFORES_NONE, BEFORES_RECORD, BEFORES_FULL, BEFORES_COMPACT = 0, 1, 2, 3
_FORMATS = {None: BEFORES_RECORD, "FULL": BEFORES_FULL, "COMPACT": BEFORES_COMPACT}
FULL_DELETES = 16
"""The bit of the C walker's befores word that says NOCOMPRESSDELETES (its low bits: BEFORES_*)."""


@dataclass(frozen=True)
class Selection:
    """Which tables are captured: owner.name → (qualified name, get_truncates); ``befores``
    the tables under GETUPDATEBEFORES, written as ``update_format`` (UPDATERECORDFORMAT:
    None, FULL or COMPACT) says."""

    tables: frozenset[tuple[str, str]] = frozenset()
    truncates: frozenset[tuple[str, str]] = frozenset()
    everything: bool = False
    befores: frozenset[tuple[str, str]] = frozenset()
    update_format: str | None = None
    full_deletes: frozenset[tuple[str, str]] = frozenset()
    """Tables under NOCOMPRESSDELETES: a delete carries the whole before image the undo holds
    (seed 003), not the key alone (COMPRESSDELETES, the default)."""

    def deletes_full(self, t: TableDef) -> bool:
        return (t.owner.upper(), t.name.upper()) in self.full_deletes

    def captured(self, t: TableDef) -> bool:
        return self.everything or (t.owner.upper(), t.name.upper()) in self.tables

    def befores_of(self, t: TableDef) -> int:
        """How the updates of ``t`` carry their before image (``BEFORES_*``)."""
        if (t.owner.upper(), t.name.upper()) not in self.befores:
            return BEFORES_NONE
        return _FORMATS.get(self.update_format, BEFORES_COMPACT)


@dataclass
class Decoder:
    """Decodes redo records of one database; built once, pickled to tasks."""

    dictionary: Dictionary
    selection: Selection
    _by_obj: dict[int, TableDef] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for t in self.dictionary.tables.values():
            self._by_obj[t.obj] = t
            self._by_obj[t.dataobj] = t

    def table(self, obj: int) -> TableDef | None:
        return self._by_obj.get(obj)

    def decode_all(self, records: Iterable[LocatedRecord]) -> Iterator[Lcr]:
        for lr in records:
            yield from self.decode(lr)

    def decode(self, lr: LocatedRecord) -> list[Lcr]:
        rec = lr.record
        pos = Position(rec.thread, lr.sequence, lr.offset)
        base = _Base(pos, lr.end, rec.scn, rec.subscn, datetime_to_micros(rec.timestamp))
        out: list[Lcr] = []
        xid: str | None = None
        undo: Undo | None = None
        session: SessionInfo | None = None
        for cv in rec.changes:
            body = cv.body
            if isinstance(body, SlotAlloc):
                xid = str(Xid(usn_of_class(cv.cls), body.slt, body.sqn))
                out.append(base.lcr(Kind.BEGIN, xid))
            elif isinstance(body, Undo):
                undo = body
                xid = str(body.xid)
            elif isinstance(body, Kdo) and cv.layer == 11:
                kx = body.ktb.xid
                row_xid = str(kx) if body.ktb.kind == "F" and not kx.is_null else xid
                if row_xid is None:
                    continue
                xid = row_xid
                out.extend(self._rows(base, row_xid, cv, body, undo))
            elif isinstance(body, DirectLoad):
                xid = str(body.xid)
                out.extend(self._direct(base, xid, body, cv.dba or body.bdba))
            elif isinstance(body, Commit):
                cx = str(Xid(usn_of_class(cv.cls), body.slt, body.sqn))
                out.append(base.lcr(Kind.ROLLBACK if body.rollback else Kind.COMMIT, cx))
            elif isinstance(body, UndoApplied):
                out.append(base.lcr(Kind.UNDO, str(body.xid), ref=uba_key(body.uba)))
            elif isinstance(body, SessionInfo):
                session = body
            elif isinstance(body, Ddl):
                xid = str(body.xid)
                out.extend(self._ddl(base, xid, body))
        if xid is not None and session is not None:
            out.append(
                base.lcr(Kind.SESSION, xid, user=session.username, txn_name=session.txn_name)
            )
        return out

    # -- rows -----------------------------------------------------------------------
    def _rows(
        self, base: _Base, xid: str, cv: ChangeVector, kdo: Kdo, undo: Undo | None
    ) -> list[Lcr]:
        table = self.table(undo.objn if undo is not None else cv.obj) or self.table(cv.obj)
        if table is None or not self.selection.captured(table):
            return []  # the transaction is open already (5.2); its rows are not captured
        ref = uba_key(kdo.ktb.uba) if kdo.ktb.uba.dba else (f"{base.pos.offset}:{cv.seq}")
        name = table.qualified

        def rowid(slot: int) -> str:
            return str(RowId.from_dba(table.dataobj, kdo.bdba, slot))

        if kdo.name == "IRP":
            cols = self._full_row(table, {c.no: c.data for c in kdo.columns})
            return [
                base.lcr(
                    Kind.ROW,
                    xid,
                    io_type=IOType.INSERT,
                    table=name,
                    rowid=rowid(kdo.slot),
                    columns=cols,
                    ref=ref,
                )
            ]
        if kdo.name == "QMI":
            return [
                base.lcr(Kind.ROW, xid, io_type=IOType.INSERT, table=name, rowid=rowid(r.slot),
                         columns=self._full_row(table, {c.no: c.data for c in r.columns}), ref=ref)
                for r in kdo.rows
            ]  # fmt: skip
        full = self.selection.deletes_full(table)
        if kdo.name == "DRP":
            before = self._undo_row(undo)
            return [
                base.lcr(
                    Kind.ROW,
                    xid,
                    io_type=IOType.DELETE,
                    table=name,
                    rowid=rowid(kdo.slot),
                    columns=self._full_row(table, before) if full else self._key(table, before),
                    ref=ref,
                )
            ]
        if kdo.name == "QMD":
            rows = list(undo.kdo.rows) if undo is not None and undo.kdo is not None else []
            out = []
            for i, slot in enumerate(kdo.slots):
                before = {c.no: c.data for c in rows[i].columns} if i < len(rows) else {}
                out.append(
                    base.lcr(
                        Kind.ROW,
                        xid,
                        io_type=IOType.DELETE,
                        table=name,
                        rowid=rowid(slot),
                        columns=self._full_row(table, before) if full else self._key(table, before),
                        ref=ref,
                    )
                )
            return out
        if kdo.name == "URP":
            return self._update(base, xid, table, kdo, undo, rowid(kdo.slot), ref)
        return []

    def _update(
        self,
        base: _Base,
        xid: str,
        table: TableDef,
        kdo: Kdo,
        undo: Undo | None,
        rowid: str,
        ref: str,
    ) -> list[Lcr]:
        """An update: FieldComp (the key and the changed columns), or GGSKeyFieldComp when
        the key changed (its before image: the key; with GETUPDATEBEFORES every column
        the undo holds). With GETUPDATEBEFORES a FieldComp is preceded by its before image
        (the undo's columns: the key and the changed columns' old values) as a record of
        its own, BeforeAfter B; with UPDATERECORDFORMAT both go in one GGSUnifiedUpdate
        record, whose after image is the FieldComp's (FULL) or the changed columns only
        (COMPACT)."""
        after = {c.no: c.data for c in kdo.columns}
        before = self._undo_row(undo)
        key_idx = [table.column_index(k) for k in table.key_columns]
        key_changed = any(
            i in after and before.get(i, after[i]) != after[i] for i in key_idx if i in before
        )
        mode = self.selection.befores_of(table)
        cols: dict[int, bytes | None] = {i: before[i] for i in key_idx if i in before}
        cols.update(after)
        columns = self._encode(table, cols)

        def row(io_type: int, image: Columns, before_image: Columns = ()) -> Lcr:
            return base.lcr(Kind.ROW, xid, io_type=io_type, table=table.qualified, rowid=rowid,
                            columns=image, before_columns=before_image, ref=ref)  # fmt: skip

        if any(i not in cols for i in key_idx):  # no key in the redo: fetched (keyfetch)
            return [row(IOType.FIELDCOMP, columns)]  # and then no before image
        if key_changed:  # under UPDATERECORDFORMAT a GGSUnifiedPKUpdate (seed 003: 135)
            bimg = before if mode else {i: before[i] for i in key_idx if i in before}
            unified = mode in (BEFORES_FULL, BEFORES_COMPACT)
            io = IOType.UNIFIED_PK_UPDATE if unified else IOType.KEYFIELDCOMP
            return [row(io, columns, self._encode(table, bimg))]
        if mode == BEFORES_NONE:
            return [row(IOType.FIELDCOMP, columns)]
        bcols = self._encode(table, before)
        if mode == BEFORES_RECORD:
            return [row(IOType.FIELDCOMP | BEFORE_IMAGE, bcols), row(IOType.FIELDCOMP, columns)]
        image = columns if mode == BEFORES_FULL else self._encode(table, after)
        return [row(IOType.UNIFIED_UPDATE, image, bcols)]

    def _direct(self, base: _Base, xid: str, dl: DirectLoad, block_dba: int) -> list[Lcr]:
        """19.1: the change header's DBA is the formatted block (seed: 0x01000460, whose
        rows get ROWIDs ...ARgAAA); ``bdba`` in the body is the load's range header."""
        table = self.table(dl.seg_obj)
        if table is None or not self.selection.captured(table):
            return []
        ref = f"dl:{base.pos.offset}"
        return [
            base.lcr(Kind.ROW, xid, io_type=IOType.INSERT, table=table.qualified,
                     rowid=str(RowId.from_dba(table.dataobj, block_dba, r.slot)),
                     columns=self._full_row(table, {c.no: c.data for c in r.columns}), ref=ref)
            for r in dl.rows
        ]  # fmt: skip

    def _ddl(self, base: _Base, xid: str, ddl: Ddl) -> list[Lcr]:
        table = self.table(ddl.obj)
        words = ddl.text.split()
        is_truncate = len(words) >= 2 and words[0].upper() == "TRUNCATE"
        if (
            is_truncate
            and table is not None
            and (table.owner.upper(), table.name.upper()) in self.selection.truncates
        ):
            return [
                base.lcr(
                    Kind.ROW,
                    xid,
                    io_type=IOType.PURGEDATA,
                    table=table.qualified,
                    ref=f"ddl:{base.pos.offset}",
                )
            ]
        return [base.lcr(Kind.DDL, xid, table=f"{ddl.owner}.{ddl.name}", text=ddl.text)]

    # -- values ---------------------------------------------------------------------
    @staticmethod
    def _undo_row(undo: Undo | None) -> dict[int, bytes | None]:
        """The before image an undo record carries: its row columns, then the supplemental
        key columns (which win: they are the row's identity)."""
        before: dict[int, bytes | None] = {}
        if undo is None:
            return before
        if undo.kdo is not None:
            before.update({c.no: c.data for c in undo.kdo.columns})
        before.update({c.no: c.data for c in undo.supplemental})
        return before

    def _key(self, table: TableDef, row: dict[int, bytes | None]) -> Columns:
        idx = [table.column_index(k) for k in table.key_columns]
        return self._encode(table, {i: row[i] for i in idx if i in row})

    def _full_row(self, table: TableDef, row: dict[int, bytes | None]) -> Columns:
        return self._encode(table, {i: row.get(i) for i in range(len(table.columns))})

    @staticmethod
    def _encode(table: TableDef, cols: dict[int, bytes | None]) -> Columns:
        out = []
        for i in sorted(cols):
            if i >= len(table.columns):
                continue
            col = table.columns[i]
            out.append((i, text_of(col.type, table.decode(i, cols[i]))))
        return tuple(out)


@dataclass(frozen=True, slots=True)
class _Base:
    pos: Position
    end: int
    scn: int
    subscn: int
    time_us: int

    def lcr(self, kind: Kind, xid: str, **kw: object) -> Lcr:
        return Lcr(kind, xid, self.pos, self.end, self.scn, self.subscn, self.time_us, **kw)  # type: ignore[arg-type]
