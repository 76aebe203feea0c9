"""Capture from archived logs only: the 23ai fixture end to end through the redo room
(catalog, dictionary, framing, vectors, values, transactions), gaps, incarnations,
rollbacks, dictionary changes."""

from __future__ import annotations

import fnmatch
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.redo import capture as C
from engine.redo import catalog, dictionary, framing
from engine.redo import layout as L
from tests.harness.kernels import needs
from tests.redo.corpus import CHECKPOINT, LOG15, LOG16, OLR, need

FMT = "arch%t_%s_%r.dbf"


def _run(
    location: str, dic: dictionary.Dictionary, pattern: str = "OLR_TEST.*"
) -> tuple[list[C.Transaction], list[str], C.Capture]:
    logs = catalog.chain(catalog.list_logs(location, FMT), 1, 15, None, location)
    warns: list[str] = []
    cap = C.Capture(dic, lambda t: fnmatch.fnmatch(t.full_name, pattern), warns.append)
    out: list[C.Transaction] = []
    for f in logs:
        for r in framing.iter_records(Path(f.location).read_bytes()):
            out += cap.feed(r)
    return out, warns, cap


def test_the_fixture_gives_exactly_one_transaction() -> None:
    dic = dictionary.load(need(CHECKPOINT))
    out, warns, cap = _run(str(need(OLR)), dic)
    assert warns == [] and cap.records == 1110 + 7
    assert len(out) == 1
    t = out[0]
    assert (t.xid.text(), t.commit_scn, t.user) == (
        "10.12.572",
        2267707,
        "FREEPDB1.OLR_TEST",
    )  # PDB.USER: as EXCLUDEUSER names it
    assert L.redo_time(t.commit_time) == (2026, 3, 7, 1, 44, 40)
    (ch,) = t.changes
    assert (ch.op, ch.table.full_name, ch.table.con_id, ch.scn) == (
        "INSERT",
        "OLR_TEST.TEST_CDC",
        3,
        2267707,
    )
    assert ch.after == (("ID", Decimal(1)), ("NAME", "hello world")) and ch.before == ()


def test_other_tables_are_not_captured() -> None:
    dic = dictionary.load(need(CHECKPOINT))
    assert _run(str(need(OLR)), dic, "OTHER.*")[0] == []


def test_dictionary_formats_agree() -> None:
    olr = dictionary.load(need(CHECKPOINT))
    t = next(t for t in olr.tables if t.full_name == "OLR_TEST.TEST_CDC")
    assert (t.con_id, t.obj, t.data_objs, t.key) == (3, 72726, (72726,), ("ID",))
    assert [(c.name, c.seg_col, c.type, c.charset_form) for c in t.columns] == [
        ("ID", 1, "NUMBER", 0),
        ("NAME", 2, "VARCHAR2", 1),
    ]
    import json

    again = dictionary.from_ggsci(json.loads(json.dumps(olr.to_json())))
    assert again == olr


def test_dictionary_errors(tmp_path: Path) -> None:
    for text in (
        "not json",
        "[]",
        '{"format": "x"}',
        '{"format": "ggsci-oracle-dictionary/1", "tables": [{}]}',
    ):
        p = tmp_path / "d.json"
        p.write_text(text)
        with pytest.raises(dictionary.DictionaryError, match=r"d\.json"):
            dictionary.load(p)
    with pytest.raises(dictionary.DictionaryError, match="absent"):
        dictionary.load(tmp_path / "absent.json")


