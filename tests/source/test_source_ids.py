"""ROWID, XID, SCN and RBA models against the seed's literal values."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.redo.errors import CodecError
from engine.redo.framing import Rba
from engine.redo.ids import RowId, Uba, Xid, dump_scn, make_dba, parse_scn, scn_display


def test_seed_rowid() -> None:
    r = RowId.parse("AAASrPAAEAAAAQ2AAK")
    assert (r.dataobj, r.file_no, r.block, r.slot) == (76495, 4, 0x436, 10)
    assert str(r) == "AAASrPAAEAAAAQ2AAK"
    assert RowId.from_dba(76495, 0x01000436, 10) == r


def test_seed_xid_scn_rba() -> None:
    x = Xid.parse("0x0004.00b.00000356")
    assert (x.usn, x.slot, x.sqn) == (4, 11, 854)
    assert str(x) == "4.11.854"
    assert x.dump() == "0x0004.00b.00000356"
    assert Xid.parse("4.11.854") == x
    assert parse_scn("0x0000.0018bcdf") == 1621215
    assert dump_scn(1621215) == "0x0000.0018bcdf"
    assert scn_display(1621215) == "0.1621215 (1621215)"
    rba = Rba.parse("0x000044.00000005.0010")
    assert (rba.sequence, rba.block, rba.offset) == (68, 5, 16)
    assert rba.dump() == "0x000044.00000005.0010"
    assert Uba.parse("0x00c000b2.01ee.0d") == Uba(0x00C000B2, 0x1EE, 0x0D)
    assert make_dba(4, 0x436) == 0x01000436


@pytest.mark.parametrize("bad", ["", "AAASrP", "AAASrPAAEAAAAQ2AA!", "x" * 19])
def test_bad_rowid(bad: str) -> None:
    with pytest.raises(CodecError):
        RowId.parse(bad)


def test_bad_xid_and_scn() -> None:
    with pytest.raises(CodecError):
        Xid.parse("4.11")
    with pytest.raises(CodecError):
        parse_scn("zz")


@given(
    st.integers(0, 2**32 - 1),
    st.integers(0, 2**10 - 1),
    st.integers(0, 2**22 - 1),
    st.integers(0, 2**16 - 1),
)
def test_rowid_round_trip(obj: int, file_no: int, block: int, slot: int) -> None:
    r = RowId(obj, file_no, block, slot)
    assert RowId.parse(str(r)) == r


@given(st.integers(0, 2**48 - 1))
def test_scn_round_trip(scn: int) -> None:
    assert parse_scn(dump_scn(scn)) == scn
