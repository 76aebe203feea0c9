"""The Extract's window scan (engine/redo/scan.py) reads what framing.iter_records reads.

- on the corpus's two real 23ai archives and on logs the framing writer builds (both byte
  orders, 512/1024/4096-byte blocks, LWNs of many blocks, records spanning blocks): the
  same records (offset, SCN, size, bytes) on any split points, each record in the range
  where it starts, with its LWN's SCN and time;
- the C block check and join equals the Python one, and its constants are layout.py's;
- a flipped byte in an archived log is RedoCorruptError naming the block; at the tail of a
  current log (an LWN half written) the scan ends before it; the recorded end cuts it.
"""

from __future__ import annotations

import contextlib
import re
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine._native import load as load_native
from engine.redo import framing as F
from engine.redo import layout as L
from engine.redo import scan as S
from engine.redo.errors import RedoCorruptError, RedoError
from tests.redo.corpus import LOG15, LOG16, need

_C = load_native("redomine")


def _want(data: bytes) -> list[tuple[int, int, int, bytes, int, int]]:
    """(offset, SCN, size, record bytes, LWN SCN, LWN time) of every record, by framing."""
    out = []
    h = F.read_header(data)
    bs, payload = h.block_size, h.block_size - 16
    lwn: F.Lwn | None = None
    for r in F.iter_records(data):
        lwn = r.lwn or lwn
        assert lwn is not None
        off = r.rba.block * bs + r.rba.offset
        # the record's bytes, block headers removed
        raw = bytearray()
        blk, at = r.rba.block, r.rba.offset
        while len(raw) < r.size:
            take = min(bs - at, r.size - len(raw))
            raw += data[blk * bs + at : blk * bs + at + take]
            blk, at = blk + 1, 16
        assert payload
        out.append((off, r.scn, r.size, bytes(raw), lwn.scn, lwn.time))
    return out


def _got(path: Path, start: int = 0, end: int | None = None, limit: int | None = None) -> list:
    sc = S.scan(path, start, end, limit)
    out = []
    for off, _stop, buf, lo, n, lscn, ltime in sc:
        assert sc.header is not None
        out.append((off, S.record_scn(buf, lo, sc.header.order), n, bytes(buf[lo : lo + n]),
                    lscn, ltime))  # fmt: skip
    return out


def _split(path: Path, cuts: list[int]) -> list:
    out, prev = [], 0
    for c in [*sorted(cuts), None]:
        out += _got(path, prev, c)
        prev = c if c is not None else prev
    return out


@pytest.mark.parametrize("log", [LOG15, LOG16], ids=["seq15", "seq16"])
def test_real_archives_read_as_framing_reads_them(log: Path) -> None:
    data = need(log).read_bytes()
    want = _want(data)
    assert _got(log) == want
    assert len(want) == (1110 if log == LOG15 else 7)
    # every record start and one byte either side as a split point
    for off, *_ in want[:: max(1, len(want) // 60)]:
        for c in (off - 1, off, off + 1):
            assert _split(log, [c]) == want


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 2_500_000), max_size=5))
def test_real_archive_on_any_split_points(cuts: list[int]) -> None:
    assert _split(need(LOG15), cuts) == _want(LOG15.read_bytes())


def _build(
    order: L.Order, bs: int, lwns: list[list[int]], current: bool = False, seq: int = 7
) -> bytes:
    """A log of LWNs of records with one vector of the given field sizes each."""
    built, scn = [], 1000
    for sizes in lwns:
        recs = []
        for i, n in enumerate(sizes):
            scn += 1
            vec = F.build_vector("12c", order, [bytes([scn % 251]) * n, b"ab"], layer=11,
                                 code=2, obj=77, dba=0x1000 + scn)  # fmt: skip
            lwn = F.Lwn(1, 1, 0, scn + len(sizes) - 1, 5000 + scn) if i == 0 else None
            recs.append(F.build_record(order, scn, 1, [vec], lwn))
        built.append(recs)
    nxt = 0xFFFFFFFFFFFF if current else scn + 1
    header = F.LogHeader(order, bs, 0, 0x13000000, 7, "DB", 1, seq, 99, 9, 1000, nxt, 1, 2, 0)
    return F.build_log(header, built)


