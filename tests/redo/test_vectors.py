"""Change vectors against real Oracle 19c records (oracdc's tests, read by path) and the
23ai fixture: opcodes, row flags, supplemental flags, ROWIDs as their authors state them."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.redo import framing as F
from engine.redo import vectors as V
from engine.redo.errors import RedoError
from engine.redo.rowid import fb_text, fb_value, parse_rowid, rowid
from tests.redo import oracdc
from tests.redo.corpus import LOG15, ORACDC, need

# Row flags the named operations do not carry themselves: Oracle's dump notation shows them
# for the pair, taken from the rows they lock/bind (previous records); not checked here.
_FB_NOT_CARRIED = {"11.4", "11.8", "11.16", "5.6", "5.11"}


def _files() -> list[Path]:
    return sorted(need(ORACDC).glob("*.java"))


def mismatches(rec: oracdc.HexRecord) -> list[str]:
    """What the comments state for a record and what we decode differently (empty: agree)."""
    r = F.parse_record(rec.raw, rec.order, rec.layout)  # type: ignore[arg-type]
    ops = [v.op for v in r.vectors]
    changes = V.row_changes(r)
    undos = [V.decode(v) for v in r.vectors if v.op == "5.1"]
    bad: list[str] = []
    for op, fb, sfb in rec.notes:
        where = f"{rec.file} {rec.name} {rec.rba} OP:{op}"
        if op not in ops:
            bad.append(f"{where}: not among {ops}")
            continue
        if op in _FB_NOT_CARRIED:
            continue
        if op == "5.1":
            u = undos[0]
            assert isinstance(u, V.Undo)
            if u.row and u.row.fb is not None and fb_text(u.row.fb) != fb:
                bad.append(f"{where}: fb {fb_text(u.row.fb)} != {fb}")
            if sfb is not None and (u.supp is None or fb_text(u.supp.fb) != sfb):
                bad.append(f"{where}: supp fb {u.supp and fb_text(u.supp.fb)} != {sfb}")
            continue
        got = [c for c in changes if c.op == op]
        if not got or got[0].fb is None or fb_text(got[0].fb) != fb:
            bad.append(
                f"{where}: fb {got and got[0].fb is not None and fb_text(got[0].fb)} != {fb}"
            )
    return bad


def test_every_hex_record_decodes_with_its_stated_flags() -> None:
    seen = noted = 0
    problems: list[str] = []
    for path in _files():
        for rec in oracdc.records(path):
            seen += 1
            noted += bool(rec.notes)
            r = F.parse_record(rec.raw, rec.order, rec.layout)  # type: ignore[arg-type]
            for v in r.vectors:
                V.decode(v)  # every vector of every record decodes (Other for the rest)
            problems += mismatches(rec)
    assert problems == []
    assert (seen, noted) == (95, 46)


def test_asserted_rowids_are_decoded() -> None:
    for path in _files():
        want = oracdc.asserted_rowids(path)
        if not want:
            continue
        got: set[str] = set()
        for rec in oracdc.records(path):
            r = F.parse_record(rec.raw, rec.order, rec.layout)  # type: ignore[arg-type]
            got |= {c.rowid for c in V.row_changes(r)}
            for v in r.vectors:
                d = V.decode(v)
                if isinstance(d, V.Undo) and d.supp and d.supp.bdba:
                    got.add(rowid(d.objd, d.supp.bdba, d.supp.slot or 0))
        assert want <= got, (path.name, sorted(want - got))


def test_opcodes_the_vectors_carry() -> None:
    ops: set[str] = set()
    for path in _files():
        for rec in oracdc.records(path):
            ops |= {v.op for v in F.parse_record(rec.raw, rec.order, rec.layout).vectors}  # type: ignore[arg-type]
    assert {
        "5.1",
        "5.2",
        "5.6",
        "5.11",
        "5.19",
        "5.20",
        "10.30",
        "10.35",
        "11.2",
        "11.3",
        "11.4",
        "11.5",
        "11.6",
        "11.8",
        "11.16",
        "11.17",
        "19.1",
    } <= ops


@pytest.mark.parametrize(
    ("table", "name", "offset"),
    [
        (V.KDO_ROW_AT, "fb", 17),
        (V.KDO_URP_AT, "fb", 17),
        (V.SUPP_AT, "fb", 0),
        (V.KDO_AT, "op", 11),
    ],
)
def test_a_mutated_flag_decode_fails_them(
    monkeypatch: pytest.MonkeyPatch, table, name, offset
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(table, name, (offset, table[name][1]))
    monkeypatch.setattr(V, "_WHOLE", {})  # (the tables read at once, as they were)
    problems: list[str] = []
    for path in _files():
        for rec in oracdc.records(path):
            try:
                problems += mismatches(rec)
            except Exception as exc:  # a wrong op decode may misread fields: that is a failure too
                problems.append(repr(exc))
    assert problems


def test_mutated_framing_fails_them(monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.redo import layout as L

    bad = L.Layout(
        "x",
        32,
        tuple(
            f if f.name != "con_id" else L.Field("con_id", 26, "H")
            for f in L.VECTOR_HEADER_12C.fields
        ),
    )
    monkeypatch.setitem(L.VECTOR_HEADERS, "12c", bad)
    rec = next(r for r in oracdc.records(need(ORACDC) / "Op11_17_Test.java") if r.name == "baLlb")
    assert F.parse_record(rec.raw, rec.order, rec.layout).vectors[0].con_id != 3  # type: ignore[arg-type]


def test_big_endian_and_11g_records() -> None:
    recs = {(r.order, r.layout) for p in _files() for r in oracdc.records(p)}
    assert {("<", "12c"), (">", "12c"), ("<", "11g")} <= recs
    llb = [r for r in oracdc.records(need(ORACDC) / "Op11_17_Test.java")]
    be = next(r for r in llb if r.order == ">")
    le = next(r for r in llb if r.order == "<")
    assert F.parse_record(be.raw, ">", "12c").vectors[0].op == "11.17"
    assert F.parse_record(le.raw, "<", "12c").vectors[0].con_id == 3
    assert F.parse_record(be.raw, ">", "12c").vectors[0].con_id == 0


def test_llb_records_decode_as_oracdc_states_them() -> None:
    """11.17 (LLB: LogMiner's LOB bookkeeping), oracdc's three 19c records: the type, the
    table's object number, the LOB id and the LOB column its assertions state, in both byte
    orders; and the transaction (the xid bytes in the log's order)."""
    recs = oracdc.records(need(ORACDC) / "Op11_17_Test.java")
    want = [  # (order, type, obj, lob id, column) as Op11_17_Test asserts them
        ("<", 1, 193768, "0000000100002ee38f9a", 0x24),
        (">", 1, 2308585, "000000010000f5447085", 0x7),
        ("<", 3, 191367, None, 0x45),
    ]
    assert len(recs) == len(want)
    for rec, (order, typ, obj, lid, col) in zip(recs, want, strict=True):
        assert rec.order == order
        (v,) = F.parse_record(rec.raw, rec.order, rec.layout).vectors  # type: ignore[arg-type]
        d = V.decode(v)
        assert isinstance(d, V.Llb), d
        assert (d.type, d.obj, d.column) == (typ, obj, col)
        assert (d.lob_id.hex() if d.lob_id is not None else None) == lid
        assert d.xid is not None and d.xid.usn > 0
    # the little-endian type 1 record's xid: 0x0054.00c.002886c9 in dump notation
    first = V.decode(F.parse_record(recs[0].raw, "<", "12c").vectors[0])
    assert isinstance(first, V.Llb) and first.xid == V.Xid(0x54, 0xC, 0x2886C9)


def test_an_llb_of_an_unknown_type_or_cut_short_is_never_a_crash() -> None:
    rec = oracdc.records(need(ORACDC) / "Op11_17_Test.java")[0]
    v = F.parse_record(rec.raw, rec.order, rec.layout).vectors[0]  # type: ignore[arg-type]
    other = replace(v, fields=(v.fields[0], b"\x07", v.fields[2]))
    assert V.decode(other) == V.Other("11.17")
    for n in range(len(v.fields[2])):
        cut = replace(v, fields=(v.fields[0], v.fields[1], v.fields[2][:n]))
        with contextlib.suppress(RedoError):
            V.decode(cut)


def test_the_23ai_insert_bound() -> None:
    recs = list(F.iter_records(need(LOG15).read_bytes()))
    changes = [c for r in recs for c in V.row_changes(r) if c.obj == 72726]
    assert len(changes) == 1
    c = changes[0]
    assert (c.op, c.xid and c.xid.text(), c.con_id, fb_text(c.fb or 0), c.undo_op) == (
        "11.2",
        "10.12.572",
        3,
        "--H-FL--",
        "DRP",
    )
    assert c.after == ((0, b"\xc1\x02"), (1, b"hello world"))
    assert c.rowid == "AAARwWAAYAAAAAOAAA" and parse_rowid(c.rowid) == (72726, 24, 14, 0)
    decoded = [V.decode(v) for r in recs for v in r.vectors]  # every vector of the log: no error
    assert (
        sum(isinstance(d, V.Session) and d.user == "OLR_TEST" for d in decoded) == 13
    )  # its DDL and its insert
    ends = [d for d in decoded if isinstance(d, V.End)]
    assert len(ends) == 15 and not any(e.rollback for e in ends)


def test_fb_notation() -> None:
    assert fb_text(0x2C) == "--H-FL--" and fb_value("-C---L--") == 0x44
    with pytest.raises(ValueError):
        fb_value("--X-----")


def _all_hex_records() -> list[oracdc.HexRecord]:
    return [r for p in _files() for r in oracdc.records(p)]


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_mutated_records_decode_or_fail_cleanly(data: st.DataObject) -> None:
    """Any byte of any real record changed: every vector decodes or raises RedoError."""
    recs = _all_hex_records()
    rec = recs[data.draw(st.integers(0, len(recs) - 1))]
    raw = bytearray(rec.raw)
    for _ in range(data.draw(st.integers(1, 4))):
        raw[data.draw(st.integers(24, len(raw) - 1))] = data.draw(st.integers(0, 255))
    try:
        r = F.parse_record(bytes(raw), rec.order, rec.layout)  # type: ignore[arg-type]
    except RedoError:
        return
    for v in r.vectors:
        with contextlib.suppress(RedoError):
            V.decode(v)
    with contextlib.suppress(RedoError):
        V.row_changes(r)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**9), st.binary(min_size=1, max_size=8))
