"""Column value encodings against oracdc's value vectors (read from the .java files) and
the types Oracle's redo carries."""

from __future__ import annotations

import contextlib
import math
import re
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.redo.errors import RedoCorruptError
from engine.redo.values import TYPE_CODES, decode_value
from tests.redo.corpus import ORACDC, need


def test_oracdc_text_vectors() -> None:
    text = need(ORACDC / "OraDumpDecoderTest.java").read_text(encoding="utf-8")
    hexes = dict(re.findall(r'String (\w+) = "([0-9a-f]+)";', text))
    expect = re.findall(r'decoder\.decode\((\w+)\), "([^"]+)"\)', text)
    assert len(expect) == 4
    for var, want in expect:
        assert decode_value("CHAR", bytes.fromhex(hexes[var])) == want


def test_oracdc_number_vectors() -> None:
    text = need(ORACDC / "OraNumberTest.java").read_text(encoding="utf-8")
    raws = re.findall(r'struct\.put\("\w+", hexToRaw\("([0-9a-f]+)"\)\)', text)
    refs = re.findall(r'new BigDecimal\("([^"]+)"\)', text)
    assert len(raws) == len(refs) == 2
    for raw, ref in zip(raws, refs, strict=True):
        assert decode_value("NUMBER", bytes.fromhex(raw)) == Decimal(ref)
    # the dumps above the test: Typ=100/101 of SQRT(3), Typ=2 of -.1828 and NUMBER(11,7) SQRT(3)
    dumps = re.findall(r"Typ=(\d+) Len=\d+: ([0-9a-f,]+)", text)
    got = [
        decode_value(TYPE_CODES[int(t)], bytes(int(b, 16) for b in h.split(","))) for t, h in dumps
    ]
    assert got[0] == Decimal("-0.1828") and got[3] == Decimal("1.7320508")
    assert math.isclose(got[1], math.sqrt(3), rel_tol=1e-7) and got[2] == math.sqrt(3)  # type: ignore[arg-type]


def test_other_types() -> None:
    assert decode_value("DATE", bytes([120, 126, 3, 7, 2, 45, 41])) == datetime(
        2026, 3, 7, 1, 44, 40
    )
    ts = bytes([120, 126, 3, 7, 2, 45, 41]) + (500_000_000).to_bytes(4, "big")
    assert decode_value("TIMESTAMP", ts) == datetime(2026, 3, 7, 1, 44, 40, 500000)
    tz = decode_value("TIMESTAMP WITH TIME ZONE", ts + bytes([20 + 2, 60 + 30]))
    assert tz == datetime(
        2026, 3, 7, 4, 14, 40, 500000, tzinfo=timezone(timedelta(hours=2, minutes=30))
    )
    assert (
        decode_value("INTERVAL YEAR TO MONTH", (0x80000000 + 3).to_bytes(4, "big") + bytes([62]))
        == "+3-2"
    )
    ds = (
        (0x80000000 + 1).to_bytes(4, "big")
        + bytes([62, 63, 64])
        + (0x80000000 + 5000).to_bytes(4, "big")
    )
    assert decode_value("INTERVAL DAY TO SECOND", ds) == timedelta(
        days=1, hours=2, minutes=3, seconds=4, microseconds=5
    )
    assert decode_value("NVARCHAR2", "ok€".encode("utf-16-be")) == "ok€"
    assert decode_value("VARCHAR2", b"caf\xe9", "WE8MSWIN1252") == "café"
    assert decode_value("RAW", b"\x00\xff") == b"\x00\xff"
    assert decode_value("NUMBER", None) is None and decode_value("VARCHAR2", b"") is None
    assert decode_value("FLOAT", bytes.fromhex("c102")) == 1
    with pytest.raises(RedoCorruptError):
        decode_value("BINARY_FLOAT", b"\x01")
    with pytest.raises(RedoCorruptError):
        decode_value("VARCHAR2", b"\xff", "AL32UTF8")
    with pytest.raises(RedoCorruptError):
        decode_value("CLOB", b"x")


@given(st.floats(width=32, allow_nan=False), st.floats(allow_nan=False))
def test_binary_float_double_order_preserving_encoding(f: float, d: float) -> None:
    import struct

    def enc(x: float, fmt: str) -> bytes:
        b = struct.pack(">" + fmt, x)
        return bytes(v ^ 0xFF for v in b) if b[0] & 0x80 else bytes([b[0] | 0x80]) + b[1:]

    assert decode_value("BINARY_FLOAT", enc(f, "f")) == f
    assert decode_value("BINARY_DOUBLE", enc(d, "d")) == d


@given(st.binary(max_size=20), st.sampled_from(sorted({*TYPE_CODES.values(), "NVARCHAR2"})))
def test_any_bytes_decode_or_fail_cleanly(raw: bytes, type_name: str) -> None:
    with contextlib.suppress(RedoCorruptError):
        decode_value(type_name, raw)
