"""Rows in several pieces, chained and migrated, bound into one row change: oracdc's 19c
binding tests (``Ops_*_BindingTest.java``, real records, read by path) fed to the redo miner
in one transaction each, with the statements their authors assert a reader makes of them:
the operation, the ROWID, the RBA of the record the statement starts at, how many; and the
column values their LogMiner texts and single-value assertions state. Two of the thirteen
methods assert that no statement follows; the others state a statement for every row their
records change, so the stated list is taken as the whole (a statement more is a failure).
advCompIssue122's insert is a compressed row image (advanced compression), which this reader
does not decode: it stops, naming it."""

from __future__ import annotations

import functools
import itertools
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.redo import capture as C
from engine.redo import dictionary as D
from engine.redo import framing as F
from engine.redo import pieces as P
from engine.redo import vectors as V
from engine.redo.rowid import FB_F, FB_H, FB_L
from tests.redo import oracdc
from tests.redo.corpus import ORACDC, need

_COLUMNS = 512  # "COL 1" .. "COL 512", RAW: values as the bytes LogMiner's HEXTORAW shows


@functools.cache
def _cases() -> list[oracdc.BindingCase]:
    return [
        c
        # the binding tests, and the 11.2 tests (a chained insert as Oracle 19c logs it: supp
        # F on its first record, the last piece, and L on the head's; a partial rollback)
        for p in [
            *sorted(need(ORACDC).glob("Ops_*_BindingTest.java")),
            need(ORACDC) / "Op11_2_Test.java",
        ]
        for c in oracdc.binding_cases(p)
    ]


def _ids() -> list[str]:
    try:
        return [f"{c.file[4:-17]}.{c.method}" for c in _cases()]
    except pytest.skip.Exception:
        return []


def _parsed(rec: oracdc.HexRecord) -> F.Record:
    r = F.parse_record(rec.raw, rec.order, rec.layout, F.Rba.parse(rec.rba or ""))  # type: ignore[arg-type]
    assert r.rba.dump() == rec.rba
    return r


def _dictionary(recs: list[F.Record]) -> D.Dictionary:
    """A table for each object the records' level-11 vectors name: ``UNKNOWN."OBJ# n"``
    with RAW columns ``COL 1`` .. (LogMiner's names for a table it has no dictionary of)."""
    objs = sorted({(v.con_id, v.obj) for r in recs for v in r.vectors if v.layer == 11})
    cols = tuple(D.Column(f"COL {i}", i, "RAW", 2000) for i in range(1, _COLUMNS + 1))
    tables = tuple(D.Table(con, "UNKNOWN", f"OBJ# {o}", o, (o,), cols) for con, o in objs)
    return D.Dictionary(0, "AL32UTF8", "AL16UTF16", tables)


def _commit(xid: tuple[int, int, int], scn: int) -> F.Record:
    """A 5.4 commit of ``xid``, written with the vector tables (ktucm, ktucf)."""
    usn, slt, sqn = xid
    ktucm = bytearray(V.KTUCM_SIZE)
    struct.pack_into("<HxxI", ktucm, 0, slt, sqn)
    end = F.build_vector("12c", "<", [bytes(ktucm), bytes(V.KTUCF_SIZE)], layer=5, code=4,
                         cls=V.UNDO_CLS_FIRST + 2 * usn)  # fmt: skip
    return F.parse_record(F.build_record("<", scn, 1, [end], F.Lwn(0, 1, 1, scn, 0)))


def _mine(case: oracdc.BindingCase) -> list[C.RowEvent]:
    recs = [_parsed(r) for r in case.records]
    cap = C.Capture(_dictionary(recs), lambda _t: True)
    for r in recs:
        assert cap.feed(r) == []
    done = cap.feed(_commit(case.xid, max(r.scn for r in recs) + 1))
    assert [t.xid.text() for t in done] in ([], [".".join(map(str, case.xid))])
    return [c for t in done for c in t.changes]


def _compressed(case: oracdc.BindingCase) -> bool:
    """Whether a record's redo row image is compressed (OLTP / advanced compression)."""
    for r in case.records:
        for v in _parsed(r).vectors:
            d = V.decode(v) if v.layer == 11 else None
            if isinstance(d, V.Redo) and d.row.compressed:
                return True
    return False


