"""The C kernels of the Extract's TABLE row options in the miner's task against their
pure-Python twins: engine/_native/rowscan.c (``scan`` = rowselect.scan_entries, ``rows``
= rowselect.scan_rows, ``select`` = rowselect.select_rows, ``entries`` =
codec.encode_columns), trailkit.records with user tokens (= miner._records' Python
assembly), and rows_in_task's column-wise path (= its row-by-row path)."""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.expr.rowrule import Process, RowRule
from engine.expr.values import Status
from engine.extract.tasks import closing, tablerules
from engine.extract.tasks.rowselect import (
    columns_of,
    entries_of,
    scan_entries,
    scan_rows,
    select_rows,
)
from engine.extract.tasks.tablerules import rows_in_task
from engine.trail.codec import decode_column_entries, encode_columns, pack_tokens
from engine.trail.errors import CorruptRecordError, RecordLimitError
from params.expr import Assignment, Binary, Call, Col, Filter, Header, Lit, Unary
from tests.harness import kernels

#: The kernels themselves, whatever GGSCI_NATIVE says (these tests hold them to their
#: Python twins; a kernel that was not built fails here, loudly, instead of skipping).
_SCAN = kernels.kernel("rowscan")
_KIT = kernels.kernel("trailkit")

_columns = st.dictionaries(
    st.integers(0, 12),
    st.one_of(st.none(), st.text(max_size=6), st.sampled_from(["0", "7", "12", "0012", "-3"])),
    max_size=8,
).map(lambda d: tuple(sorted(d.items())))
_indices = st.frozensets(st.integers(0, 12), max_size=8)


def _mask(indices: frozenset[int]) -> bytes:
    out = bytearray(max(indices) + 1 if indices else 0)
    for i in indices:
        out[i] = 1
    return bytes(out)


def _damaged(data: bytes, at: int, xor: int) -> bytes:
    if not data:
        return data
    b = bytearray(data)
    b[at % len(b)] ^= xor
    return bytes(b)


@settings(max_examples=300, deadline=None)
@given(_columns, _indices, st.one_of(st.none(), _indices), st.integers(0, 200),
       st.integers(0, 255), st.booleans())  # fmt: skip
def test_the_c_scan_is_scan_entries(
    columns: tuple[tuple[int, str | None], ...],
    reads: frozenset[int],
    keep: frozenset[int] | None,
    at: int,
    xor: int,
    damage: bool,
) -> None:
    data = encode_columns(columns)
    if damage:
        data = _damaged(data, at, xor)[: max(0, len(data) - at % 3)]
    got = _SCAN.scan(data, _mask(reads), None if keep is None else _mask(keep))
    try:
        want = scan_entries(data, reads, keep)
    except CorruptRecordError:
        assert got is None
        return
    assert got == want


@settings(max_examples=300, deadline=None)
@given(_columns, st.integers(0, 200), st.integers(0, 255), st.booleans())
def test_columns_of_is_decode_column_entries(
    columns: tuple[tuple[int, str | None], ...], at: int, xor: int, damage: bool
) -> None:
    """with_columns' decoding (rowscan.scan reading every column) gives what
    decode_column_entries gives, and raises where it raises."""
    data = encode_columns(columns)
    if damage:
        data = _damaged(data, at, xor)[: max(0, len(data) - at % 3)]
    try:
        want = decode_column_entries(data)
    except CorruptRecordError as exc:
        with pytest.raises(CorruptRecordError) as got:
            columns_of(data)
        assert str(got.value) == str(exc)
        return
    assert columns_of(data) == want
    if not damage:
        assert want == columns


def _event(table: str, io: int, pos: int, data: bytes) -> tuple[Any, ...]:
    parts = (table.encode(), data, b"", None)
    return (0, "1.2.3", 1, pos, 0, 0, 0, 0, io, table, "", (), (), "", "", "", "", parts)


_tables = st.sampled_from(["HR.A", "HR.B"])
_rows = st.lists(st.tuples(_tables, st.sampled_from([5, 15, 3]), _columns), max_size=8)


