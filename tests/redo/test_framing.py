"""Oracle redo framing: the real 23ai logs, the writer round trip, faults and fuzz."""

from __future__ import annotations

import collections
import contextlib
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.redo import framing as F
from engine.redo import layout as L
from engine.redo.errors import RedoCorruptError, RedoError, RedoTrailingError, RedoTruncatedError
from tests.harness.kernels import needs
from tests.redo.corpus import LOG15, LOG16, need


def _log(path):  # type: ignore[no-untyped-def]
    return need(path).read_bytes()


def test_header_of_the_23ai_archives() -> None:
    h = F.read_header(_log(LOG15))
    assert (h.order, h.block_size, h.thread, h.sequence) == ("<", 512, 1, 15)
    assert (h.resetlogs_id, h.first_scn, h.next_scn) == (1224959854, 2266630, 2267717)
    assert h.version_text == "23.6.0.0" and h.layout == "12c" and h.db_name == "FREE"
    assert h.description == "T 0001, S 0000000015, SCN 0x0000000000229606-0x0000000000229a45"
    assert L.redo_time(h.first_time) == (2026, 3, 7, 1, 44, 38)
    h16 = F.read_header(_log(LOG16))
    assert (h16.sequence, h16.first_scn, h16.next_scn) == (16, 2267717, 2267723)


def test_every_record_of_both_logs_is_read_exactly() -> None:
    for path, nrec, nvec in ((LOG15, 1110, 1194), (LOG16, 7, 14)):
        data = _log(path)
        st_ = F.ReadStats()
        recs = list(F.iter_records(data, stats=st_))
        assert (len(recs), sum(len(r.vectors) for r in recs)) == (nrec, nvec)
        assert st_.blocks == F.read_header(data).blocks - 2  # every block after the header
        # each record's bytes exactly consumed by its vectors; SCNs never go back
        assert all(a.scn <= b.scn for a, b in itertools.pairwise(recs))
    ops = collections.Counter(v.op for r in F.iter_records(_log(LOG15)) for v in r.vectors)
    assert (ops["5.2"], ops["5.4"], ops["5.1"], ops["11.2"], ops["23.1"], ops["13.59"]) == (
        16,
        15,
        32,
        8,
        512,
        127,
    )


def test_the_user_insert_record() -> None:
    recs = list(F.iter_records(_log(LOG15)))
    rec = next(r for r in recs if any(v.op == "11.2" and v.obj == 72726 for v in r.vectors))
    assert rec.scn == 2267707 and rec.rba.dump() == "0x00000f.00000244.0168"
    assert [v.op for v in rec.vectors] == ["5.2", "5.1", "11.2", "5.20"]
    irp = next(v for v in rec.vectors if v.op == "11.2")
    assert (irp.con_id, irp.afn, irp.dba) == (3, 24, 0x0600000E)
    assert b"hello world" in b"".join(irp.fields)


@pytest.mark.parametrize("where", [0, 20, 28, 512 + 8, 512 + 160, 1024 + 100, 512 * 400 + 40])
def test_one_flipped_byte_is_found(where: int) -> None:
    data = bytearray(_log(LOG15))
    data[where] ^= 0x40
    with pytest.raises(RedoCorruptError):
        list(F.iter_records(bytes(data)))


def test_truncated_log() -> None:
    data = _log(LOG15)
    with pytest.raises(RedoTruncatedError):
        list(F.iter_records(data[: 512 * 300 + 17]))
    with pytest.raises(RedoTruncatedError):
        F.read_header(data[:10])


def test_block_from_another_sequence() -> None:
    a, b = bytearray(_log(LOG15)), _log(LOG16)
    a[512 * 3 : 512 * 4] = b[512 * 3 : 512 * 4]
    with pytest.raises(RedoCorruptError, match="sequence 16"):
        list(F.iter_records(bytes(a)))


def test_record_given_whole_truncated_trailing() -> None:
    rec = F.build_record("<", 5, 1, [F.build_vector("12c", "<", [b"abc"], layer=11, code=2)])
    assert F.parse_record(rec).vectors[0].fields == (b"abc",)
    with pytest.raises(RedoTruncatedError):
        F.parse_record(rec[:-1])
    with pytest.raises(RedoTrailingError):
        F.parse_record(rec + b"\0")


_u16 = st.integers(0, 0xFFFF)
_u32 = st.integers(0, 0xFFFFFFFF)
_vec = st.fixed_dictionaries(
    {
        "layer": st.integers(0, 255),
        "code": st.integers(0, 255),
        "cls": _u16,
        "afn": _u16,
        "dba": _u32,
        "obj": _u32,
        "scn": st.integers(0, (1 << 48) - 1),
        "seq": st.integers(0, 255),
        "typ": st.integers(0, 255),
        "con_id": _u16,
    }
)
_fields = st.lists(st.binary(max_size=40), max_size=6)