def _image(values: tuple[tuple[str, object], ...]) -> dict[int, bytes | None]:
    return {int(name.split()[1]): v for name, v in values}  # type: ignore[misc]


@pytest.mark.parametrize("case", _cases() if ORACDC.is_dir() else [], ids=_ids())
def test_pieces_bind_as_oracdc_states(case: oracdc.BindingCase) -> None:
    if _compressed(case):  # an advanced-compression row image: not decoded, so a stop
        with pytest.raises(C.CaptureStop, match=r"a compressed row .* not supported"):
            _mine(case)
        return
    got = _mine(case)
    want = case.statements
    assert [(c.op, c.rowid, c.rba.dump()) for c in got] == [(s.op, s.rowid, s.rba) for s in want]
    for c, s in zip(got, want, strict=True):
        before, after = _image(c.before), _image(c.after)
        if s.where is not None:  # the LogMiner text: its where clause is the before image
            assert before == dict(s.where)
        if s.set is not None:  # its set clause: the new values; every other column unchanged
            assert {n: after.get(n, b"?") for n, _ in s.set} == dict(s.set)
            assert all(after[n] == before.get(n) for n in after if n not in dict(s.set))
        for n, val in s.contains:
            assert after.get(n) == val or before.get(n) == val, (n, val)
        for n, val in s.before:
            assert before.get(n) == val


def test_the_cases_read() -> None:
    """Every binding test method is read, with its records and statements."""
    cases = _cases()
    assert len(cases) == 17
    assert sum(len(c.records) for c in cases) == 67
    assert sum(len(c.statements) for c in cases) == 29
    assert sum(s.where is not None for c in cases for s in c.statements) == 10
    assert sum(bool(s.contains) for c in cases for s in c.statements) == 2


def test_ignoring_the_supplemental_last_flag_fails_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """A mutation: the supplemental data's L flag not read as an end gives other statements
    (the URP of a row's last piece an update of its own, or the change never ends)."""
    real = P.ends

    def no_supp_last(p: P.Piece, open_: bool = True) -> tuple[bool, bool]:
        first, last = real(p, open_)
        if p.supp_fb is not None and p.supp_fb & 0x0C:
            return first, False if not first else last
        return first, last

    monkeypatch.setattr(P, "ends", no_supp_last)
    wrong = 0
    cases = [c for c in _cases() if not _compressed(c)]
    for case in cases:
        try:
            got = [(c.op, c.rowid, c.rba.dump()) for c in _mine(case)]
        except C.CaptureStop:
            wrong += 1
            continue
        wrong += got != [(s.op, s.rowid, s.rba) for s in case.statements]
    # every case but the two whose records have no supplemental data (DRP + LMN), the
    # one-record insert (supp F and L together) and the insert rolled back partway (nothing)
    assert (len(cases), wrong) == (15, 11)


# ------------------------------------------------------------- off the happy path


def _case(method: str) -> oracdc.BindingCase:
    return next(c for c in _cases() if c.method == method)


def _end(xid: tuple[int, int, int], scn: int, rollback: bool) -> F.Record:
    rec = _commit(xid, scn)
    if not rollback:
        return rec
    (v,) = rec.vectors
    ktucm = bytearray(v.fields[0])
    ktucm[V.KTUCM_AT["flg"][0]] |= V.KTUCM_ROLLBACK
    end = F.build_vector("12c", "<", [bytes(ktucm), v.fields[1]], layer=5, code=4, cls=v.cls)
    return F.parse_record(F.build_record("<", scn, 1, [end], F.Lwn(0, 1, 1, scn, 0)))


def test_a_commit_with_a_change_still_open_stops() -> None:
    """The last piece (supp L) missing: the commit does not emit the change half, it stops
    naming the transaction and the change's first piece; the changes before it were bound."""
    case = _case("oeOrderLinesAll")
    recs = [_parsed(r) for r in case.records[:-1]]
    cap = C.Capture(_dictionary(recs), lambda _t: True)
    for r in recs:
        assert cap.feed(r) == []
    tx = cap.open[V.Xid(*case.xid)]
    assert [c.rba.dump() for _ref, c in tx.changes] == [s.rba for s in case.statements[:4]]
    with pytest.raises(
        C.CaptureStop,
        match=r"transaction 5\.5\.2975952 committed .*OBJ# 174043 in pieces not bound "
        r"\(its first piece at RBA 0x004451\.00a98a35\.002c\)",
    ):
        cap.feed(_commit(case.xid, recs[-1].scn + 1))


