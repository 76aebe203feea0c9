"""The C envelope count (engine/_native/trailkit.c) against ``writer.count_records``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine._native import load
from engine.trail import writer
from engine.trail.codec import row_record
from engine.trail.errors import TrailError

_KIT = load("trailkit")


def _python_count(data: bytes) -> int | type[Exception]:
    kit, writer._KIT = writer._KIT, None
    try:
        return writer.count_records(data)
    except TrailError as exc:
        return type(exc)
    finally:
        writer._KIT = kit


@pytest.mark.skipif(_KIT is None, reason="the C kernel is disabled (GGSCI_NATIVE=0)")
@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 200), max_size=5),
    cut=st.integers(0, 2000),
    flip=st.one_of(st.none(), st.integers(0, 2000)),
)
def test_the_c_count_is_the_python_count_or_minus_one(
    sizes: list[int], cut: int, flip: int | None
) -> None:
    assert _KIT is not None
    data = bytearray(b"".join(row_record(5, b"T.X", b"d" * n, b"", None, 1, 2) for n in sizes))
    if flip is not None and flip < len(data):
        data[flip] ^= 0x41
    data = data[: min(cut, len(data))] if cut < len(data) else data
    want = _python_count(bytes(data))
    got = _KIT.count_records(bytes(data))
    assert got == (want if isinstance(want, int) else -1)
