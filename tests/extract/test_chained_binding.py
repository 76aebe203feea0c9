"""Rows in pieces as Oracle 19c writes them (oracdc's binding vectors: a chained row's update
in pieces, a row migrated by an update: URP + IRP + DRP + CFA, URP + IRP + ORP, IRP + ORP),
read by the embedded Extract's task miner, Python walk and C walk: the same row changes the
redo miner binds from them (tests/redo/test_binding.py holds those to their authors'
statements). Each case's records are written into an Oracle log (framing.build_log), one
LWN a record, with a 5.4 commit after them, and walked as a Spark task walks a log.

A mutation (the task miner not reading an 11.6 ORP as a piece) loses the migrations'
updates."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest

from engine.changes import Kind
from engine.embedded.errors import RedoCorruptError
from engine.extract.tasks import miner as M
from engine.extract.tasks import rowpieces
from engine.extract.tasks.chain import Chains
from engine.extract.tasks.decode import BEFORES_FULL
from engine.extract.tasks.miner import Miner
from engine.extract.tasks.plan import Event, MinePlan, TableInfo
from engine.extract.tasks.values import Convert, entry_converter
from engine.redo import capture as C
from engine.redo import dictionary as D
from engine.redo import framing as F
from engine.redo import layout as L
from engine.redo import payloads as P
from engine.redo import vectors as V
from engine.redo.codecs import encode_value
from engine.redo.errors import RedoError
from engine.redo.ids import Uba, Xid
from engine.redo.layout import Order
from engine.redo.model import ChangeVector, Column, Commit, Kdo, Ktb, RedoRecord, SlotAlloc, Undo
from engine.redo.rowid import rowid
from engine.trail.layout import IOType
from tests.harness.kernels import needs
from tests.redo import oracdc
from tests.redo import test_binding as TB
from tests.redo.corpus import ORACDC

_COLUMNS = TB._COLUMNS
_ROW = int(Kind.ROW)
_OPS = {
    int(IOType.INSERT): "INSERT",
    int(IOType.DELETE): "DELETE",
    int(IOType.UNIFIED_UPDATE): "UPDATE",
}
_MIGRATIONS = ("URP_IRP_DRP_CFA", "URP_IRP_ORP", "IRP_ORP")
#: the cases with a whole row change (a record that is a change by itself) in one of
#: Oracle's forms the redo model does not read (a 16-byte KTB, a 28-byte supplemental
#: header): the task miner reads a whole row change through the redo model (the embedded
#: database's layout; an attached database's logs go through the redo miner,
#: engine/extract/oracle_source.py), so it stops on them; its pieces are read as Oracle's
_WHOLE_ORACLE = frozenset(
    {"testOP11_16_With_PN_Flags", "testOP11_16_With_Only_P_Flag", "test_IRP_DRP_CFA_Binding",
     "testSapSd_11_2_0_4"}
)  # fmt: skip


@functools.cache
def _cases() -> list[oracdc.BindingCase]:
    return [c for c in TB._cases() if c.file.startswith("Ops_")]


def _ids() -> list[str]:
    try:
        return [f"{c.file[4:-17]}.{c.method}" for c in _cases()]
    except pytest.skip.Exception:
        return []


def _log(case: oracdc.BindingCase, into: Path) -> Path:
    """The case's records and a commit of its transaction, an LWN each, in a 19c log."""
    recs = [TB._parsed(r) for r in case.records]
    order: Order = "<" if case.records[0].order == "<" else ">"
    lwns: list[list[bytes]] = []
    scn = 0
    for r, hx in zip(recs, case.records, strict=True):
        hs = L.LWN_HEADER.size if r.lwn is not None else L.RECORD_HEADER.size
        scn = max(scn, r.scn)
        lwn = F.Lwn(len(lwns) + 1, 1, 0, r.scn, 5000)
        lwns.append([F.build_record(order, r.scn, r.subscn, [hx.raw[hs:]], lwn)])
    end = TB._commit(case.xid, scn + 1)
    (v,) = end.vectors
    commit = F.build_vector(
        case.records[0].layout, order, list(v.fields), layer=5, code=4, cls=v.cls
    )
    end_lwn = F.Lwn(len(lwns) + 1, 1, 0, scn + 1, 5000)
    lwns.append([F.build_record(order, scn + 1, 1, [commit], end_lwn)])
    first = min(r.scn for r in recs)
    version = 0x13000000 if case.records[0].layout == "12c" else 0x0B200300  # 19.0, 11.2.0.3
    header = F.LogHeader(order, 512, 0, version, 7, "DB", 1, 7, 99, 9, first, scn + 2, 1, 2, 0)
    out = into / f"{case.method}.log"
    out.write_bytes(F.build_log(header, lwns))
    return out