def test_a_rollback_drops_the_open_pieces() -> None:
    case = _case("oeOrderLinesAll")
    recs = [_parsed(r) for r in case.records[:-1]]
    cap = C.Capture(_dictionary(recs), lambda _t: True)
    for r in recs:
        cap.feed(r)
    assert cap.miner.state().pieces
    assert cap.feed(_end(case.xid, recs[-1].scn + 1, rollback=True)) == []
    assert cap.miner.state().pieces == {} and V.Xid(*case.xid) not in cap.open


def test_two_overlapping_changes_stop() -> None:
    """A first piece (supp F) while another change with data is open: Oracle does not write
    that, so the reader stops rather than guess."""
    case = _case("testRaInterfaceLinesAll_2")
    recs = [_parsed(r) for r in case.records]
    cap = C.Capture(_dictionary(recs), lambda _t: True)
    cap.feed(recs[0])  # the head's URP, supp F
    with pytest.raises(C.CaptureStop, match=r"at RBA 0x0042c9\.007145e9\.0010 .* begins before "
                       r"the one begun at RBA 0x0042c9\.007145cd\.01e8 ended"):  # fmt: skip
        cap.feed(recs[2])  # the next row's LMN, supp F (its URP, supp L, left out)


def test_open_pieces_carry_over_in_the_miners_state() -> None:
    """Split anywhere, two miners (the second restored from the first's state, as the
    Extract's driver does between ranges) give the events one miner gives; the state holds
    the open change's pieces as frozen values."""
    case = _case("testOeOrderLinesAllMoreThanOneLmn")
    recs = [_parsed(r) for r in case.records] + [_commit(case.xid, 10**13)]
    dic = _dictionary(recs)

    def rows(events: list[C.TxEvent]) -> list[tuple[str, str, str]]:
        return [(e.row.op, e.row.rowid, e.ref) for e in events if isinstance(e, C.TxRow)]

    one = C.Miner(dic, lambda _t: True)
    want = rows([e for r in recs for e in one.feed(r)])
    assert len(want) == 3
    for k in range(len(recs)):
        first = C.Miner(dic, lambda _t: True)
        got = [e for r in recs[:k] for e in first.feed(r)]
        state = first.state()
        assert all(isinstance(p, P.Piece) for ps in state.pieces.values() for p in ps)
        second = C.Miner(dic, lambda _t: True)
        second.restore(state)
        got += [e for r in recs[k:] for e in second.feed(r)]
        assert rows(got) == want, k


# ---------------------------------------------------------------- the rules, generated

_VALUE = st.one_of(st.none(), st.binary(min_size=1, max_size=4))
_RBA = F.Rba(1, 2, 16)


def _split(data: st.DataObject, n: int) -> list[tuple[int, int]]:
    """``n`` columns cut into 1..4 pieces: (first column, end) of each, head first."""
    cuts = sorted(data.draw(st.sets(st.integers(1, n - 1), max_size=3)) if n > 1 else set())
    bounds = [0, *cuts, n]
    return list(itertools.pairwise(bounds))


