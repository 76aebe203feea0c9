"""The C kernels of the Extract's TABLE row options in the miner's task against their
pure-Python twins: engine/_native/rowscan.c (``scan`` = tablerules.scan_entries, ``rows``
= tablerules.scan_rows), trailkit.records with user tokens (= miner._records' Python
assembly), and rows_in_task's column-wise path (= its row-by-row path)."""

from __future__ import annotations

import importlib
from typing import Any
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.expr.rowrule import Process, RowRule
from engine.expr.values import Status
from engine.extract import miner as miner_module
from engine.extract import tablerules
from engine.extract.tablerules import rows_in_task, scan_entries, scan_rows
from engine.trail.codec import encode_columns
from engine.trail.errors import CorruptRecordError
from params.expr import Assignment, Binary, Call, Col, Filter, Header, Lit, Unary

#: The kernels themselves, whatever GGSCI_NATIVE says (these tests hold them to their
#: Python twins; a kernel that was not built fails here, loudly, instead of skipping).
_SCAN = importlib.import_module("engine._native.rowscan")
_KIT = importlib.import_module("engine._native.trailkit")

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
    got = miner_module._records(events, 99, "1.2.3", sequence, 1_700_000_000, user)
    with patch.object(miner_module, "_KIT", None):
        want = miner_module._records(events, 99, "1.2.3", sequence, 1_700_000_000, user)
    assert got == want
    if any(user):  # the kernel did it (not a fallback to Python)
        assert _KIT.records(events, b"", sequence, 1_700_000_000, miner_module._INDS,
                            miner_module._DELETE, user) is not None  # fmt: skip


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
    with patch.object(tablerules, "_columnar", lambda *a: None):
        slow = run()
    assert slow == fast
    if any(t == "HR.A" for t, _, _ in rows):  # the column-wise path was taken
        with (
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
