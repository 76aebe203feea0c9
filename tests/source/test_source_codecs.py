"""Oracle value codecs: byte literals from seed 002, boundaries, and round-trips."""

from __future__ import annotations

from datetime import datetime
from decimal import Context, Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.redo.codecs import (
    decode_date,
    decode_number,
    decode_text,
    decode_timestamp,
    decode_value,
    encode_date,
    encode_number,
    encode_scaled,
    encode_timestamp,
    encode_value,
    most_bytes,
)
from engine.redo.errors import CodecError

WIDE = Context(prec=60)


@pytest.mark.parametrize(
    ("value", "hexbytes"),
    [
        (1011, "c2 0b 0c"),  # seed: STUDENT_KEY of the inserted row
        (2013, "c2 15 0e"),
        (9000, "c2 5b"),
        (6000, "c2 3d"),
        (7500, "c2 4c"),
        (8000, "c2 51"),
        (1, "c1 02"),
        (0, "80"),
        (-1, "3e 64 66"),
        (100, "c2 02"),
        (Decimal("0.01"), "c0 02"),
        (Decimal("-123.45"), "3d 64 4e 38 66"),
        (Decimal("1E-130"), "80 02"),
        (Decimal("-1E-130"), "7f 64 66"),
    ],
)
def test_number_bytes(value: int | Decimal, hexbytes: str) -> None:
    raw = bytes.fromhex(hexbytes)
    assert encode_number(value) == raw
    assert decode_number(raw) == Decimal(value)


def test_number_boundaries() -> None:
    biggest = Decimal("9." + "9" * 37 + "E+125")
    assert decode_number(encode_number(biggest)) == biggest
    assert len(encode_number(biggest)) == 20
    forty = Decimal("1" * 40)
    assert decode_number(encode_number(forty)) == forty
    with pytest.raises(CodecError):
        encode_number(Decimal("1E+126"))
    with pytest.raises(CodecError):
        encode_number(Decimal("1E-131"))
    with pytest.raises(CodecError):
        encode_number(Decimal("1" * 41))
    with pytest.raises(CodecError):
        encode_number(Decimal("NaN"))
    with pytest.raises(CodecError):
        decode_number(b"")
    with pytest.raises(CodecError):
        decode_number(bytes([0xC1, 0x00]))  # digit byte 0 is not a base-100 digit


def test_integers_print_as_integers() -> None:
    assert str(decode_number(bytes.fromhex("c2 5b"))) == "9000"


numbers = st.decimals(allow_nan=False, allow_infinity=False, places=None).filter(
    lambda d: (
        d.is_zero()
        or (len(d.normalize(WIDE).as_tuple().digits) <= 38 and -129 <= d.adjusted() <= 125)
    )
)


@given(numbers)
def test_number_round_trip(value: Decimal) -> None:
    assert decode_number(encode_number(value)) == value


@given(numbers, numbers)
def test_number_bytes_sort_like_numbers(a: Decimal, b: Decimal) -> None:
    ea, eb = encode_number(a), encode_number(b)
    if a < b:
        assert ea < eb
    elif a > b:
        assert ea > eb
    else:
        assert ea == eb


@given(st.integers(-(10**40), 10**40), st.integers(0, 3))
def test_scaled_matches_generic(n: int, scale: int) -> None:
    value = Decimal(n).scaleb(-2 * scale, WIDE)
    try:
        expected = encode_number(value)
    except CodecError:
        with pytest.raises(CodecError):
            encode_scaled(n, scale)
        return
    assert encode_scaled(n, scale) == expected


def test_date_bytes() -> None:
    d = datetime(2013, 3, 31, 23, 59, 58)
    assert encode_date(d) == bytes([120, 113, 3, 31, 24, 60, 59])
    assert decode_date(encode_date(d)) == d
    assert encode_date(datetime(1, 1, 1)) == bytes([100, 101, 1, 1, 1, 1, 1])
    assert encode_date(datetime(9999, 12, 31, 23, 59, 59))[:2] == bytes([199, 199])
    with pytest.raises(CodecError):
        decode_date(b"\x78\x71\x03")
    with pytest.raises(CodecError):
        decode_date(bytes([120, 113, 13, 1, 1, 1, 1]))  # month 13


@given(st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)))
def test_timestamp_round_trip(value: datetime) -> None:
    raw = encode_timestamp(value)
    assert len(raw) == (7 if value.microsecond == 0 else 11)
    assert decode_timestamp(raw) == value
    assert decode_date(encode_date(value)) == value.replace(microsecond=0)


@given(st.text())
def test_text_round_trip(value: str) -> None:
    raw = encode_value("VARCHAR2", value)
    assert decode_value("VARCHAR2", raw) == (value or None)


def test_null_and_empty_string() -> None:
    assert encode_value("VARCHAR2", "") is None
    assert encode_value("NUMBER", None) is None
    assert decode_value("DATE", None) is None
    with pytest.raises(CodecError):
        decode_text(b"\xff\xfe")
    with pytest.raises(CodecError):
        encode_value("BLOB", b"x")


@given(
    numbers,
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)),
    st.text(max_size=50),
)
def test_no_value_encodes_past_its_types_most(number: Decimal, when: datetime, text: str) -> None:
    """``most_bytes`` bounds every encoding (the fast path decides from it whether a
    table's rows can outgrow a block: engine/embedded/bulk.py ``can_outgrow``): a NUMBER,
    a DATE, a TIMESTAMP, a text within its declared length (in UTF-8 bytes); a text of no
    declared length and a type not listed have none."""
    for t in ("NUMBER", "INTEGER", "FLOAT"):
        assert len(encode_value(t, number) or b"") <= (most_bytes(t) or 0)
    assert len(encode_value("DATE", when) or b"") <= (most_bytes("DATE") or 0)
    assert len(encode_value("TIMESTAMP", when) or b"") <= (most_bytes("TIMESTAMP") or 0)
    n = len(text.encode("utf-8"))
    for t in ("VARCHAR2", "NVARCHAR2", "CHAR"):
        assert len(encode_value(t, text) or b"") <= (most_bytes(t, max(n, 1)) or 0)
    assert most_bytes("VARCHAR2") is None and most_bytes("RAW", 10) is None


def test_a_number_of_every_digit_takes_the_most() -> None:
    """The bound is reached: a NUMBER of 40 significant digits takes 21 bytes."""
    assert len(encode_number(Decimal("1234567890" * 4))) == most_bytes("NUMBER") == 21