def _rid(i: int) -> str:
    return f"AAAAAAAAAAAAAAAAA{'ABCDEFGH'[i]}"


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_chained_insert_binds_whatever_its_supplemental_header_says(data: st.DataObject) -> None:
    """A row cut into pieces, written last piece first (row flags L ... H F), each with a
    supplemental header saying Oracle's record ends (F on the first record logged, L on the
    last: oracdc's Op11_2_Test.java, and the embedded database's writer), nothing, or the
    piece's own row ends, with or without its column number: one INSERT of the whole row on
    the head's ROWID, complete only with its last record."""
    row = data.draw(st.lists(_VALUE, min_size=1, max_size=12))
    parts = _split(data, len(row))
    supp = data.draw(st.sampled_from(["oracle", "none", "own"]))
    placed = data.draw(st.booleans())
    pieces = []
    for i in reversed(range(len(parts))):
        lo, hi = parts[i]
        fb = (FB_H | FB_F if i == 0 else 0) | (FB_L if i == len(parts) - 1 else 0)
        logged = len(parts) - 1 - i  # the records' order: the last piece first
        oracle = (FB_F if logged == 0 else 0) | (FB_L if i == 0 else 0)
        sfb = {"oracle": oracle, "none": None, "own": fb}[supp]
        cols = tuple((lo + n if placed else n, v) for n, v in enumerate(row[lo:hi]))
        pieces.append(P.Piece("IRP", 0, 7, _RBA, 9, _rid(i), None, fb, sfb, (), cols, (),
                              placed or i == 0))  # fmt: skip
    for k in range(1, len(pieces)):
        assert P.bind(pieces[:k]) is None
    assert P.bind(pieces) == P.Bound("INSERT", _rid(0), _RBA, 9, (), tuple(enumerate(row)))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_chained_update_binds_by_its_supplemental_flags(data: st.DataObject) -> None:
    """A row in pieces updated in each (head first: supp F on the first record, L on the
    last, each URP's columns its own, the header's column number its first changed one's),
    the key (column 0) logged as supplemental data: one UPDATE on the head's ROWID, its
    before and after images the table's columns."""
    old = data.draw(st.lists(_VALUE, min_size=2, max_size=12))
    new = data.draw(st.lists(_VALUE, min_size=len(old), max_size=len(old)))
    parts = _split(data, len(old))
    changed: set[int] = set()
    pieces = []
    for i, (lo, hi) in enumerate(parts):
        mine = sorted(data.draw(st.sets(st.integers(max(lo, 1), hi - 1), min_size=1))) if (
            hi - 1 >= max(lo, 1)) else []  # fmt: skip
        changed |= set(mine)
        fb = (FB_H | FB_F if i == 0 else 0) | (FB_L if i == len(parts) - 1 else 0)
        sfb = (FB_F if i == 0 else 0) | (FB_L if i == len(parts) - 1 else 0)
        key = ((0, old[0]),) if i == 0 else ()
        # the record's own numbering, placed as the miner places it (the header: the table
        # column, from 1, of the first changed one)
        off = P.offset(mine[0] + 1, mine[0] - lo, True) if mine else 0
        assert off == lo
        rel = [c - lo for c in mine]
        pieces.append(P.Piece(
            "URP" if mine else "LMN", 0, 7, F.Rba(1, 2 + i, 16), 9, _rid(i), _rid(0), fb, sfb,
            tuple((r + off, old[r + lo]) for r in rel), tuple((r + off, new[r + lo]) for r in rel),
            key, True,
        ))  # fmt: skip
    for k in range(1, len(pieces)):
        assert P.bind(pieces[:k]) is None
    got = P.bind(pieces)
    first = next(p for p in pieces if p.carries)
    assert got == P.Bound(
        "UPDATE", _rid(0), first.rba, 9,
        tuple(sorted({0: old[0], **{c: old[c] for c in changed}}.items())),
        tuple(sorted({0: old[0], **{c: new[c] for c in changed}}.items())),
    )  # fmt: skip


def test_an_update_piece_without_column_numbers_cannot_be_bound() -> None:
    head = P.Piece("URP", 0, 7, _RBA, 9, _rid(0), None, FB_H | FB_F, FB_F, ((1, b"a"),),
                   ((1, b"b"),), (), True)  # fmt: skip
    last = P.Piece("URP", 0, 7, F.Rba(1, 3, 16), 9, _rid(1), None, FB_L, FB_L, ((0, b"c"),),
                   ((0, b"d"),), (), False)  # fmt: skip
    with pytest.raises(P.Unplaced, match=r"URP at RBA 0x000001\.00000003\.0010"):
        P.bind([head, last])