def _plan(case: oracdc.BindingCase, hooked: bool) -> MinePlan:
    """A table of ``COL 1`` .. for each object the records name (as the redo miner's test
    names them), with before images; ``hooked``: its rows carry their columns (else their
    trail entries)."""
    recs = [TB._parsed(r) for r in case.records]
    objs = sorted({v.obj for r in recs for v in r.vectors if v.layer == 11})
    types = ("RAW",) * _COLUMNS
    return MinePlan(
        {
            o: TableInfo(
                f'UNKNOWN."OBJ# {o}"',
                f"OBJ# {o}".encode(),
                o,
                types,
                (),
                True,
                False,
                hooked,
                BEFORES_FULL,
                True,
            )
            for o in objs
        },
        compact=False,
    )


def _hex(_type: str) -> Convert:
    """A RAW column's text (the trail's values have no RAW type): its bytes in hex."""
    return lambda raw: None if raw is None else raw.hex()


def _hex_entry(i: int, _type: str) -> Callable[[bytes | None], bytes]:
    text = entry_converter(i, "VARCHAR2")
    return lambda raw: text(None if raw is None else raw.hex().encode())


@pytest.fixture
def _raw_as_hex(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(M, "converter", _hex)
    monkeypatch.setattr(M, "entry_converter", _hex_entry)


Change = tuple[str, str, dict[int, str | None], dict[int, str | None]]


def _events(case: oracdc.BindingCase, log: Path, hooked: bool, native: bool) -> list[Event]:
    miner = Miner(_plan(case, hooked))
    if not native:
        miner._walker = None
    assert native == (miner._walker is not None)
    return miner.walk(str(log), 0, None)[0]


def _task(case: oracdc.BindingCase, log: Path) -> list[Change]:
    """The row changes the task miner (Python walk, the rows with their columns) walks out
    of the log: (op, ROWID, before, after), columns numbered from 0, NULLs left out."""
    out: list[Change] = []
    for e in _events(case, log, True, False):
        if e[0] != _ROW or e[8] not in _OPS:
            continue
        img = dict(e[11])
        before = dict(e[12])
        op = _OPS[e[8]]
        if op == "DELETE":
            img, before = {}, img
        out.append((op, e[10], _nonnull(before), _nonnull(img)))
    return out


def _redo(case: oracdc.BindingCase) -> list[Change]:
    """The row changes the redo miner binds, in the same terms."""

    def image(values: tuple[tuple[str, object], ...]) -> dict[int, str | None]:
        return _nonnull({int(n.split()[1]) - 1: _hex("RAW")(v) for n, v in values})  # type: ignore[arg-type]

    return [(c.op, c.rowid, image(c.before), image(c.after)) for c in TB._mine(case)]


def _nonnull(img: dict[int, str | None]) -> dict[int, str | None]:
    return {k: v for k, v in img.items() if v is not None}


def _migration(case: oracdc.BindingCase) -> bool:
    return any(case.file.startswith(f"Ops_{m}_") for m in _MIGRATIONS)


@pytest.mark.usefixtures("_raw_as_hex")
@pytest.mark.parametrize("case", _cases() if ORACDC.is_dir() else [], ids=_ids())
def test_the_task_miner_binds_oracles_pieces_as_the_redo_miner(
    case: oracdc.BindingCase, tmp_path: Path
) -> None:
    """Every binding case the redo miner binds (a compressed row image stops both), read
    by the task miner: the same operations, ROWIDs and images. The migrations (an IRP inside
    an update, 11.6 ORP, 11.8 CFA) are among them; a case with a whole row change in one of
    Oracle's forms the redo model does not read (:data:`_WHOLE_ORACLE`) stops the task
    miner, naming the record (never a wrong row)."""
    log = _log(case, tmp_path)
    if TB._compressed(case):
        with pytest.raises((RedoError, RedoCorruptError), match="compressed"):
            _task(case, log)
        return
    if case.method in _WHOLE_ORACLE:
        with pytest.raises(RedoCorruptError, match=r"change 5\.(1|20): field of \d+ bytes has no"):
            _task(case, log)
        return
    want = _redo(case)
    got = _task(case, log)
    assert [(op, rid) for op, rid, _b, _a in got] == [(op, rid) for op, rid, _b, _a in want]
    for (_o, _r, b, a), (_wo, _wr, wb, wa) in zip(got, want, strict=True):
        assert b == wb
        # the redo miner's after image has the supplemental columns the change does not set
        # (as they were); the task miner's the columns set
        assert a.items() <= wa.items()
        assert all(wa[k] == wb.get(k) for k in wa.keys() - a.keys())


@pytest.mark.usefixtures("_raw_as_hex")
@needs("redomine")
@pytest.mark.parametrize("case", _cases() if ORACDC.is_dir() else [], ids=_ids())
def test_the_c_walk_mines_them_as_the_python_walk(case: oracdc.BindingCase, tmp_path: Path) -> None:
    """The C walk (rows with their trail entries) gives the Python walk's events: it hands
    the records of a row change in pieces (an IRP inside an update, 11.6, 11.8, 11.16) to
    the Python walk, and reads the whole ones as it does."""
    log = _log(case, tmp_path)

    def run(native: bool) -> list[Event] | str:
        try:
            return _events(case, log, False, native)
        except (RedoError, RedoCorruptError) as exc:
            return type(exc).__name__

    python = run(False)
    assert run(True) == python
    if _migration(case) and not TB._compressed(case):
        assert isinstance(python, list) and any(e[0] == _ROW for e in python)


def test_the_migrations_are_read() -> None:
    """The three files of migrated rows are among the cases (with their four updates by
    URP + IRP + DRP + CFA, one by URP + IRP + ORP, two by IRP + ORP)."""
    got = sorted(c.file for c in _cases() if _migration(c))
    assert got == sorted(
        ["Ops_URP_IRP_DRP_CFA_BindingTest.java", "Ops_URP_IRP_ORP_BindingTest.java"]
        + ["Ops_IRP_ORP_BindingTest.java"] * 2
    )


@pytest.mark.usefixtures("_raw_as_hex")
def test_an_orp_not_read_as_a_piece_loses_the_migrations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mutation: 11.6 ORP not a piece in the task miner (left to the whole-row reading):
    the updates that end with one are lost or stop the Extract."""
    cases = [
        c
        for c in _cases()
        if any(n[0] == "11.6" for r in c.records for n in r.notes) and not TB._compressed(c)
    ]
    right = [_task(c, _log(c, tmp_path)) for c in cases]
    assert all(right)
    monkeypatch.setattr(rowpieces, "PIECE_CODES", rowpieces.PIECE_CODES - {6})
    monkeypatch.setattr(rowpieces, "ONLY_PIECES", rowpieces.ONLY_PIECES - {6})
    wrong = 0
    for case, want in zip(cases, right, strict=True):
        try:
            wrong += _task(case, _log(case, tmp_path)) != want
        except (RedoError, RedoCorruptError):
            wrong += 1  # (its ORP's 5.1 then goes to the redo model, which cannot read it)
    assert (len(cases), wrong) == (2, 2)  # URP + IRP + ORP's update, IRP + ORP's


@pytest.mark.usefixtures("_raw_as_hex")
@pytest.mark.parametrize("native", [False, pytest.param(True, marks=needs("redomine"))])
def test_a_split_inside_a_migration_gives_it_once(native: bool, tmp_path: Path) -> None:
    """The migrations' logs split at every block (a Spark task's range ends there, the next
    starts there): the range holding a change's first piece reads on to its last and owns
    it, the next drops the pieces it starts with, so the two ranges give the whole walk's
    row changes, each once."""
    for case in [c for c in _cases() if _migration(c) and not TB._compressed(c)]:
        log = _log(case, tmp_path)
        whole = _rows(_events(case, log, True, native))
        assert whole
        blocks = log.stat().st_size // 512
        for cut in range(3, blocks):
            first = Miner(_plan(case, True))
            second = Miner(_plan(case, True))
            if not native:
                first._walker = second._walker = None
            got = first.walk(str(log), 0, cut * 512)[0] + second.walk(str(log), cut * 512, None)[0]
            assert _rows(got) == whole, (case.method, cut)


@pytest.mark.usefixtures("_raw_as_hex")
def test_a_range_that_does_not_read_on_loses_a_migration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mutation: a range ending inside a migration not reading on to its last piece
    (:meth:`Chains.read_on` reads nothing): a split loses the change."""
    monkeypatch.setattr(Chains, "read_on", lambda self, path, at, limit, out, record: (0, at))
    case = next(c for c in _cases() if c.file.startswith("Ops_URP_IRP_DRP_CFA_"))
    log = _log(case, tmp_path)
    whole = _rows(_events(case, log, True, False))
    lost = 0
    for cut in range(3, log.stat().st_size // 512):
        first, second = Miner(_plan(case, True)), Miner(_plan(case, True))
        first._walker = second._walker = None
        got = first.walk(str(log), 0, cut * 512)[0] + second.walk(str(log), cut * 512, None)[0]
        lost += len(whole) - len(_rows(got))
    assert lost > 0


def _rows(events: list[Event]) -> list[tuple[object, ...]]:
    return [(e[8], e[10], e[11], e[12], e[13]) for e in events if e[0] == _ROW]


# ------------------------------------------- a migration in the embedded database's layout

_OBJ, _HEAD, _NEW = 90_001, 0x01000010, 0x01000020  # the table; the head's block; the new one
_XID = Xid(3, 4, 5)


def _our_migration(into: Path) -> tuple[Path, MinePlan]:
    """``IRP + ORP`` (oracdc's ``Ops_IRP_ORP_BindingTest``: the row in a new block, IRP
    ``----FL--`` supp F; its head left a pointer, ORP ``--H-----`` supp L, its undo the
    row as it was) written by the redo model in the embedded database's layout, in one
    transaction (5.2 ... 5.4) of a table ``(ID NUMBER key, A VARCHAR2)``."""
    key, old, new = encode_value("NUMBER", 7) or b"", b"old", b"new" * 30
    first = Ktb(op=0x01, kind="F", xid=_XID, uba=Uba(0x00C00010, 1, 1))
    later = Ktb(op=0x02, kind="C", uba=Uba(0x00C00010, 1, 2))
    undo_ktb = Ktb(op=0x03, kind="Z")

    def row(name: str, ktb: Ktb, dba: int, slot: int, fb: str, vals: tuple[bytes, ...],
            nrid: tuple[int, int] | None = None) -> Kdo:  # fmt: skip
        cols = tuple(Column(i, v) for i, v in enumerate(vals))
        return Kdo(name, ktb, dba, dba, slot=slot, fb=fb, cc=len(cols), columns=cols,
                   size=3 + sum(1 + len(v) for v in vals), nrid=nrid)  # fmt: skip

    def undo(kdo: Kdo, rec: int, fb: str, at: tuple[int, int]) -> ChangeVector:
        u = Undo(_XID, (11, 1), _OBJ, _OBJ, rec=rec, kdo=kdo, supplemental=(Column(0, key),),
                 supp_fb=fb, supp_before=at[0], supp_after=at[1])  # fmt: skip
        return ChangeVector(5, 1, u, cls=V.UNDO_CLS_FIRST + 2 * _XID.usn + 1, dba=0x00C00010)

    def redo(code: int, kdo: Kdo) -> ChangeVector:
        return ChangeVector(11, code, kdo, afn=4, dba=kdo.bdba, obj=_OBJ)

    cls = V.UNDO_CLS_FIRST + 2 * _XID.usn
    records = [
        [ChangeVector(5, 2, SlotAlloc(_XID.slot, _XID.sqn), cls=cls),
         undo(Kdo("DRP", undo_ktb, _NEW, _NEW, slot=0), 1, "----F---", (0, 1)),
         redo(2, row("IRP", first, _NEW, 0, "----FL--", (key, new)))],
        [undo(row("ORP", undo_ktb, _HEAD, 3, "--H-FL--", (key, old)), 2, "-----L--", (1, 1)),
         redo(6, row("ORP", later, _HEAD, 3, "--H-----", (), (_NEW, 0)))],
        [ChangeVector(5, 4, Commit(_XID.slot, _XID.sqn), cls=cls)],
    ]  # fmt: skip
    lwns = []
    for i, cvs in enumerate(records):
        scn = 1000 + i
        rec = RedoRecord(1, F.Rba(7, 2, 16), scn, 1, datetime(2026, 1, 2, 3, 4, 5), tuple(cvs))
        lwns.append([P.encode_record(rec, "<", "12c", F.Lwn(i + 1, 1, 0, scn, 5000))])
    header = F.LogHeader("<", 512, 0, 0x13000000, 7, "DB", 1, 7, 99, 9, 1000, 1003, 1, 2, 0)
    log = into / "ours.log"
    log.write_bytes(F.build_log(header, lwns))
    info = TableInfo("HR.T", b"T", _OBJ, ("NUMBER", "VARCHAR2"), (0,), True, False, False,
                     BEFORES_FULL)  # fmt: skip
    return log, MinePlan({_OBJ: info}, compact=False)


def test_our_layouts_migration_is_one_update(tmp_path: Path) -> None:
    """The IRP + ORP of the embedded database's layout: one UPDATE on the head's ROWID, the
    row as it was before and as it is after, from the task miner as from the redo miner."""
    log, plan = _our_migration(tmp_path)
    hooked = MinePlan({o: replace(i, hooked=True) for o, i in plan.tables.items()}, compact=False)
    miner = Miner(hooked)
    miner._walker = None
    rows = [e for e in miner.walk(str(log), 0, None)[0] if e[0] == _ROW]
    head = rowid(_OBJ, _HEAD, 3)
    assert [(e[8], e[10]) for e in rows] == [(int(IOType.UNIFIED_UPDATE), head)]
    new = "new" * 30
    assert (dict(rows[0][12]), dict(rows[0][11])) == ({0: "7", 1: "old"}, {0: "7", 1: new})
    cap = C.Capture(_our_dictionary(), lambda _t: True)
    data = log.read_bytes()
    got = [t for r in F.iter_records(data) for t in cap.feed(r)]
    ((change,),) = [t.changes for t in got]
    assert (change.op, change.rowid) == ("UPDATE", head)
    assert (dict(change.before), dict(change.after)) == (
        {"ID": Decimal(7), "A": "old"},
        {"ID": Decimal(7), "A": new},
    )


@pytest.mark.parametrize("hooked", [False, True])
@needs("redomine")
def test_the_c_walk_leaves_our_migration_to_the_python_walk(hooked: bool, tmp_path: Path) -> None:
    """The C walk gives the Python walk's events on it: it leaves the IRP (its undo not a
    whole row's) and the ORP to the Python walk, which binds them (a C walk that steps
    over 11.6 leaves the change unbound: the update is lost)."""
    log, plan = _our_migration(tmp_path)
    if hooked:
        plan = MinePlan({o: replace(i, hooked=True) for o, i in plan.tables.items()}, compact=False)
    python, native = Miner(plan), Miner(plan)
    python._walker = None
    assert native._walker is not None
    want = python.walk(str(log), 0, None)[0]
    assert any(e[0] == _ROW for e in want)
    assert native.walk(str(log), 0, None)[0] == want


def _our_dictionary() -> D.Dictionary:
    cols = (D.Column("ID", 1, "NUMBER", 22), D.Column("A", 2, "VARCHAR2", 4000))
    return D.Dictionary(0, "AL32UTF8", "AL16UTF16", (D.Table(0, "HR", "T", _OBJ, (_OBJ,), cols),))