def test_missing_sequence_and_other_incarnation(tmp_path: Path) -> None:
    shutil.copy(need(LOG16), tmp_path / LOG16.name)
    with pytest.raises(
        catalog.MissingLogError,
        match="OGG-00446: Could not find archived log for sequence 15 thread 1",
    ):
        catalog.chain(catalog.list_logs(str(tmp_path), FMT), 1, 15, None, str(tmp_path))
    shutil.copy(need(LOG15), tmp_path / LOG15.name)
    assert [
        f.sequence
        for f in catalog.chain(catalog.list_logs(str(tmp_path), FMT), 1, 15, None, str(tmp_path))
    ] == [15, 16]
    # a log of sequence 17 from another incarnation, built by the framing writer
    h = framing.read_header(LOG16.read_bytes())
    import dataclasses

    other = dataclasses.replace(
        h, sequence=17, resetlogs_id=h.resetlogs_id + 1, first_scn=h.next_scn
    )
    rec = framing.build_record("<", h.next_scn, 1, [], framing.Lwn(0, 1, 1, h.next_scn, 0))
    (tmp_path / "arch1_17_99.dbf").write_bytes(framing.build_log(other, [[rec]]))
    with pytest.raises(catalog.IncarnationError, match=r"arch1_17_99\.dbf belongs to incarnation"):
        catalog.chain(catalog.list_logs(str(tmp_path), FMT), 1, 15, None, str(tmp_path))
    (tmp_path / "arch1_17_99.dbf").unlink()
    (tmp_path / LOG15.name).unlink()
    (tmp_path / "arch1_14_1224959854.dbf").write_bytes(LOG15.read_bytes())  # named 14, is 15
    with pytest.raises(catalog.MissingLogError):
        catalog.chain(catalog.list_logs(str(tmp_path), FMT), 1, 14, None, str(tmp_path))


def test_a_rolled_back_transaction_is_dropped() -> None:
    dic = dictionary.load(need(CHECKPOINT))
    data = bytearray(need(LOG15).read_bytes())
    # flip the 5.4's rollback flag of 10.12.572 (ktucm flg at 16) and reseal the block
    recs = list(framing.iter_records(bytes(data)))
    commit = next(
        r
        for r in recs
        if any(v.op == "5.4" and v.con_id == 3 and v.cls == 35 for v in r.vectors)
        and r.scn == 2267708
    )
    off = commit.rba.block * 512 + commit.rba.offset
    at = bytes(data).find(bytes.fromhex("0c0000003c020000000000000900000012000000"), off)
    assert at > 0 and at // 512 == commit.rba.block
    data[at + 16] |= 0x04
    blk = at // 512 * 512
    data[blk + 14 : blk + 16] = b"\0\0"
    data[blk + 14 : blk + 16] = framing.checksum_fold(bytes(data[blk : blk + 512])).to_bytes(
        2, "little"
    )
    warns: list[str] = []
    cap = C.Capture(dic, lambda t: t.owner == "OLR_TEST", warns.append)
    out = [t for r in framing.iter_records(bytes(data)) for t in cap.feed(r)]
    assert out == []


def _irp(order: L.Order, obj: int, con: int, cols: list[bytes], scn: int) -> bytes:
    """A level-11 IRP record written with the vector tables (KTB op F, KDO IRP, columns)."""
    import struct

    from engine.redo import vectors as V

    ktb = bytearray(24)
    ktb[0] = 0x01
    struct.pack_into(order + "HHI", ktb, 8, 7, 3, 99)
    kdo = bytearray(48)
    struct.pack_into(order + "I", kdo, V.KDO_AT["bdba"][0], 0x01800010)
    kdo[V.KDO_AT["op"][0]] = 2
    kdo[V.KDO_ROW_AT["fb"][0]] = 0x2C
    kdo[V.KDO_ROW_AT["cc"][0]] = len(cols)
    vec = framing.build_vector(
        "12c",
        order,
        [bytes(ktb), bytes(kdo), *cols],
        layer=11,
        code=2,
        cls=1,
        afn=6,
        dba=0x01800010,
        obj=obj,
        con_id=con,
        scn=scn,
    )
    return framing.build_record(order, scn, 1, [vec])


def test_a_dictionary_change_on_a_captured_table_stops() -> None:
    """A COL$ row for the captured table's OBJ# after the dictionary's SCN (ALTER TABLE ADD
    COLUMN writes one): the Extract stops naming the table and the SCN."""
    from engine.redo.codecs import encode_number

    dic = dictionary.load(need(CHECKPOINT))
    col_data_obj = next(t for t in dic.tables if t.full_name == "SYS.COL$").data_objs[0]
    cap = C.Capture(dic, lambda t: t.owner == "OLR_TEST")
    early = framing.parse_record(
        _irp("<", col_data_obj, 3, [encode_number(72726), encode_number(3)], dic.scn)
    )
    assert cap.feed(early) == []  # before the dictionary's SCN: already in it
    other = framing.parse_record(
        _irp("<", col_data_obj, 3, [encode_number(555), encode_number(3)], dic.scn + 5)
    )
    assert cap.feed(other) == []  # another table's column
    late = framing.parse_record(
        _irp("<", col_data_obj, 3, [encode_number(72726), encode_number(3)], dic.scn + 9)
    )
    with pytest.raises(
        C.CaptureStop, match=rf"structure of OLR_TEST\.TEST_CDC changed at SCN {dic.scn + 9}"
    ):
        cap.feed(late)


