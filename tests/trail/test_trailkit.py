"""The C envelope count, record sealing and fragment finishing (engine/_native/trailkit.c)
against their Python twins ``writer.count_records``, ``checksum.seal_records`` and
``assemble.finish_fragments_py``."""

from __future__ import annotations

import importlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.extract import assemble
from engine.trail import writer
from engine.trail.checksum import seal_records
from engine.trail.codec import finalize, row_record
from engine.trail.errors import RecordLimitError, TrailError

#: The kernel itself, whatever GGSCI_NATIVE says (these tests hold it to its Python twins;
#: a kernel that was not built fails here, loudly, instead of skipping).
_KIT = importlib.import_module("engine._native.trailkit")


def _python_count(data: bytes) -> int | type[Exception]:
    kit, writer._KIT = writer._KIT, None
    try:
        return writer.count_records(data)
    except TrailError as exc:
        return type(exc)
    finally:
        writer._KIT = kit


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 200), max_size=5),
    cut=st.integers(0, 2000),
    flip=st.one_of(st.none(), st.integers(0, 2000)),
)
def test_the_c_count_is_the_python_count_or_minus_one(
    sizes: list[int], cut: int, flip: int | None
) -> None:
    data = bytearray(b"".join(row_record(5, b"T.X", b"d" * n, b"", None, 1, 2) for n in sizes))
    if flip is not None and flip < len(data):
        data[flip] ^= 0x41
    data = data[: min(cut, len(data))] if cut < len(data) else data
    want = _python_count(bytes(data))
    got = _KIT.count_records(bytes(data))
    assert got == (want if isinstance(want, int) else -1)


def _python_seal(data: bytes) -> bytes | type[Exception]:
    try:
        return seal_records(data)
    except TrailError as exc:
        return type(exc)


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.integers(0, 300),  # data bytes
            st.integers(0, 40),  # before-image bytes
            st.booleans(),  # ORAROWID (a T area)
            st.integers(0, 60),  # more token bytes
        ),
        max_size=5,
    ),
    cut=st.integers(0, 3000),
    flip=st.one_of(st.none(), st.integers(0, 3000)),
)
def test_the_c_seal_is_the_python_seal_or_none(
    rows: list[tuple[int, int, bool, int]], cut: int, flip: int | None
) -> None:
    """trailkit.seal and checksum.seal_records give the same bytes for any records, with
    and without a T area, and both refuse the same damaged input (C: None)."""
    data = bytearray(
        b"".join(
            row_record(
                5,
                b"T.X",
                b"d" * n,
                b"b" * before,
                b"A" * 18 if rowid else None,
                1,
                2,
                tokens=b"X\x00" + len(b"t" * extra).to_bytes(2, "big") + b"t" * extra
                if extra
                else b"",
            )
            for n, before, rowid, extra in rows
        )
    )
    if flip is not None and flip < len(data):
        data[flip] ^= 0x41
    if cut < len(data):
        data = data[:cut]
    want = _python_seal(bytes(data))
    got = _KIT.seal(bytes(data))
    assert got == (want if isinstance(want, bytes) else None)


def test_the_c_seal_refuses_a_record_that_would_pass_the_limit() -> None:
    big = row_record(5, b"T.X", b"d" * (0xFFFF - 4 * 4 - 35 - 3), b"", None, 1, 2)
    assert len(big) == 0xFFFF
    assert _KIT.seal(big) is None
    with pytest.raises(RecordLimitError, match="with its checksum"):
        seal_records(big)


@settings(max_examples=300, deadline=None)
@given(
    fragments=st.lists(
        st.lists(
            st.tuples(
                st.integers(0, 300),  # data bytes
                st.integers(0, 40),  # before-image bytes
                st.booleans(),  # ORAROWID (a T area)
                st.sampled_from([2, 3, 5, 15]),  # io type
            ),
            max_size=4,
        ),
        min_size=1,
        max_size=4,
    ),
    first=st.integers(0, 3),
    more=st.integers(0, 3),
    scn=st.integers(0, 2**48),
    when=st.integers(0, 2**62),
)
def test_the_c_finish_of_fragments_is_the_python_finish(
    fragments: list[list[tuple[int, int, bool, int]]], first: int, more: int, scn: int, when: int
) -> None:
    """trailkit.finish (parallel assembly) and assemble.finish_fragments_py give the same
    records: TransInd by place, the commit time, the tokens on record 0 only."""
    blobs = [
        b"".join(
            row_record(io, b"HR.EMP", b"d" * n, b"b" * before, b"A" * 18 if rowid else None, 7, i)
            for i, (n, before, rowid, io) in enumerate(rows)
        )
        for rows in fragments
    ]
    count = sum(len(rows) for rows in fragments)
    total = first + count + more
    first = first if count else 0
    want = assemble.finish_fragments_py(blobs, "3.14.15", scn, when, first, total)
    kit = assemble._KIT
    try:
        assemble._KIT = None
        python = assemble.finish_fragments(blobs, "3.14.15", scn, when, first, total)
        assemble._KIT = _KIT
        got = assemble.finish_fragments(blobs, "3.14.15", scn, when, first, total)
    finally:
        assemble._KIT = kit
    assert got == python == want
    assert writer.count_records(got) == count


def test_a_finished_fragment_is_the_record_the_columns_encode() -> None:
    """finish_fragments on one template is codec.finalize of it (the reference)."""
    template = row_record(5, b"HR.EMP", b"\x00\x00\x00\x00\x00\x011", b"", b"A" * 18, 7, 99)
    done = assemble.finish_fragments([template, template], "9.1.2", 42, 1_000, 0, 2)
    assert done == finalize(template, 0, 1_000, "42", "9.1.2") + finalize(
        template, 2, 1_000, None, None
    )