@settings(max_examples=60, deadline=None)
@given(
    order=st.sampled_from(["<", ">"]),
    layout=st.sampled_from(["11g", "12c"]),
    bs=st.sampled_from(L.BLOCK_SIZES),
    lwns=st.lists(
        st.lists(st.lists(st.tuples(_vec, _fields), max_size=3), min_size=1, max_size=4),
        min_size=1,
        max_size=4,
    ),
    seq=st.integers(1, 1 << 20),
    rl=_u32,
    first=st.integers(0, (1 << 47) - 1),
)
def test_round_trip(order, layout, bs, lwns, seq, rl, first) -> None:  # type: ignore[no-untyped-def]
    version = 0x13000000 if layout == "12c" else 0x0B200300
    built, expect = [], []
    scn = first
    for lw in lwns:
        recs = []
        for i, vecs in enumerate(lw):
            scn += 1
            vb = []
            for hdr, fields in vecs:
                h = dict(hdr)
                if layout == "11g":
                    h.pop("con_id")
                vb.append(F.build_vector(layout, order, fields, **h))
                expect.append((scn, hdr, tuple(fields)))
            lwn = F.Lwn(1, 1, 0, scn, 12345) if i == 0 else None
            recs.append(F.build_record(order, scn, 1, vb, lwn))
        built.append(recs)
    header = F.LogHeader(order, bs, 0, version, 7, "DB", 2, seq, rl, 9, first, scn + 1, 1, 2, 0)
    data = F.build_log(header, built)
    h = F.read_header(data)
    assert (
        h.order,
        h.block_size,
        h.sequence,
        h.thread,
        h.resetlogs_id,
        h.first_scn,
        h.next_scn,
    ) == (
        order,
        bs,
        seq,
        2,
        rl,
        first,
        scn + 1,
    )
    got = [(r.scn, v) for r in F.iter_records(data) for v in r.vectors]
    assert len(got) == len(expect)
    for (scn_, v), (escn, hdr, fields) in zip(got, expect, strict=True):
        assert scn_ == escn and v.fields == fields and v.op == f"{hdr['layer']}.{hdr['code']}"
        assert (v.cls, v.afn, v.dba, v.obj, v.scn, v.seq, v.typ) == tuple(
            hdr[k] for k in ("cls", "afn", "dba", "obj", "scn", "seq", "typ")
        )
        assert v.con_id == (hdr["con_id"] if layout == "12c" else 0)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=3000), st.sampled_from(["<", ">"]), st.sampled_from(["11g", "12c"]))
def test_arbitrary_bytes_never_crash(blob: bytes, order, layout) -> None:  # type: ignore[no-untyped-def]
    with contextlib.suppress(RedoError):
        F.parse_record(blob, order, layout)
    with contextlib.suppress(RedoError):
        list(F.iter_records(blob))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**9), st.integers(0, 255))
def test_mutated_real_log_never_crashes(where: int, value: int) -> None:
    data = bytearray(_log(LOG16))
    data[where % len(data)] = value
    with contextlib.suppress(RedoError):
        list(F.iter_records(bytes(data)))


def _read(data: bytes, after_scn: int = -1) -> tuple[list[tuple[object, ...]], str | None]:
    """What the reader gives: each record's RBA, SCN and vectors, and the error it stops
    with (its type, message and offset), if any."""
    got: list[tuple[object, ...]] = []
    try:
        for r in F.iter_records(data, after_scn=after_scn):
            got.append((r.rba, r.scn, r.vectors))
    except RedoError as exc:
        return got, f"{type(exc).__name__}: {exc.message} @{exc.offset}"
    return got, None


@needs("redomine")
@pytest.mark.parametrize("where", [None, 512 * 2 + 40, 512 * 3 + 4, 512 * 200 + 300, 512 * 401])
def test_the_c_block_check_reads_as_the_python_one(
    monkeypatch: pytest.MonkeyPatch, where: int | None
) -> None:
    """The framing reader with the C block check (redomine's ora_payloads) and without it:
    the same records, and on a bad block (a flipped byte, a wrong block number) the same
    error at the same offset, records before it read the same."""
    data = bytearray(need(LOG15).read_bytes())
    if where is not None:
        data[where] ^= 0x01
    native = _read(bytes(data))
    monkeypatch.setattr(F, "_NATIVE", None)
    assert _read(bytes(data)) == native
    assert (native[1] is None) == (where is None)
    monkeypatch.undo()
    monkeypatch.setattr(F, "CHECK_BLOCKS", 7)  # (the C check a few blocks at a time)
    assert _read(bytes(data)) == native


def test_records_at_or_below_an_scn_are_stepped_over() -> None:
    data = need(LOG15).read_bytes()
    every, _ = _read(data)
    for scn in (0, 2267000, 2267707, 2267716, 10**12):
        got, err = _read(data, after_scn=scn)
        assert err is None and got == [r for r in every if r[1] > scn]  # type: ignore[operator]