@settings(max_examples=200, deadline=None)
@given(_rows, _indices, st.one_of(st.none(), _indices), st.integers(0, 40), st.integers(1, 255))
def test_the_c_rows_scan_is_scan_rows(
    rows: list[tuple[str, int, tuple[tuple[int, str | None], ...]]],
    reads: frozenset[int],
    keep: frozenset[int] | None,
    at: int,
    xor: int,
) -> None:
    events = [_event(t, io, i * 10, encode_columns(c)) for i, (t, io, c) in enumerate(rows)]
    if at < 4 and events:  # sometimes one damaged area
        e = events[at % len(events)]
        events[at % len(events)] = (*e[:17], (e[17][0], _damaged(e[17][1], at, xor), b"", None))
    order = sorted(reads)
    slots = bytearray(max(order) + 1 if order else 0)
    for k, i in enumerate(order):
        slots[i] = k + 1
    keep_mask = None if keep is None else _mask(keep)
    got = _SCAN.rows(events, "HR.A", bytes(slots), len(order), keep_mask, Status.MISSING)
    assert got == scan_rows(events, "HR.A", bytes(slots), len(order), keep_mask, Status.MISSING)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from([2, 3, 5, 15]), st.binary(max_size=60),
                       st.binary(max_size=30)), min_size=1, max_size=6),
    st.integers(0, 2**32 - 1),
)  # fmt: skip
def test_records_with_user_tokens_in_c_are_the_python_assembly(
    rows: list[tuple[int, bytes, bytes]], sequence: int
) -> None:
    events = [(0, "1.2.3", 1, i * 7, 0, 0, 0, 0, io, "T", "", (), (), "", "", "", "",
               (b"HR.T", data, b"", b"AAAAAAAAAAAAAAAAAA" if i % 2 else None))
              for i, (io, data, _) in enumerate(rows)]  # fmt: skip
    user = [u for _, _, u in rows]
    got = closing._records(events, 99, "1.2.3", sequence, 1_700_000_000, user)
    with patch.object(closing, "_KIT", None):
        want = closing._records(events, 99, "1.2.3", sequence, 1_700_000_000, user)
    assert got == want
    if any(user):  # the kernel did it (not a fallback to Python)
        assert _KIT.records(events, b"", sequence, 1_700_000_000, closing._INDS,
                            closing._DELETE, user) is not None  # fmt: skip


_NAMES = ("ID", "NAME", "CITY", "SAL")
_INDEX = {n: i for i, n in enumerate(_NAMES)}
_CONDITIONS = [
    Binary(">", Col("ID"), Lit(5)),
    Binary("AND", Binary("<=", Lit(3), Col("SAL")), Binary("=", Col("CITY"), Call("PRESENT"))),
    Binary("OR", Unary("NOT", Binary("=", Col("NAME"), Lit("x"))), Binary("<>", Col("ID"),
           Col("SAL"))),
    Binary("=", Binary("+", Col("ID"), Lit(1)), Col("SAL")),
]  # fmt: skip
_TOKENS = (Assignment("OP", Header("GGS_OP_TYPE")), Assignment("C", Lit("k")))


def _rules(cond: int, filt: int, tokens: bool, keep: bool) -> dict[str, RowRule]:
    other = _CONDITIONS[(cond + 1) % len(_CONDITIONS)]
    filters = {
        0: (),
        1: (Filter(other),),
        2: (Filter(other, on=("INSERT",)),),
        3: (Filter(other, on=("INSERT",)), Filter(_CONDITIONS[cond - 1], ignore=("DELETE",))),
    }[filt]  # several FILTER clauses: each must pass
    rule = RowRule("HR.A", _NAMES, (0,), frozenset({0, 2}) if keep else None,
                   _CONDITIONS[cond], filters, _TOKENS if tokens else (), _INDEX)  # fmt: skip
    return {"HR.A": rule}