_lwns = st.lists(st.lists(st.integers(0, 1500), min_size=1, max_size=6), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(
    order=st.sampled_from(["<", ">"]),
    bs=st.sampled_from(L.BLOCK_SIZES),
    lwns=_lwns,
    cuts=st.lists(st.integers(0, 60_000), max_size=4),
)
def test_built_logs_on_any_split_points(tmp_path_factory, order, bs, lwns, cuts) -> None:  # type: ignore[no-untyped-def]
    data = _build(order, bs, lwns)
    path = tmp_path_factory.mktemp("scan") / "1_7_99.dbf"
    path.write_bytes(data)
    want = _want(data)
    assert len(want) == sum(len(x) for x in lwns)
    assert _got(path) == want
    assert _split(path, cuts) == want
    # a range yields exactly the records that start in it
    for a, b in zip([0, *sorted(cuts)], [*sorted(cuts), None], strict=True):
        got = _got(path, a, b)
        assert all(a <= g[0] and (b is None or g[0] < b) for g in got)


def test_native_and_python_block_join_agree(tmp_path: Path) -> None:
    if _C is None:
        pytest.skip("the C kernel is not built")
    for order in ("<", ">"):
        for bs in L.BLOCK_SIZES:
            data = _build(order, bs, [[300, 2000, 10], [bs], [0, 0, 0]])
            seq = F.read_header(data).sequence
            for flip in (None, 2 * bs + 40, 3 * bs + 5, 3 * bs + 4, 3 * bs + 8, 3 * bs):
                d = bytearray(data)
                if flip is not None:
                    d[flip] ^= 0x10
                body = bytes(d[2 * bs :])
                joined, good = _C.ora_payloads(body, 2, seq, bs, order == ">")
                # Python: the same blocks, the same bytes
                pgood = 0
                parts = []
                for k in range(len(body) // bs):
                    blk = body[k * bs : (k + 1) * bs]
                    h = L.BLOCK_HEADER.unpack(blk, 0, order)
                    if (F.checksum_fold(blk, order) or h["signature"] != 1
                            or h["block_type"] != 0x22 or h["block"] != 2 + k
                            or h["sequence"] != seq):  # fmt: skip
                        break
                    parts.append(blk[16:])
                    pgood += 1
                assert (bytes(joined), good) == (b"".join(parts), pgood)
                assert (flip is None) == (good == len(body) // bs)


def test_the_c_constants_are_layout_py() -> None:
    """redomine.c's Oracle block constants checked against engine/redo/layout.py."""
    src = (Path(__file__).resolve().parents[2] / "engine/_native/redomine.c").read_text()
    consts = dict(re.findall(r"#define (ORA_\w+) (0x[0-9A-Fa-f]+|\d+)", src))
    fields = {f.name: f for f in L.BLOCK_HEADER.fields}
    assert int(consts["ORA_HEAD"], 0) == L.BLOCK_HEADER.size
    assert int(consts["ORA_SIGNATURE"], 0) == L.BLOCK_SIGNATURE
    assert int(consts["ORA_TYPE_REDO"], 0) == L.BLOCK_TYPE_REDO
    assert int(consts["ORA_BLOCK_AT"], 0) == fields["block"].offset
    assert int(consts["ORA_SEQUENCE_AT"], 0) == fields["sequence"].offset
    assert fields["signature"].offset == 0 and fields["block_type"].offset == 1
    assert fields["checksum"].offset == 14  # inside the XOR-folded block


@pytest.mark.parametrize("where", [2 * 512 + 3, 3 * 512 + 100, 4 * 512 + 8, 4 * 512 + 4])
def test_a_flipped_byte_in_an_archived_log_names_the_block(tmp_path: Path, where: int) -> None:
    data = bytearray(_build("<", 512, [[400, 900], [50], [700]]))
    data[where] ^= 0x01
    path = tmp_path / "1_7_99.dbf"
    path.write_bytes(bytes(data))
    with pytest.raises(RedoCorruptError) as exc:
        _got(path)
    assert f"block {where // 512}" in str(exc.value)


def test_a_current_log_ends_before_a_torn_tail(tmp_path: Path) -> None:
    data = _build("<", 512, [[400, 900], [50], [700, 700]], current=True)
    want = _want(data)
    path = tmp_path / "000000007.log"
    # the last LWN half written: its last block missing, then present but not sealed
    lwn3 = next(w[0] for w in want if w[1] == want[-2][1]) // 512
    path.write_bytes(data[: len(data) - 512])
    assert _got(path) == want[:-2]
    bad = bytearray(data)
    bad[-100] ^= 0xFF
    path.write_bytes(bytes(bad))
    assert _got(path) == want[:-2]
    # the recorded end (the side file's) cuts what is past it, whatever is there
    path.write_bytes(data)
    assert _got(path) == want
    assert _got(path, limit=lwn3 * 512) == want[:-2]
    assert _got(path, 0, None, limit=lwn3 * 512 + 1) == want[:-2]
    # an archived log cut short is corrupt
    arch = tmp_path / "1_7_99.dbf"
    arch.write_bytes(_build("<", 512, [[400, 900], [50]])[:-512])
    with pytest.raises(RedoCorruptError):
        _got(arch)


def test_first_scn_at_and_resume(tmp_path: Path) -> None:
    data = _build(">", 1024, [[400, 900, 5], [50], [3000]])
    path = tmp_path / "1_7_99.dbf"
    path.write_bytes(data)
    want = _want(data)
    for i, w in enumerate(want):
        assert S.first_scn_at(path, w[0]) == w[1]
        assert S.first_scn_at(path, w[0] + 1) == (want[i + 1][1] if i + 1 < len(want) else None)
    sc = S.scan(path, 0, want[2][0])
    assert len(list(sc)) == 2
    assert sc.resume == want[2][0]  # past the second record: where the third starts


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**9), st.integers(0, 255), st.integers(0, 3_000))
def test_mutated_real_log_never_crashes(where: int, value: int, start: int) -> None:
    data = bytearray(need(LOG16).read_bytes())
    data[where % len(data)] = value
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "x.dbf"
        path.write_bytes(bytes(data))
        with contextlib.suppress(RedoError):
            _got(path, start)


def test_scan_values_are_unpacked_from_layout() -> None:
    """The header fields the walk reads are the layout tables' (one statement of each)."""
    assert S.SIZE_AT == (0, "I")
    assert S.LWN_LEN_AT[0] == L.LWN_HEADER.fields[L.LWN_HEADER.names.index("lwn_len")].offset
    rec = F.build_record("<", 0x1_0000_0005, 3, [], F.Lwn(1, 1, 1, 0x2_0000_0009, 77))
    assert struct.unpack_from("<I", rec, S.LWN_TIME_AT[0])[0] == 77
    assert S.record_scn(rec, 0) == 0x1_0000_0005


def _c_layout() -> dict[str, int]:
    """The ``#define``s of redomine.c's layout block (AT_*, SIZE_* and the named values)."""
    src = (Path(__file__).resolve().parents[2] / "engine/_native/redomine.c").read_text()
    block = src[src.index("/* ---- layout:") : src.index("#define ROOM")]
    return {n: int(v, 0) for n, v in re.findall(r"#define (\w+) (0x[0-9A-Fa-f]+|\d+)", block)}


def test_the_c_walk_layout_is_the_python_tables() -> None:
    """Every offset, size and value the C record walk uses is the one layout.py or
    vectors.py states: AT_<TABLE>_<field> is the table's field offset."""
    from engine.redo import vectors as V
    from engine.redo.rowid import FB_F, FB_L

    layouts = {"RECORD_HEADER": L.RECORD_HEADER, "VECTOR_HEADER": L.VECTOR_HEADER_12C}
    tables = {
        "KTUDB": V.KTUDB_AT, "KTUB": V.KTUB_AT, "KTB": V.KTB_AT, "CLEANOUT": V.CLEANOUT_AT,
        "KDO": V.KDO_AT, "KDO_ROW": V.KDO_ROW_AT, "KDO_URP": V.KDO_URP_AT,
        "KDO_SLOT": V.KDO_SLOT_AT, "KDO_ARRAY": V.KDO_ARRAY_AT, "KTUDH": V.KTUDH_AT,
        "KTUCM": V.KTUCM_AT, "UNDO_APPLIED": V.UNDO_APPLIED_AT, "SUPP": V.SUPP_AT,
        "KTBBH": V.KTBBH_AT, "KTBBH_ITL": V.KTBBH_ITL_AT, "KDBH": V.KDBH_AT, "DDL": V.DDL_AT,
    }  # fmt: skip
    values = {
        "SIZE_RECORD_HEADER": L.RECORD_HEADER.size, "SIZE_LWN_HEADER": L.LWN_HEADER.size,
        "SIZE_VECTOR_HEADER_11G": L.VECTOR_HEADER_11G.size,
        "SIZE_VECTOR_HEADER_12C": L.VECTOR_HEADER_12C.size, "VLD_LWN": L.VLD_LWN,
        "MAX_FIELDS": L.MAX_FIELDS, "SIZE_KTB": V.KTB_SIZE, "SIZE_KTB_ITL": V.KTB_ITL_SIZE,
        "KTB_CLEANOUT": V.KTB_CLEANOUT, "SIZE_CLEANOUT": V.CLEANOUT_SIZE,
        "SIZE_CLEANOUT_ENTRY": V.CLEANOUT_ENTRY_SIZE, "KDO_OP_MASK": V.KDO_OP_MASK,
        "KDO_ROW_NULLS": V.KDO_ROW_NULLS, "KDO_URP_NULLS": V.KDO_URP_NULLS,
        "SIZE_KTUCM": V.KTUCM_SIZE, "SIZE_KTUCF": V.KTUCF_SIZE,
        "KTUCM_ROLLBACK": V.KTUCM_ROLLBACK, "SIZE_UNDO_APPLIED": V.UNDO_APPLIED_SIZE,
        "SIZE_KTUB": V.KTUB_SIZE, "SIZE_KTUDB": V.KTUDB_SIZE, "SIZE_KTUDH": V.KTUDH_SIZE,
        "SIZE_SUPP": V.SUPP_SIZE, "SUPP_TYPE": V.SUPP_TYPE,
        "SESSION_FIELDS": V.SESSION_FIELDS, "UNDO_CLS_FIRST": V.UNDO_CLS_FIRST,
        "SIZE_KTBBH_ITL": V.KTBBH_ITL, "KDBH_DIRECTORY": V.KDBH_DIRECTORY, "SIZE_DDL": V.DDL_SIZE,
        "KDO_FLAG_ONE_FIELD": V.KDO_FLAG_ONE_FIELD, "KDO_FLAG_COMPRESSED": V.KDO_FLAG_COMPRESSED,
        "FB_F": FB_F, "FB_L": FB_L,
    }  # fmt: skip
    consts = _c_layout()
    assert len(consts) > 60
    for name, value in consts.items():
        if name.startswith("AT_"):
            owner = next(
                (t for t in sorted([*layouts, *tables], key=len, reverse=True)
                 if name.startswith(f"AT_{t}_")),
                None,
            )  # fmt: skip
            assert owner is not None, f"{name}: no table of that name"
            fld = name[len(f"AT_{owner}_") :]
            if owner in layouts:
                lay = layouts[owner]
                want = lay.fields[lay.names.index(fld)].offset
            else:
                want = tables[owner][fld][0]
        else:
            assert name in values, f"{name}: not checked against the Python tables"
            want = values[name]
        assert value == want, f"redomine.c {name} = {value}, the Python tables say {want}"
    # the vector header's object number halves, and the xid's 8 bytes read as one key
    assert V.KTUDB_AT["slt"][0] == V.KTUDB_AT["usn"][0] + 2 == V.KTUDB_AT["sqn"][0] - 2
    assert V.KTB_AT["slt"][0] == V.KTB_AT["usn"][0] + 2 == V.KTB_AT["sqn"][0] - 2
    slt, sqn = V.UNDO_APPLIED_AT["slt"][0], V.UNDO_APPLIED_AT["sqn"][0]
    assert (slt, sqn) == (V.UNDO_APPLIED_AT["usn"][0] + 2, V.UNDO_APPLIED_AT["usn"][0] + 4)
    # the sizes the C walk reads 19.1 and 24.1 fields with: the last field of each ends where
    # it checks the field's length to
    assert max(o + struct.calcsize(c) for o, c in V.KTBBH_AT.values()) == V.KTBBH_AT["bdba"][0] + 4
    assert V.KTBBH_ITL_AT["sqn"] == (4, "I") and V.KDBH_AT["nrow"] == (2, "H")
    assert V.DDL_AT == {"usn": (0, "H"), "slt": (2, "H"), "sqn": (4, "I"), "obj": (8, "I")}


def test_an_online_log_is_read_to_its_recorded_end(tmp_path: Path) -> None:
    """The writer's online log (engine/redo/onlinelog.py): while current, the scan reads
    the LWNs below the side file's recorded end; an LWN written past it (not yet flushed,
    or torn) is not read; after the switch, the log reads whole without its side file."""
    from engine.redo import onlinelog as O

    path = tmp_path / "000000003.log"
    head = O.new_header(thread=2, sequence=3, first_scn=100, first_time=7, dbid=1,
                        db_name="DB", resetlogs_id=5, resetlogs_scn=1)  # fmt: skip
    log = O.OnlineLog.create(path, head)
    vec = F.build_vector("12c", "<", [b"x" * 700, b"yz"], layer=11, code=2, obj=9)
    spans = []
    for i in range(6):
        spans.append(log.add(101 + i, 1, vec, 50 + i))
        if i % 2:
            log.flush()
    assert _got(path) == _want_current(path)
    assert [g[0] for g in _got(path)] == [s[0] for s in spans]
    # an LWN written but not recorded: not read while the side file says the end is before it
    log.add(200, 1, vec, 60)
    log.flush(record=False)
    assert [g[0] for g in _got(path)] == [s[0] for s in spans]
    assert len(_got(path, limit=path.stat().st_size)) == 7
    # the same LWN with a byte torn, recorded: the scan ends before it (a current log)
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF
    path.write_bytes(bytes(data))
    log.flush()
    assert [g[0] for g in _got(path)] == [s[0] for s in spans]
    data[-3] ^= 0xFF
    path.write_bytes(bytes(data))
    log.close(archive=True, next_scn=201, next_time=61)
    O.side_path(path).unlink()
    got = _got(path)
    assert [g[1] for g in got] == [101, 102, 103, 104, 105, 106, 200]
    assert [g[4] for g in got] == [102, 102, 104, 104, 106, 106, 200]  # the LWNs' SCNs
    assert got == _want(path.read_bytes())


def _want_current(path: Path) -> list:
    """framing's reading of a current log: its header counts no blocks, so the blocks
    written are counted here as an archived header would count them."""
    data = path.read_bytes()
    h = F.read_header(data)
    bs = h.block_size
    import dataclasses

    return [
        w
        for w in _want_blocks(data, dataclasses.replace(h, blocks=len(data) // bs))
        if w is not None
    ]


def _want_blocks(data: bytes, h: F.LogHeader) -> list:
    out = []
    lwn: F.Lwn | None = None
    bs = h.block_size
    for r in F.iter_records(data, h):
        lwn = r.lwn or lwn
        assert lwn is not None
        raw = bytearray()
        blk, at = r.rba.block, r.rba.offset
        while len(raw) < r.size:
            take = min(bs - at, r.size - len(raw))
            raw += data[blk * bs + at : blk * bs + at + take]
            blk, at = blk + 1, 16
        out.append((r.rba.block * bs + r.rba.offset, r.scn, r.size, bytes(raw), lwn.scn, lwn.time))
    return out
