"""The fast path's packed change vectors against the codec's encoding of the model objects.

:mod:`engine.embedded.bulkpack` packs change vectors without building the dataclasses of
:mod:`engine.redo.model`; for any row, undo address, block state and transaction, its
bytes must be what :func:`redo_codec.encode_record` writes for the change vectors that
:mod:`engine.embedded.redogen` builds (the generic path's). The workload golden test checks
whole runs; this one covers values the workload does not make (NULLs, long values, long
keys, every cleanout size, undo sequences wrapping).
"""

from __future__ import annotations

from datetime import datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.embedded import bulkpack as bp
from engine.embedded import redogen as rg
from engine.embedded.dictionary import ColumnDef, IndexDef, TableDef
from engine.embedded.redo_codec import encode_record
from engine.embedded.rows import supp_columns
from engine.redo.framing import Rba
from engine.redo.ids import Uba, Xid, make_dba
from engine.redo.model import Body, ChangeVector, Column, IndexOp, Ktb, RedoRecord, UndoApplied

TABLE = TableDef(
    "WL",
    "T",
    76481,
    76482,
    (
        ColumnDef("ID", "NUMBER", nullable=False),
        ColumnDef("NAME", "VARCHAR2", 4000),
        ColumnDef("AMOUNT", "NUMBER"),
        ColumnDef("CREATED", "DATE"),
        ColumnDef("STATUS", "CHAR", 1),
    ),
    key=("ID",),
    indexes=(IndexDef("PK", 76483, 76483, ("ID",), primary=True, block=0x441),),
)
PACK = bp.TablePack(TABLE)
SCN = 1_600_123

value = st.one_of(st.none(), st.binary(min_size=1, max_size=80))
rows = st.tuples(st.binary(min_size=1, max_size=70), value, value, value, value)
entries = st.lists(
    st.tuples(st.integers(1, 3), st.just(2), st.integers(0, 2**40)), min_size=0, max_size=3
)


def _cvs(changes: list[ChangeVector]) -> bytes:
    """The change vectors' bytes as the codec writes them (the record head cut off)."""
    rec = RedoRecord(1, Rba(1, 2, 16), SCN, 1, datetime(2024, 1, 1), tuple(changes))
    return encode_record(rec)[38:]


def _txn(usn: int, slot: int, rec: int, begin: bool) -> tuple[rg.TxnIds, rg.TxnIds]:
    """The same transaction twice: one for the model path, one for the packed path."""

    def make() -> rg.TxnIds:
        return rg.TxnIds(Xid(usn, slot, 0x357), undo_seq=0xFFFF, rec=rec, started=not begin)

    return make(), make()


def _head(ids: rg.TxnIds) -> bp.TxHead:
    x = ids.xid
    return bp.tx_head(ids.header_cls, ids.header_dba, x.usn, x.slot, x.sqn, ids.logon_user)


Entries = list[tuple[int, int, int]]
Txn = tuple[int, int, int, bool, bool]  # usn, slot, undo record, first change?, block seen?


def _ktb(ids: rg.TxnIds, x: bp.TxHead, dba: int, uba: bp.Uba3, dirty: Entries) -> tuple[bytes, int]:
    """The packed path's KTB choice (BulkSession._change / _first_ktb)."""
    if dba in ids.blocks:
        return bp.ktb_continue(*uba), 0
    ids.blocks.add(dba)
    return (bp.ktb_first(x, uba, dirty, SCN) if dirty else bp.ktb_first(x, uba)), 2


txns = st.tuples(
    st.integers(1, 10), st.integers(0, 47), st.integers(0, 0x101), st.booleans(), st.booleans()
)


@settings(max_examples=150, deadline=None)
@given(row=rows, txn=txns, dirty=entries, block=st.integers(0x430, 0x3FFFFF))
def test_insert_and_its_index_record(
    row: tuple[bytes | None, ...], txn: Txn, dirty: Entries, block: int
) -> None:
    usn, slot_no, rec, begin, seen = txn
    model, fast = _txn(usn, slot_no, rec, begin)
    dba, slot = make_dba(4, block), block % 300
    if seen:
        model.blocks.add(dba)
        fast.blocks.add(dba)
    undo_kdo = rg.kdo("DRP", rg.UNDO_KTB, TABLE, dba, slot=slot)
    undo_cv, uba = rg.row_undo(model, TABLE, SCN, undo_kdo, supp_columns(TABLE, row))
    model.started = True
    ktb, _ = rg.ktb_for(model, dba, uba, {dba: list(dirty)}, SCN)
    cols = rg.columns_of(row)
    size = rg.row_size(tuple(c.data for c in cols))
    redo = rg.kdo("IRP", ktb, TABLE, dba, slot=slot, size=size, lb=2, cc=len(cols), columns=cols)
    want = _cvs([undo_cv, rg.row_redo(model, TABLE, SCN, dba, 2, redo)])

    x = _head(fast)
    fast.started = True
    u = fast.next_rec()
    redo_ktb, typ = _ktb(fast, x, dba, u, dirty)
    c = (x, begin, SCN, u, dba, slot, redo_ktb, typ)
    assert PACK.insert(c, bp.columns(row), row[0]) == want

    key = rg.index_key((0,), row)
    index = rg.index_change(
        model, TABLE, TABLE.indexes[0], SCN, True, [(key, rg.keydata(dba, slot), slot)]
    )
    u = fast.next_rec()
    assert PACK.index is not None
    leaf = PACK.index[2]
    leaf_ktb, _ = _ktb(fast, x, leaf, u, [])
    ic = (x, False, SCN, u, dba, slot, leaf_ktb, 0)
    assert PACK.index_change(ic, True, key) == _cvs(index)