_values = st.one_of(st.none(), st.sampled_from(["0", "3", "7", "12", "0012", "x", "", "2.5"]))
_trows = st.lists(
    st.tuples(_tables, st.sampled_from([5, 15, 3]),
              st.dictionaries(st.integers(0, 3), _values, min_size=1).map(
                  lambda d: tuple(sorted(d.items())))),
    max_size=8,
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(_trows, st.integers(0, len(_CONDITIONS) - 1), st.integers(0, 3), st.booleans(),
       st.booleans())  # fmt: skip
def test_rows_in_task_column_wise_is_row_by_row(
    rows: list[tuple[str, int, tuple[tuple[int, str | None], ...]]],
    cond: int,
    filt: int,
    tokens: bool,
    keep: bool,
) -> None:
    """The same kept rows, parts and token bytes whether the table's rows go column-wise
    (rowscan.rows or scan_rows, engine.expr.vector) or row by row (RowEnv, closures)."""
    rules = _rules(cond, filt, tokens, keep)
    events = [_event(t, io, i * 10, encode_columns(c)) for i, (t, io, c) in enumerate(rows)]
    process = Process("EXT", host="h", user="u", pid=1)

    def run() -> list[tuple[tuple[Any, ...], bytes]]:
        return rows_in_task(events, rules, process, "1.2.3", 99, 1_700_000_000, 4)

    fast = run()
    with patch.object(tablerules, "_SCAN_ROWS", scan_rows):
        assert run() == fast
    with patch.object(tablerules, "_SELECT", select_rows):
        assert run() == fast
    with patch.object(tablerules, "_SELECT", lambda *a: None):
        assert run() == fast  # column-wise
        with patch.object(tablerules, "_columnar", lambda *a: None):
            slow = run()
    assert slow == fast
    if any(t == "HR.A" for t, _, _ in rows):  # the column-wise path was taken
        with (
            patch.object(tablerules, "_SELECT", lambda *a: None),
            patch.object(tablerules, "_columnar", lambda *a: 1 / 0),
            pytest.raises(ZeroDivisionError),
        ):
            run()


def test_several_filters_each_must_pass_in_the_task() -> None:
    """Rows of an Extract TABLE with two FILTER clauses: kept only when each passes (for
    the operations it applies to), on both paths."""
    filters = (Filter(Binary(">", Col("ID"), Lit(2))),
               Filter(Binary("<", Col("SAL"), Lit(10)), on=("INSERT",)))  # fmt: skip
    rules = {"HR.A": RowRule("HR.A", _NAMES, (0,), None, None, filters, (), _INDEX)}
    rows = [((0, "1"), (3, "1")), ((0, "5"), (3, "50")), ((0, "5"), (3, "5")), ((0, "9"),)]
    events = [_event("HR.A", io, i, encode_columns(c))
              for i, (io, c) in enumerate(zip((5, 5, 5, 15), rows, strict=True))]  # fmt: skip
    process = Process("EXT", host="h", user="u", pid=1)
    for columnar in (True, False):
        with patch.object(tablerules, "_columnar", tablerules._columnar if columnar else
                          (lambda *a: None)):  # fmt: skip
            kept = rows_in_task(events, rules, process, "1.2.3", 99, 1, 4)
        assert [e[3] for e, _ in kept] == [2, 3]  # id 1 fails the first, sal 50 the second


_ops = st.sampled_from(range(6))
_conds = st.lists(st.tuples(st.integers(0, 5), _ops, st.integers(-3, 15)), max_size=3)
_cvalues = st.one_of(
    st.none(), st.sampled_from(["0", "3", "7", "12", "0012", "-3", "x", "", "2.5", "٣",
                                "1234567890123456789", "123456789012345678"]))  # fmt: skip
_crow = st.tuples(
    st.sampled_from(["HR.A", "HR.A", "HR.A", "HR.B"]),
    st.sampled_from([5, 15, 3]),
    st.dictionaries(st.integers(0, 6), _cvalues).map(lambda d: tuple(sorted(d.items()))),
    st.one_of(st.just(()), st.dictionaries(st.integers(0, 6), _cvalues, max_size=3).map(
        lambda d: tuple(sorted(d.items())))),
    st.booleans(),  # the event still has its columns
)  # fmt: skip


def _select_events(rows: list[tuple[str, int, Any, Any, bool]], at: int, xor: int) -> list[Any]:
    """The events of ``_crow`` rows, sometimes one area damaged (its data or its before
    image)."""
    events = []
    for i, (t, io, c, b, with_cols) in enumerate(rows):
        e = _event(t, io, i * 10, encode_columns(c))
        parts = (e[17][0], e[17][1], encode_columns(b), b"AAAAAAAAAAAAAAAAAA" if i % 2 else None)
        events.append((*e[:11], c if with_cols else (), (), *e[13:17], parts))
    if at < 6 and events:
        e = events[at % len(events)]
        p = e[17]
        p = (
            (p[0], _damaged(p[1], at, xor), p[2], p[3])
            if at % 2
            else (p[0], p[1], _damaged(p[2], at, xor)[: max(0, len(p[2]) - 1)], p[3])
        )
        events[at % len(events)] = (*e[:17], p)
    return events


@settings(max_examples=400, deadline=None)
@given(st.lists(_crow, max_size=8), _conds, st.one_of(st.none(), _indices),
       st.booleans(), st.integers(0, 60), st.integers(1, 255))  # fmt: skip
def test_the_c_select_is_select_rows(
    rows: list[tuple[str, int, Any, Any, bool]],
    conds: list[tuple[int, int, int]],
    keep: frozenset[int] | None,
    tokens: bool,
    at: int,
    xor: int,
) -> None:
    """rowscan.select against tablerules.select_rows: the same rows kept (WHERE's
    comparisons), cut (COLSEXCEPT, the before image too), the same tokens, and None for
    the same transactions (another table, a malformed area, a value that is no plain
    number, a value past 18 digits)."""
    events = _select_events(rows, at, xor)
    calls: list[int] = []

    def make(io: int) -> bytes:
        calls.append(io)
        return b"T%d" % io

    keep_mask = None if keep is None else _mask(keep)
    got = _SCAN.select(events, "HR.A", keep_mask, tuple(conds), make if tokens else None)
    c_calls, calls[:] = list(calls), []
    want = select_rows(events, "HR.A", keep_mask, tuple(conds), make if tokens else None)
    assert got == want
    if got is not None:
        assert c_calls == calls  # make: once per operation, as the rows come


def test_select_keeps_what_where_keeps_and_cuts_what_colsexcept_cuts() -> None:
    """A hand-made transaction through rowscan.select: WHERE (ID > 5) AND (SAL <= 10) keeps
    the second row only, COLSEXCEPT cuts column 1 from its data and before image, and a
    value that is no plain number sends the transaction to the other paths (None)."""
    cols = [((0, "3"), (1, "a"), (3, "1")), ((0, "0007"), (1, "b"), (3, "10")),
            ((0, "9"), (3, "11")), ((0, "9"), (3, None)), ((1, "c"), (3, "1"))]  # fmt: skip
    events = [_event("HR.A", 5, i, encode_columns(c)) for i, c in enumerate(cols)]
    e = events[1]
    before = encode_columns(((0, "7"), (1, "z")))
    events[1] = (*e[:17], (e[17][0], e[17][1], before, None))
    conds = ((0, 3, 5), (3, 4, 10))
    for select in (_SCAN.select, select_rows):
        got = select(events, "HR.A", _mask(frozenset({0, 2, 3})), conds, lambda io: b"t")
        assert got is not None
        assert [(e[3], e[17][1], e[17][2], t) for e, t in got] == [
            (1, encode_columns(((0, "0007"), (3, "10"))), encode_columns(((0, "7"),)), b"t")
        ]
        bad = [*events, _event("HR.A", 5, 9, encode_columns(((0, "-1"),)))]
        assert select(bad, "HR.A", None, conds, None) is None


def test_a_token_name_is_its_own_table_s_in_the_task() -> None:
    """Two tables whose TOKENS differ in name only (the same values) in one transaction:
    each row gets its own table's token names (the bytes are not shared across tables)."""
    a = RowRule("HR.A", _NAMES, (0,), None, None, (), (Assignment("X", Lit("k")),), _INDEX)
    b = RowRule("HR.B", _NAMES, (0,), None, None, (), (Assignment("Y", Lit("k")),), _INDEX)
    events = [_event(t, 5, i, encode_columns(((0, "1"),))) for i, t in enumerate("AB")]
    events = [(*e[:9], "HR." + e[9], *e[10:]) for e in events]
    process = Process("EXT", host="h", user="u", pid=1)
    kept = rows_in_task(events, {"HR.A": a, "HR.B": b}, process, "1.2.3", 99, 1, 4)
    assert [t for _, t in kept] == [
        pack_tokens(a.user_tokens(None)),  # type: ignore[arg-type]
        pack_tokens(b.user_tokens(None)),
    ]  # type: ignore[arg-type]


@pytest.mark.parametrize("op", range(6))
def test_select_compares_as_the_operator_does(op: int) -> None:
    """Each operator of select's conditions at its edges (4, 5, 6 against 5) and against
    a negative literal, in C and in Python."""
    import operator

    fn = (operator.eq, operator.ne, operator.lt, operator.gt, operator.le, operator.ge)[op]
    events = [_event("HR.A", 5, i, encode_columns(((0, v),))) for i, v in enumerate("456")]
    for select in (_SCAN.select, select_rows):
        for lit in (5, -1):
            got = select(events, "HR.A", None, ((0, op, lit),), None)
            assert got is not None
            assert [e[3] for e, _ in got] == [i for i in range(3) if fn(4 + i, lit)]


@pytest.mark.parametrize("op", ["=", "<>", "<", ">", "<=", ">="])
def test_a_where_of_comparisons_goes_through_select_as_row_by_row(op: str) -> None:
    """WHERE (5 op ID AND SAL >= 2): the literal on the left is mirrored into select's
    conditions, and rows_in_task keeps what its row-by-row path keeps."""
    where = Binary("AND", Binary(op, Lit(5), Col("ID")), Binary(">=", Col("SAL"), Lit(2)))
    rule = RowRule("HR.A", _NAMES, (0,), frozenset({0, 3}), where, (), _TOKENS, _INDEX)
    assert tablerules._plan(rule).conds is not None
    rows = [((0, v), (1, "n"), (3, s)) for v in ("4", "5", "6") for s in ("1", "2")]
    events = [_event("HR.A", 5, i, encode_columns(c)) for i, c in enumerate(rows)]
    process = Process("EXT", host="h", user="u", pid=1)
    fast = rows_in_task(events, {"HR.A": rule}, process, "1.2.3", 99, 1, 4)
    with (
        patch.object(tablerules, "_SELECT", lambda *a: None),
        patch.object(tablerules, "_columnar", lambda *a: None),
    ):
        assert rows_in_task(events, {"HR.A": rule}, process, "1.2.3", 99, 1, 4) == fast
    assert fast  # (some row passes each)


_any_columns = st.lists(
    st.tuples(st.integers(-2, 0x10001), st.one_of(st.none(), st.text(max_size=5),
                                                  st.sampled_from(["\ud800", "é" * 40]),
                                                  st.integers(0, 3))),
    max_size=5,
).map(tuple)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.one_of(_columns, _any_columns), st.sampled_from([4, 79, 1 << 20]))
def test_the_c_entries_are_encode_columns(columns: Any, max_value: int) -> None:
    """rowscan.entries gives encode_columns' bytes, or None where encode_columns raises
    (an index out of order or too high, a value not text, not UTF-8 or too long)."""
    got = _SCAN.entries(columns, max_value)
    with patch("engine.trail.codec.MAX_VALUE_LENGTH", max_value):
        try:
            want = encode_columns(columns)
        except (RecordLimitError, UnicodeEncodeError, AttributeError):
            assert got is None
            return
    assert got == want
    if max_value > 80:
        assert entries_of(columns) == want


