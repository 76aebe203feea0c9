"""The C envelope count, record sealing and fragment finishing (engine/_native/trailkit.c)
against their Python twins ``writer.count_records``, ``checksum.seal_records`` and
``assemble.finish_fragments_py``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.extract.tasks import assemble
from engine.trail import writer
from engine.trail.checksum import seal_records
from engine.trail.codec import commit_tokens, finalize, row_record
from engine.trail.errors import RecordLimitError, TrailError
from tests.harness import kernels

#: The kernel itself, whatever GGSCI_NATIVE says (these tests hold it to its Python twins;
#: a kernel that was not built fails here, loudly, instead of skipping).
_KIT = kernels.kernel("trailkit")


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


def _finished(
    blobs: list[bytes], scn: int, when: int, first: int, total: int, user: list[bytes] | None
) -> tuple[bytes | None, bytes | type[Exception], bytes | type[Exception]]:
    """(the kernel's finish, finish_fragments without the kernel, finish_fragments_py):
    an exception's type where one is raised."""

    def caught(fn: Any) -> bytes | type[Exception]:
        try:
            got: bytes = fn()
        except RecordLimitError as exc:
            return type(exc)
        return got

    kernel = _KIT.finish(
        blobs, commit_tokens(str(scn), "3.14.15") if first == 0 else b"", when,
        assemble._INDS, first, total, user,
    )  # fmt: skip
    kit = assemble._KIT
    try:
        assemble._KIT = None
        python = caught(lambda: assemble.finish_fragments(blobs, "3.14.15", scn, when, first,
                                                          total, user))  # fmt: skip
    finally:
        assemble._KIT = kit
    want = caught(lambda: assemble.finish_fragments_py(blobs, "3.14.15", scn, when, first,
                                                        total, user))  # fmt: skip
    return kernel, python, want


@settings(max_examples=300, deadline=None)
@given(
    fragments=st.lists(
        st.lists(
            st.tuples(
                st.sampled_from([0, 7, 300, 65_400]),  # data bytes (a record near the limit)
                st.booleans(),  # ORAROWID (a T area)
                st.sampled_from([0, 0, 9, 33, 200]),  # user token bytes
            ),
            max_size=4,
        ),
        min_size=1,
        max_size=3,
    ),
    first=st.integers(0, 2),
    more=st.integers(0, 2),
    given_user=st.booleans(),
)
def test_the_c_finish_adds_user_tokens_as_the_python_finish(
    fragments: list[list[tuple[int, bool, int]]], first: int, more: int, given_user: bool
) -> None:
    """With ``user`` (Fragment.marks: TABLE TOKENS of rows selected in the task), each
    record gets its own token bytes after the commit tokens: kernel and twin give the same
    bytes, or both refuse (a record past 65535 bytes)."""
    rows = [r for f in fragments for r in f]
    blobs = [
        b"".join(
            row_record(5, b"HR.EMP", b"d" * n, b"", b"A" * 18 if rowid else None, 7, i)
            for i, (n, rowid, _) in enumerate(f)
        )
        for f in fragments
    ]
    user = [bytes([0x55]) * u for _, _, u in rows] if given_user else None
    first = first if rows else 0
    kernel, python, want = _finished(blobs, 42, 1_000, first, first + len(rows) + more, user)
    assert python == want
    assert kernel == (want if isinstance(want, bytes) else None)
    if isinstance(want, bytes):
        assert writer.count_records(want) == len(rows)


def test_user_tokens_finish_as_the_task_assembles_them() -> None:
    """A fragment's records finished with user tokens are the records a task assembles
    for a transaction it closes (``row_record`` with the commit tokens then the user ones
    on record 0, the user ones alone on the others), on both paths."""
    user = [b"\x41\x00\x00\x02ab", b"", b"\x42\x00\x00\x01c"]
    rowids = [b"A" * 18, None, b"B" * 18]
    parts = [(5, b"HR.EMP", b"\x00\x00\x00\x05\x00\x00\x00\x011", b"", r) for r in rowids]
    blob = b"".join(row_record(*p, 7, i) for i, p in enumerate(parts))
    commit = commit_tokens("42", "3.14.15")
    want = b"".join(
        row_record(*p, 7, i, ind, 1_000, (commit if i == 0 else b"") + user[i])
        for i, (p, ind) in enumerate(zip(parts, (0, 1, 2), strict=True))
    )
    kernel, python, py = _finished([blob], 42, 1_000, 0, 3, user)
    assert kernel == python == py == want
    # split in two calls (a huge transaction's chunks): the same bytes
    one = row_record(*parts[0], 7, 0)
    rest = blob[len(one) :]
    head = assemble.finish_fragments([one], "3.14.15", 42, 1_000, 0, 3, user[:1])
    tail = assemble.finish_fragments([rest], "3.14.15", 42, 1_000, 1, 3, user[1:])
    assert head + tail == want