@settings(max_examples=150, deadline=None)
@given(row=rows, txn=txns, dirty=entries, block=st.integers(0x430, 0x3FFFFF))
def test_delete_and_update(
    row: tuple[bytes | None, ...], txn: Txn, dirty: Entries, block: int
) -> None:
    usn, slot_no, rec, begin, seen = txn
    dba, slot = make_dba(4, block), block % 300
    for kind in ("delete", "update"):
        model, fast = _txn(usn, slot_no, rec, begin)
        if seen:
            model.blocks.add(dba)
            fast.blocks.add(dba)
        cols = rg.columns_of(row)
        set_cols = (2, 4)
        if kind == "delete":
            size = rg.row_size(tuple(c.data for c in cols))
            undo_kdo = rg.kdo(
                "IRP",
                rg.UNDO_KTB,
                TABLE,
                dba,
                slot=slot,
                size=size,
                lb=0,
                cc=len(cols),
                columns=cols,
            )
        else:
            old = tuple(Column(i, row[i]) for i in set_cols)
            undo_kdo = rg.kdo("URP", rg.UNDO_KTB, TABLE, dba, slot=slot, cc=5, nnew=2, columns=old)
        undo_cv, uba = rg.row_undo(model, TABLE, SCN, undo_kdo, supp_columns(TABLE, row))
        model.started = True
        ktb, _ = rg.ktb_for(model, dba, uba, {dba: list(dirty)}, SCN)
        if kind == "delete":
            redo = rg.row_redo(model, TABLE, SCN, dba, 3, rg.kdo("DRP", ktb, TABLE, dba, slot=slot))
        else:
            new = tuple(Column(i, row[1]) for i in set_cols)
            urp = rg.kdo("URP", ktb, TABLE, dba, slot=slot, lock=1, cc=5, nnew=2, columns=new)
            redo = rg.row_redo(model, TABLE, SCN, dba, 5, urp)
        want = _cvs([undo_cv, redo])

        x = _head(fast)
        fast.started = True
        u = fast.next_rec()
        redo_ktb, typ = _ktb(fast, x, dba, u, dirty)
        c = (x, begin, SCN, u, dba, slot, redo_ktb, typ)
        if kind == "delete":
            got = PACK.delete(c, bp.columns(row), row[0])
        else:
            old_vec = bp.some_columns(set_cols, [row[i] for i in set_cols])
            new_vec = bp.some_columns(set_cols, [row[1]] * 2)
            got = PACK.update(c, 2, old_vec, new_vec, row[0])
        assert got == want, kind


@settings(max_examples=100, deadline=None)
@given(
    row=rows, usn=st.integers(1, 10), block=st.integers(0x430, 0x3FFFFF), rec=st.integers(1, 255)
)
def test_compensation_records(
    row: tuple[bytes | None, ...], usn: int, block: int, rec: int
) -> None:
    ids = rg.TxnIds(Xid(usn, 3, 0x357), undo_seq=0x1234, started=True)
    x = _head(ids)
    dba, slot = make_dba(4, block), block % 300
    uba = (ids.undo_dba, 0x1234, rec)
    marker = ChangeVector(
        5, 6, UndoApplied(ids.xid, Uba(*uba)), cls=x.cls + 1, afn=3, dba=uba[0], scn=SCN
    )
    ktb = Ktb(op=0x02, kind="C", uba=Uba(*uba))
    c = bp.compensating(x, SCN, uba, dba, slot)
    key = rg.index_key((0,), row)
    kd = rg.keydata(dba, slot)
    cols = rg.columns_of(row)
    size = rg.row_size(tuple(col.data for col in cols))
    drp = rg.kdo("DRP", ktb, TABLE, dba, slot=slot)
    irp = rg.kdo("IRP", ktb, TABLE, dba, slot=slot, size=size, lb=0, cc=len(cols), columns=cols)
    old = tuple(Column(i, row[i]) for i in (2, 4))
    urp = rg.kdo("URP", ktb, TABLE, dba, slot=slot, cc=5, nnew=2, columns=old)
    leaf = make_dba(4, TABLE.indexes[0].block)

    def cv(layer: int, code: int, body: Body, at: int, obj: int) -> ChangeVector:
        return ChangeVector(layer, code, body, afn=4, dba=at, obj=obj, scn=SCN)

    def leaf_op(insert: bool) -> ChangeVector:
        body = IndexOp(
            action="insert leaf row" if insert else "delete leaf row",
            ktb=ktb,
            itl=2,
            sno=slot,
            row_size=len(key) + len(kd) + 4,
            keys=key if insert else b"",
            keydata=kd if insert else b"",
        )
        return cv(10, 2 if insert else 4, body, leaf, 76483)

    assert PACK.undone_insert(c, key) == _cvs([marker, cv(11, 3, drp, dba, 76482), leaf_op(False)])
    assert PACK.undone_delete(c, bp.columns(row), key) == _cvs(
        [marker, cv(11, 2, irp, dba, 76482), leaf_op(True)]
    )
    old_vec = bp.some_columns((2, 4), [row[2], row[4]])
    assert PACK.undone_update(c, 2, old_vec) == _cvs([marker, cv(11, 5, urp, dba, 76482)])