def test_an_insert_written_with_the_tables_is_captured() -> None:
    from engine.redo.codecs import encode_number

    dic = dictionary.load(need(CHECKPOINT))
    cap = C.Capture(dic, lambda t: t.owner == "OLR_TEST")
    for order in ("<", ">"):
        rec = framing.parse_record(
            _irp(order, 72726, 3, [encode_number(5), b"x"], dic.scn + 1), order
        )
        assert cap.feed(rec) == []
    (tx,) = cap.open.values()
    assert [c.after for _ref, c in tx.changes] == [(("ID", Decimal(5)), ("NAME", "x"))] * 2


def test_an_array_update_of_a_captured_table_stops() -> None:
    """11.19 (Oracle's multi-row update) is not decoded: on a captured table the capture stops
    naming the table, the opcode and the SCN; on another table it is stepped over."""
    dic = dictionary.load(need(CHECKPOINT))
    cap = C.Capture(dic, lambda t: t.owner == "OLR_TEST")

    def array_update(obj: int) -> framing.Record:
        vec = framing.build_vector("12c", "<", [bytes(24), bytes(24)], layer=11, code=19,
                                   cls=1, afn=6, dba=0x01800010, obj=obj, con_id=3)  # fmt: skip
        return framing.parse_record(framing.build_record("<", dic.scn + 3, 1, [vec]))

    assert cap.feed(array_update(555)) == []
    with pytest.raises(C.CaptureStop, match=rf"OLR_TEST\.TEST_CDC: an array update .*11\.19.* "
                       rf"at SCN {dic.scn + 3}"):  # fmt: skip
        cap.feed(array_update(72726))


def test_a_ddl_in_oracles_24_1_layout_on_a_captured_table_stops() -> None:
    """Oracle's 24.1 (OpenLogReplicator's reader read as its description: the xid in field 1,
    the DDL type at its byte 16, the object in field 12): on a captured table after the
    dictionary's SCN the capture stops naming it; a temporary object's DDL type, another
    object, or a DDL already in the dictionary goes by. Both byte orders."""
    import struct

    from engine.redo import vectors as V

    dic = dictionary.load(need(CHECKPOINT))

    def ddl(order: L.Order, obj: int, ddl_type: int, scn: int) -> framing.Record:
        head = bytearray(22)
        struct.pack_into(order + "HHI", head, 4, 10, 12, 572)
        struct.pack_into(order + "H", head, V.ORACLE_DDL_AT["type"][0], ddl_type)
        fields = [bytes(head)] + [b"x"] * (V.ORACLE_DDL_OBJ_FIELD - 1)
        fields.append(struct.pack(order + "I", obj))
        vec = framing.build_vector("12c", order, fields, layer=24, code=1, cls=1, afn=6,
                                   dba=0, obj=0xFFFFFFFF, con_id=3, scn=scn)  # fmt: skip
        return framing.parse_record(framing.build_record(order, scn, 1, [vec]), order)

    for order in ("<", ">"):
        cap = C.Capture(dic, lambda t: t.owner == "OLR_TEST")
        assert cap.feed(ddl(order, 72726, 15, dic.scn)) == []  # in the dictionary already
        assert cap.feed(ddl(order, 555, 15, dic.scn + 2)) == []  # another object
        assert cap.feed(ddl(order, 72726, 4, dic.scn + 3)) == []  # a temporary object's type
        with pytest.raises(C.CaptureStop, match=rf"DDL statement on OLR_TEST\.TEST_CDC at SCN "
                           rf"{dic.scn + 4}"):  # fmt: skip
            cap.feed(ddl(order, 72726, 15, dic.scn + 4))