def test_select_cuts_areas_past_its_stack_buffer() -> None:
    """Data areas longer than select's 4 KiB stack buffer (cut on the heap), between short
    ones: what select_rows gives."""
    sizes = (10, 5000, 20, 9000, 4090)
    events = [_event("HR.A", 5, i, encode_columns(((0, str(i)), (1, "x" * n), (2, "y" * n))))
              for i, n in enumerate(sizes)]  # fmt: skip
    keep = _mask(frozenset({0, 2}))
    got = _SCAN.select(events, "HR.A", keep, ((0, 5, 1),), None)
    assert got is not None and len(got) == 4
    assert got == select_rows(events, "HR.A", keep, ((0, 5, 1),), None)


@settings(max_examples=400, deadline=None)
@given(st.lists(_crow, max_size=8), _conds, st.one_of(st.none(), _indices),
       st.booleans(), st.integers(0, 60), st.integers(1, 255),
       st.sampled_from([b"", b"\x4c\x00\x00\x02ab"]), st.sampled_from([0, 0, 65_400]))  # fmt: skip
def test_the_c_select_records_is_select_then_records(
    rows: list[tuple[str, int, Any, Any, bool]],
    conds: list[tuple[int, int, int]],
    keep: frozenset[int] | None,
    tokens: bool,
    at: int,
    xor: int,
    commit: bytes,
    big: int,
) -> None:
    """trailkit.select_records (select and the transaction's records in one C pass, the
    closed transaction's usual path) against its twin miner.select_records_py (select_rows,
    then the records): the same bytes, rows kept and counts per operation, make asked for
    the same operations, and None for the same transactions (those select refuses, a
    record past 65535 bytes: ``big`` token bytes)."""
    events = _select_events(rows, at, xor)
    calls: list[int] = []

    def make(io: int) -> bytes:
        calls.append(io)
        return b"\x54\x00" + (2 + big).to_bytes(2, "big") + b"T%d" % io + b"x" * big

    keep_mask = None if keep is None else _mask(keep)
    args = (events, "HR.A", keep_mask, tuple(conds), make if tokens else None, commit, 7, 99)
    got = _KIT.select_records(*args, closing._INDS, closing._DELETE)
    c_calls, calls[:] = list(calls), []
    want = closing.select_records_py(*args)
    assert got == want
    if got is not None:
        assert c_calls == calls  # make: once per operation, as the rows come
        selected = select_rows(events, "HR.A", keep_mask, tuple(conds), None)
        assert selected is not None and got[1] == len(selected)


