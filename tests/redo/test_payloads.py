"""The payload writer: the redo model -> Oracle's change vectors -> the framing reader -> the
same model, in both byte orders and both vector header layouts; and the Extract's typed reader
(engine/redo/vectors.py) sees in those bytes the rows the model says."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.embedded.clock import ManualClock
from engine.embedded.database import Database, create_database
from engine.embedded.dump_parse import parse_dump
from engine.embedded.sql import execute, run_script
from engine.redo import framing as F
from engine.redo import payloads as P
from engine.redo import vectors as V
from engine.redo.errors import RedoError
from engine.redo.framing import Rba
from engine.redo.ids import Uba, Xid
from engine.redo.layout import Order
from engine.redo.model import (
    ChangeVector,
    Column,
    Commit,
    Ddl,
    DirectLoad,
    IndexOp,
    Kdo,
    Ktb,
    RedoRecord,
    RowImage,
    SessionInfo,
    SlotAlloc,
    Undo,
    UndoApplied,
)
from engine.redo.rowid import fb_text

SOURCE = Path(__file__).resolve().parents[1] / "source"
SEED_RECORDS: list[RedoRecord] = [
    r
    for p in sorted((SOURCE / "vectors").glob("*.dump"))
    for r in parse_dump(p.read_text().splitlines()).records
]
ORDERS: tuple[Order, ...] = ("<", ">")
F_RBA = Rba(1, 2, 16)


def _through(rec: RedoRecord, order: Order, layout: str = "12c") -> RedoRecord:
    raw = P.encode_record(rec, order, layout)
    back = P.decode_record(F.parse_record(raw, order, layout), rec.timestamp, rec.thread)
    return back


def _filled(cv: ChangeVector) -> ChangeVector:
    """A row image with columns left out (seed 002's abridged 19.1 dump) as written: NULL."""
    body = cv.body
    if not isinstance(body, (DirectLoad, Kdo)) or not body.rows:
        return cv
    rows = []
    for r in body.rows:
        vals: list[bytes | None] = [None] * max(r.column_count, len(r.columns))
        for c in r.columns:
            vals[c.no] = c.data
        rows.append(RowImage(r.slot, _cols(vals), r.fb, r.lb))
    return replace(cv, body=replace(body, rows=tuple(rows)))


def _same(a: RedoRecord, b: RedoRecord) -> None:
    assert (a.scn, a.subscn, a.thread) == (b.scn, b.subscn, b.thread)
    assert len(a.changes) == len(b.changes)
    for x, y in zip(a.changes, b.changes, strict=True):
        assert x == _filled(y), x.op


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("layout", ["12c", "11g"])
def test_every_seed_record_round_trips(order: Order, layout: str) -> None:
    assert len(SEED_RECORDS) == 33
    for rec in SEED_RECORDS:
        _same(_through(rec, order, layout), rec)


def _workload(tmp_path: Path) -> list[RedoRecord]:
    create_database(tmp_path, "DB", 1, 64 * 1024 * 1024)
    db = Database(tmp_path / "DB", clock=ManualClock(datetime(2013, 3, 31, 23, 59, 58), step=0.5))
    try:
        s = db.session("A", username="APP")
        list(run_script(db, s, (SOURCE / "sql" / "seed_setup.sql").read_text()))
        for text in [
            "CREATE TABLE t (id NUMBER PRIMARY KEY, name VARCHAR2(300), d DATE, n NUMBER)",
            "INSERT INTO t VALUES (1, 'one', DATE '2013-04-01', NULL)",
            "INSERT INTO t VALUES (2, NULL, NULL, 2.5)",
            f"INSERT INTO t VALUES (3, '{'x' * 260}', NULL, -7)",
            "INSERT INTO t SELECT id + 10, name, d, n FROM t",
            "UPDATE t SET name = 'uno', n = 11 WHERE id = 1",
            "SAVEPOINT a",
            "DELETE FROM t WHERE id = 2",
            "ROLLBACK TO SAVEPOINT a",
            "COMMIT",
            "DELETE FROM t WHERE id > 10",
            "ROLLBACK",
            "UPDATE t SET n = NULL WHERE id = 3",
            "COMMIT",
        ]:
            execute(db, s, text)
        return [lr.record for lr in db.records()]
    finally:
        db.close()


def test_every_record_the_database_writes_round_trips(tmp_path: Path) -> None:
    records = _workload(tmp_path)
    ops = {cv.op for r in records for cv in r.changes}
    assert {"5.1", "5.2", "5.4", "5.20", "11.2", "11.3", "11.5", "10.2", "24.1"} <= ops
    for order in ORDERS:
        for rec in records:
            _same(_through(rec, order), rec)


def test_the_extract_reader_sees_the_rows_the_model_says(tmp_path: Path) -> None:
    """vectors.row_changes over the written bytes: each 11.x bound to its 5.1, with the
    after image, the undo's before image and the supplemental key columns of the model."""
    records = _workload(tmp_path)
    seen = 0
    for order in ORDERS:
        for rec in records:
            raw = P.encode_record(rec, order)
            changes = V.row_changes(F.parse_record(raw, order))
            model = [
                (u, cv)
                for u, cv in zip(rec.changes, rec.changes[1:], strict=False)
                if cv.layer == 11 and u.op in ("5.1", "5.6")
            ]
            assert len(changes) == len(model)
            for rc, (u, cv) in zip(changes, model, strict=True):
                undo, kdo = u.body, cv.body
                assert isinstance(kdo, Kdo)
                assert rc.op == cv.op and rc.obj == cv.obj
                if isinstance(undo, UndoApplied):  # a compensation: its row, no undo
                    assert rc.after == tuple((c.no, c.data) for c in kdo.columns)
                    continue
                assert isinstance(undo, Undo)
                assert rc.xid == V.Xid(undo.xid.usn, undo.xid.slot, undo.xid.sqn)
                if kdo.name == "IRP":
                    assert rc.after == tuple((c.no, c.data) for c in kdo.columns)
                    assert rc.fb == 0x2C
                if kdo.name == "URP":
                    assert rc.after == tuple((c.no, c.data) for c in kdo.columns)
                    assert undo.kdo is not None
                    assert rc.before == tuple((c.no, c.data) for c in undo.kdo.columns)
                assert rc.supplemental == tuple((c.no, c.data) for c in undo.supplemental)
                seen += 1
    assert seen > 20


# ---------------------------------------------------------------------------- hypothesis

u8, u16, u32 = st.integers(0, 0xFF), st.integers(0, 0xFFFF), st.integers(0, 0xFFFFFFFF)
scn48 = st.integers(0, (1 << 48) - 1)
xids = st.builds(Xid, u16, u16, u32)
ubas = st.builds(Uba, u32, u16, u8)
data = st.binary(min_size=1, max_size=300)
values = st.one_of(st.none(), data)
fbs = u8.map(fb_text)
cleanouts = st.lists(st.tuples(u8, u8, st.integers(0, (1 << 63) - 1)), max_size=3).map(tuple)


@st.composite
def ktbs(draw: st.DrawFn) -> Ktb:
    kind = draw(st.sampled_from([1, 2, 3, 4]))
    cleanout = draw(st.booleans()) and kind == 1
    op = kind | (V.KTB_CLEANOUT if cleanout else 0)
    extra: dict[str, object] = {}
    if kind == 4:
        flg = draw(st.text(alphabet="CBUT-", min_size=4, max_size=4))
        extra = {"itl_flg": flg, "itl_lkc": draw(u16), "itl_scn": draw(scn48)}
    if cleanout:
        extra.update(cleanout_scn=draw(st.integers(0, (1 << 63) - 1)), cleanout=draw(cleanouts))
    return Ktb(op=op, kind=V.KTB_KINDS[kind], xid=draw(xids), uba=draw(ubas), **extra)  # type: ignore[arg-type]


def _cols(vals: list[bytes | None]) -> tuple[Column, ...]:
    return tuple(Column(i, v) for i, v in enumerate(vals))


rows = st.builds(
    lambda slot, vals, fb, lb: RowImage(slot, _cols(vals), fb, lb),
    u16,
    st.lists(values, max_size=6),
    fbs,
    u8,
)


@st.composite
def kdos(draw: st.DrawFn) -> Kdo:
    name = draw(st.sampled_from(["IRP", "DRP", "URP", "QMI", "QMD", "LKR"]))
    base = {"name": name, "ktb": draw(ktbs()), "bdba": draw(u32), "hdba": draw(u32),
            "itli": draw(u8)}  # fmt: skip
    if name == "IRP":
        vals = draw(st.lists(values, max_size=12))
        return Kdo(**base, slot=draw(u16), fb=draw(fbs), lb=draw(u8), cc=len(vals),  # type: ignore[arg-type]
                   size=draw(u16), columns=_cols(vals))  # fmt: skip
    if name == "URP":
        nos = draw(st.lists(u16, max_size=8, unique=True))
        cols = tuple(Column(n, draw(values)) for n in nos)
        return Kdo(**base, slot=draw(u16), flag=draw(u8), lock=draw(u8), cc=draw(u8),  # type: ignore[arg-type]
                   nnew=len(cols), size=draw(st.integers(-32768, 32767)), columns=cols)  # fmt: skip
    if name == "QMI":
        rs = draw(st.lists(rows, min_size=1, max_size=5))
        return Kdo(**base, lock=draw(u8), rows=tuple(rs))  # type: ignore[arg-type]
    if name == "QMD":
        return Kdo(**base, lock=draw(u8), slots=tuple(draw(st.lists(u16, max_size=5))))  # type: ignore[arg-type]
    return Kdo(**base, slot=draw(u16))  # type: ignore[arg-type]


indexes = st.builds(
    IndexOp,
    action=st.one_of(st.sampled_from(list(V.INDEX_ACTIONS.values())), st.text(min_size=1)),
    ktb=ktbs(),
    array=st.booleans(),
    itl=u8,
    sno=u16,
    row_size=u16,
    keys=st.binary(max_size=40),
    key_sizes=st.lists(u16, max_size=4).map(tuple),
    slots=st.lists(u16, max_size=4).map(tuple),
    keydata=st.binary(max_size=24),
    indexid=u32,
    block=u32,
    kdxlkflg=u8,
)


@st.composite
def undos(draw: st.DrawFn) -> Undo:
    kind = draw(st.sampled_from(["row", "index", "begin"]))
    begin = draw(st.booleans())
    base = dict(xid=draw(xids), objn=draw(u32), objd=draw(u32), slt=draw(u8), rci=draw(u8),
                tsn=draw(u32), siz=draw(u16), spc=draw(u16), flg=draw(u16), seq=draw(u16),
                rec=draw(u8), begin=begin, logon_user=draw(u32) if begin else 0)  # fmt: skip
    if kind == "row":
        nos = draw(st.lists(st.integers(0, 999), max_size=6, unique=True))
        supp = tuple(Column(n, draw(values)) for n in nos)
        return Undo(opc=(11, 1), kdo=draw(kdos()), supplemental=supp, **base)  # type: ignore[arg-type]
    if kind == "index":
        return Undo(opc=(10, 22), index=draw(indexes), **base)  # type: ignore[arg-type]
    return Undo(opc=(5, 7), **base)  # type: ignore[arg-type]


text = st.text(max_size=30)
bodies = st.one_of(
    st.builds(SlotAlloc, u16, u32, u16, u16, u8, ubas, xids).map(lambda b: (5, 2, b)),
    undos().map(lambda b: (5, 1, b)),
    st.builds(Commit, u16, u32, u16, u8, u8, ubas, u16, u16, u8).map(lambda b: (5, 4, b)),
    st.builds(UndoApplied, xids, ubas).map(lambda b: (5, 6, b)),
    st.builds(SessionInfo, u32, u32, text, text, u32, st.integers(0, (1 << 63) - 1), text).map(
        lambda b: (5, 20, b)
    ),
    kdos().map(lambda b: (11, P.KDO_CODES[b.name], b)),
    indexes.map(lambda b: (10, 2, b)),
    st.builds(
        lambda xid, obj, csc, bdba, rs, itc: DirectLoad(
            xid,
            obj,
            csc,
            bdba,
            tuple(sorted({r.slot: r for r in rs}.values(), key=lambda r: r.slot)),
            itc,
        ),
        xids,
        u32,
        st.integers(0, (1 << 63) - 1),
        u32,
        st.lists(rows.map(lambda r: RowImage(r.slot % 50, r.columns, r.fb, r.lb)), max_size=6),
        st.integers(1, 4),
    ).map(lambda b: (19, 1, b)),
    st.builds(Ddl, xids, text, text, u32, text, text).map(lambda b: (24, 1, b)),
    st.just((24, 4, None)),
)


@st.composite
def vectors(draw: st.DrawFn) -> ChangeVector:
    layer, code, body = draw(bodies)
    return ChangeVector(layer, code, body, typ=draw(u8), cls=draw(u16), afn=draw(u16),
                        dba=draw(u32), obj=draw(u32), scn=draw(scn48), seq=draw(u8),
                        marker=P._is_marker(layer, code))  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(vectors(), min_size=1, max_size=5), scn48, u16, st.sampled_from(ORDERS))
def test_any_model_round_trips(
    cvs: list[ChangeVector], scn: int, subscn: int, order: Order
) -> None:
    rec = RedoRecord(1, F_RBA, scn, subscn, datetime(2026, 1, 2, 3, 4, 5), tuple(cvs))
    _same(_through(rec, order), rec)


@settings(max_examples=200, deadline=None)
@given(st.lists(vectors(), min_size=1, max_size=3), st.data())
def test_damaged_vectors_fail_cleanly(cvs: list[ChangeVector], d: st.DataObject) -> None:
    """A damaged record decodes to some model or raises RedoError, never another exception."""
    rec = RedoRecord(1, F_RBA, 5, 1, datetime(2026, 1, 2), tuple(cvs))
    raw = bytearray(P.encode_record(rec, "<"))
    for _ in range(d.draw(st.integers(1, 4))):
        at = d.draw(st.integers(24, len(raw) - 1))
        raw[at] = d.draw(u8)
    with contextlib.suppress(RedoError):
        P.decode_record(F.parse_record(bytes(raw), "<"), rec.timestamp)