def test_unsupported_column_types_warn_by_table_and_column() -> None:
    dic = dictionary.load(need(CHECKPOINT))
    t = next(t for t in dic.tables if t.full_name == "OLR_TEST.TEST_CDC")
    lob = dictionary.Column("DOC", 3, "CLOB", 4000)
    t2 = dictionary.Table(t.con_id, t.owner, t.name, t.obj, t.data_objs, (*t.columns, lob), t.key)
    warns: list[str] = []
    C.Capture(
        dictionary.Dictionary(dic.scn, "AL32UTF8", "AL16UTF16", (t2,)),
        lambda _t: True,
        warns.append,
    )
    assert warns == ["OGG-01431: column DOC of OLR_TEST.TEST_CDC has type CLOB, not captured"]


def test_a_direct_path_load_gives_an_insert_per_row() -> None:
    """oracdc's real 19.1 block image written as a block of OLR_TEST.TEST_CDC, inside a
    transaction (5.2 ... 5.4 built with the vector tables): nine inserts, IDs 1..9."""
    import struct

    from tests.redo import oracdc
    from tests.redo.corpus import ORACDC

    dic = dictionary.load(need(CHECKPOINT))
    (src,) = oracdc.records(need(ORACDC) / "Op19_1_Test.java")
    block = next(v for v in framing.parse_record(src.raw).vectors if v.op == "19.1").fields[0]
    ktudh = bytearray(32)
    struct.pack_into("<HxxI", ktudh, 0, 5, 77)
    ktucm = bytearray(20)
    struct.pack_into("<HxxI", ktucm, 0, 5, 77)
    hdr = {"con_id": 3, "afn": 23}
    begin = framing.build_vector("12c", "<", [bytes(ktudh)], layer=5, code=2, cls=15 + 2 * 4, **hdr)
    load = framing.build_vector(
        "12c", "<", [block], layer=19, code=1, cls=1, dba=0x0600000E, obj=72726, **hdr
    )
    end = framing.build_vector("12c", "<", [bytes(ktucm)], layer=5, code=4, cls=15 + 2 * 4, **hdr)
    lwn = framing.Lwn(0, 1, 1, dic.scn + 1, 0)
    cap = C.Capture(dic, lambda t: t.owner == "OLR_TEST")
    assert (
        cap.feed(
            framing.parse_record(framing.build_record("<", dic.scn + 1, 1, [begin, load], lwn))
        )
        == []
    )
    (tx,) = cap.feed(framing.parse_record(framing.build_record("<", dic.scn + 2, 1, [end])))
    assert tx.xid.text() == "4.5.77" and tx.commit_scn == dic.scn + 1
    assert [(c.op, c.after[0]) for c in tx.changes] == [
        ("INSERT", ("ID", Decimal(i))) for i in range(1, 10)
    ]
    assert len({c.rowid for c in tx.changes}) == 9


@pytest.mark.parametrize("fb", ["--H-F--N", "-----LP-", "--H-F---"])
def test_a_direct_path_load_of_a_row_in_pieces_stops(fb: str) -> None:
    """The same real block with its first row's flags made a piece's (a column cut, P / N;
    or the row's other pieces elsewhere): never half a row, the capture stops naming it."""
    import struct

    from engine.redo import vectors as V
    from engine.redo.rowid import fb_value
    from tests.redo import oracdc
    from tests.redo.corpus import ORACDC

    dic = dictionary.load(need(CHECKPOINT))
    (src,) = oracdc.records(need(ORACDC) / "Op19_1_Test.java")
    block = bytearray(
        next(v for v in framing.parse_record(src.raw).vectors if v.op == "19.1").fields[0]
    )
    kdbh = V.KTBBH_ITL + V.KTBBH_ITL * block[V.KTBBH_AT["itc"][0]]
    ntab = block[kdbh + V.KDBH_AT["ntab"][0]]
    (off,) = struct.unpack_from("<H", block, kdbh + V.KDBH_DIRECTORY + 4 * ntab)
    assert block[kdbh + off] == fb_value("--H-FL--")
    block[kdbh + off] = fb_value(fb)
    ktudh = bytearray(32)
    struct.pack_into("<HxxI", ktudh, 0, 5, 77)
    hdr = {"con_id": 3, "afn": 23}
    begin = framing.build_vector("12c", "<", [bytes(ktudh)], layer=5, code=2, cls=15 + 2 * 4, **hdr)
    load = framing.build_vector(
        "12c", "<", [bytes(block)], layer=19, code=1, cls=1, dba=0x0600000E, obj=72726, **hdr
    )
    lwn = framing.Lwn(0, 1, 1, dic.scn + 1, 0)
    cap = C.Capture(dic, lambda t: t.owner == "OLR_TEST")
    rec = framing.parse_record(framing.build_record("<", dic.scn + 1, 1, [begin, load], lwn))
    with pytest.raises(C.CaptureStop, match=f"a row in pieces \\({fb}\\) in a direct-path load"):
        cap.feed(rec)


