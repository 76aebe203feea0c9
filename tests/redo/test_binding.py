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

import struct

import pytest

from engine.redo import capture as C
from engine.redo import dictionary as D
from engine.redo import framing as F
from engine.redo import pieces as P
from engine.redo import vectors as V
from tests.redo import oracdc
from tests.redo.corpus import ORACDC, need

_COLUMNS = 512  # "COL 1" .. "COL 512", RAW: values as the bytes LogMiner's HEXTORAW shows


def _cases() -> list[oracdc.BindingCase]:
    return [
        c
        for p in sorted(need(ORACDC).glob("Ops_*_BindingTest.java"))
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
    assert len(cases) == 13
    assert sum(len(c.records) for c in cases) == 59
    assert sum(len(c.statements) for c in cases) == 26
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
    for case in _cases():
        try:
            got = [(c.op, c.rowid, c.rba.dump()) for c in _mine(case)]
        except C.CaptureStop:
            wrong += 1
            continue
        wrong += got != [(s.op, s.rowid, s.rba) for s in case.statements]
    assert wrong >= 8