def _undone(case: oracdc.BindingCase, of: F.Record, scn: int) -> F.Record:
    """A 5.6 (undo applied, our writer's form naming the transaction) with ``of``'s level-11
    vector as its partner: ``of``'s change taken back by a savepoint rollback."""
    partner = next(v for v in of.vectors if v.layer == 11)
    ktub = bytearray(V.KTUB_SIZE)
    struct.pack_into("<II", ktub, 0, 170783, partner.obj)
    ktub[V.KTUB_AT["opc_layer"][0]], ktub[V.KTUB_AT["opc_code"][0]] = 11, 1
    applied = bytearray(V.UNDO_APPLIED_SIZE)
    struct.pack_into("<HHI", applied, 0, *case.xid)
    undo = F.build_vector("12c", "<", [bytes(ktub), bytes(applied)], layer=5, code=6,
                          cls=V.UNDO_CLS_FIRST + 2 * case.xid[0] + 1, con_id=partner.con_id)  # fmt: skip
    redo = F.build_vector("12c", "<", list(partner.fields), layer=11, code=partner.code,
                          cls=partner.cls, afn=partner.afn, dba=partner.dba, obj=partner.obj,
                          con_id=partner.con_id)  # fmt: skip
    return F.parse_record(F.build_record("<", scn, 1, [undo, redo]))


def test_a_statement_undone_partway_leaves_no_pieces() -> None:
    """A 5.6 with its level-11 partner while a change is open (the statement rolled back
    partway): the open pieces go, and the commit after it neither stops nor emits them."""
    case = _case("testRaInterfaceLinesAll_2")
    recs = [_parsed(r) for r in case.records]
    head = recs[0]  # the head's URP, supp F: opens a change
    cap = C.Capture(_dictionary(recs), lambda _t: True)
    cap.feed(head)
    assert cap.miner.state().pieces
    assert cap.feed(_undone(case, head, head.scn + 1)) == []
    assert cap.miner.state().pieces == {}
    assert cap.feed(_commit(case.xid, head.scn + 2)) == []


@pytest.mark.parametrize("piece", [0, 1])
def test_a_savepoint_rollback_takes_back_a_bound_change_by_any_piece(piece: int) -> None:
    """A bound update (the head's URP and the last piece's, two ROWIDs) taken back by the
    partner of either piece: the commit gives the transaction's other change only."""
    case = _case("testRaInterfaceLinesAll_2")
    recs = [_parsed(r) for r in case.records]
    cap = C.Capture(_dictionary(recs), lambda _t: True)
    for r in recs:
        cap.feed(r)
    assert len(cap.open[V.Xid(*case.xid)].changes) == 2
    cap.feed(_undone(case, recs[piece], recs[-1].scn + 1))
    (tx,) = cap.feed(_commit(case.xid, recs[-1].scn + 2))
    assert [c.rba.dump() for c in tx.changes] == [case.statements[1].rba]


def test_ignoring_the_column_numbers_fails_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """A mutation: the supplemental header's column number not read (every piece from column
    1): the LogMiner texts' images are not met."""
    monkeypatch.setattr(P, "offset", lambda *_a: 0)
    wrong = 0
    for case in [c for c in _cases() if not _compressed(c)]:
        for c, s in zip(_mine(case), case.statements, strict=True):
            if s.set is not None:
                after = _image(c.after)
                wrong += {n: after.get(n, b"?") for n, _ in s.set} != dict(s.set)
    assert wrong == 10  # every LogMiner text


@pytest.mark.parametrize(
    ("op", "fb", "whole"),
    [
        ("IRP", FB_H | FB_F | FB_L, True),
        ("IRP", FB_H | FB_F, False),  # a chained row's head: its last piece comes with it
        ("IRP", FB_L, False),
        ("URP", FB_H | FB_F | FB_L, True),
        ("URP", FB_F, False),
        ("ORP", FB_H | FB_F | FB_L, False),  # only ever a migrated or re-chained row's piece
        ("DRP", 0, True),  # (no row flags: its 5.1 says)
        ("LKR", 0, True),
    ],
)
def test_which_records_the_fast_readers_leave_to_the_binding(op: str, fb: int, whole: bool) -> None:
    """``pieces.kdo_whole`` (the task miner's and the attached fast path's test, twin of the
    C walk's) from the raw KDO: a row piece is left to the binding rules, a whole row read
    as it is; a field too short to say is left to the decoder."""
    kdo = bytearray(48)
    kdo[V.KDO_AT["op"][0]] = {v: k for k, v in V.KDO_OPS.items()}[op]
    kdo[V.KDO_ROW_AT["fb"][0]] = fb
    assert P.kdo_whole(bytes(kdo)) is whole
    assert P.kdo_whole(bytes(kdo[: V.KDO_ROW_AT["fb"][0]])) is True