def test_a_direct_load_block_in_a_record_of_its_own_is_the_loaders() -> None:
    """A 19.1 in a record with no 5.1 / 5.2 (the embedded database's writer logs the load's
    5.1 first, each block after it alone) is put in the transaction its block's first ITL
    entry names, as the Extract's task miner puts it; Oracle's own block (oracdc's 19c, ITL
    0xffff.000.00000000) names none, and alone it is not attributed."""
    import struct

    from engine.redo import vectors as V
    from tests.redo import oracdc
    from tests.redo.corpus import ORACDC

    dic = dictionary.load(need(CHECKPOINT))
    (src,) = oracdc.records(need(ORACDC) / "Op19_1_Test.java")
    real = next(v for v in framing.parse_record(src.raw).vectors if v.op == "19.1").fields[0]
    ours = bytearray(real)
    struct.pack_into("<HHI", ours, V.KTBBH_ITL, 4, 5, 77)  # the loader's xid, 4.5.77
    ktudh = bytearray(32)
    struct.pack_into("<HxxI", ktudh, 0, 5, 77)
    ktucm = bytearray(20)
    struct.pack_into("<HxxI", ktucm, 0, 5, 77)
    hdr = {"con_id": 3, "afn": 23}
    got = {}
    for name, block in (("ours", bytes(ours)), ("real", real)):
        begin = framing.build_vector(
            "12c", "<", [bytes(ktudh)], layer=5, code=2, cls=15 + 2 * 4, **hdr
        )
        load = framing.build_vector(
            "12c", "<", [block], layer=19, code=1, cls=1, dba=0x0600000E, obj=72726, **hdr
        )
        end = framing.build_vector(
            "12c", "<", [bytes(ktucm)], layer=5, code=4, cls=15 + 2 * 4, **hdr
        )
        lwn = framing.Lwn(0, 1, 1, dic.scn + 1, 0)
        cap = C.Capture(dic, lambda t: t.owner == "OLR_TEST")
        done = []
        for scn, vecs, w in ((1, [begin], lwn), (2, [load], None), (3, [end], None)):
            done += cap.feed(
                framing.parse_record(framing.build_record("<", dic.scn + scn, 1, vecs, w))
            )
        got[name] = done
    (tx,) = got["ours"]
    assert tx.xid.text() == "4.5.77"
    assert [(c.op, c.after[0]) for c in tx.changes] == [
        ("INSERT", ("ID", Decimal(i))) for i in range(1, 10)
    ]
    assert got["real"] == []  # (its transaction made no change that was attributed)


_NUMBERS = st.decimals(allow_nan=False, allow_infinity=False, places=None).filter(
    lambda d: d == 0 or Decimal("1E-129") < abs(d) < Decimal("1E+125")
) | st.integers(-(10**38) + 1, 10**38 - 1).map(Decimal)


@needs("redomine")
@given(_NUMBERS)
def test_a_number_read_through_the_c_text_is_the_codec_s(value: Decimal) -> None:
    """capture.number (the C kernel's NUMBER text made a Decimal) gives the very Decimal
    decode_number gives, digits and exponent, wherever it gives one."""
    from engine.redo.codecs import decode_number, encode_number
    from engine.redo.errors import CodecError

    try:
        raw = encode_number(value)
    except CodecError:
        return
    got = C.number(raw)
    if got is not None:
        assert got.as_tuple() == decode_number(raw).as_tuple()


@needs("redomine")
def test_the_c_number_text_reads_the_usual_numbers() -> None:
    from engine.redo.codecs import decode_number, encode_number

    for text in ("0", "1", "-1", "100", "9000", "0.5", "-0.0001", "123.45", "1E+20", "-7E-9"):
        raw = encode_number(Decimal(text))
        got = C.number(raw)
        assert got is not None and got.as_tuple() == decode_number(raw).as_tuple(), text
    assert C.number(b"\xc1\xff") is None  # (not a digit: left to the codec, which refuses)