def test_mutated_log_resealed_never_crashes_the_capture(where: int, junk: bytes) -> None:
    """Bytes of a real log changed and the block's checksum made right again, so that the
    change reaches the vector decoders and the capture: only RedoError, never a crash."""
    from engine.redo import capture as C
    from engine.redo import dictionary
    from tests.redo.corpus import CHECKPOINT

    data = bytearray(need(LOG15).read_bytes())
    at = 1024 + where % (len(data) - 1024 - len(junk))
    data[at : at + len(junk)] = junk
    blk = at // 512 * 512
    data[blk + 14 : blk + 16] = b"\0\0"
    data[blk + 14 : blk + 16] = F.checksum_fold(bytes(data[blk : blk + 512])).to_bytes(2, "little")
    cap = C.Capture(dictionary.load(need(CHECKPOINT)), lambda _t: True)
    try:
        for r in F.iter_records(bytes(data)):
            cap.feed(r)
    except RedoError:
        pass


def test_direct_path_blocks() -> None:
    """19.1: the block image's rows, as the tests state their object, container and rows."""
    import re

    for name in ("Op19_1_Test.java", "Op19_1_IdxObj16334300_Test.java"):
        path = need(ORACDC) / name
        text = path.read_text(encoding="utf-8")
        obj = int(re.search(r"changeColb\(\)\.obj\(\), (\d+)\)", text).group(1))  # type: ignore[union-attr]
        con = int(re.search(r"changeColb\(\)\.conId\(\), (\d+)\)", text).group(1))  # type: ignore[union-attr]
        rows = re.search(r"qmRowCount\(\), (\d+)\)", text)
        (rec,) = oracdc.records(path)
        r = F.parse_record(rec.raw, rec.order, rec.layout)  # type: ignore[arg-type]
        (v,) = [v for v in r.vectors if v.op == "19.1"]
        d = V.decode(v)
        assert isinstance(d, V.DirectLoad)
        assert (v.obj, d.objd, v.con_id) == (obj, obj, con)
        if rows:
            assert len(d.rows) == int(rows.group(1)) == 9
            assert [c[0][1] for _s, _fb, c in d.rows] == [bytes([0xC1, 2 + i]) for i in range(9)]
            assert {fb_text(fb) for _s, fb, _c in d.rows} == {"--H-FL--"}
        else:
            assert d.block_type == 2 and d.rows == ()  # an index block: no table rows