def test_select_records_keeps_cuts_and_places_as_select_and_records() -> None:
    """By hand: WHERE (ID > 1) drops the first row, COLSEXCEPT of column 1 cuts the data
    area and the before image; the two rows left are BEGIN and END; a token past the
    record's limit makes both refuse."""
    rows = [((0, "1"), (1, "a"), (2, "b")), ((0, "2"), (1, "c"), (2, "d")),
            ((0, "3"), (1, "e"), (2, "f"))]  # fmt: skip
    events = []
    for i, c in enumerate(rows):
        e = _event("HR.A", 15, i, encode_columns(c))
        before = encode_columns(((0, c[0][1]), (1, "old"), (2, "z")))
        events.append((*e[:17], (e[17][0], e[17][1], before, b"AAAAAAAAAAAAAAAAAA")))
    conds = ((0, 3, 1),)  # column 0 > 1
    keep = _mask(frozenset({0, 2}))
    args = (events, "HR.A", keep, conds, lambda io: b"", b"", 7, 99)
    got = _KIT.select_records(*args, closing._INDS, closing._DELETE)
    assert got is not None and got == closing.select_records_py(*args)
    records, kept, counts = got
    assert (kept, counts) == (2, ((15, 2),))
    from engine.trail.codec import decode_record

    first, at = decode_record(records)
    second, _ = decode_record(records, at)
    assert [first.trans_ind, second.trans_ind] == [0, 2]
    assert first.columns == ((0, "2"), (2, "d")) and first.before_columns == ((0, "2"), (2, "z"))
    big = b"\x54\x00\xff\xdc" + b"x" * 0xFFDC
    args = (events, "HR.A", keep, conds, lambda io: big, b"", 7, 99)
    assert _KIT.select_records(*args, closing._INDS, closing._DELETE) is None
    assert closing.select_records_py(*args) is None
