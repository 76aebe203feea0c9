"""The compiled row-change kernel (engine/_native/redopack.c) against its Python twin.

:mod:`engine.embedded.redopack` states what the kernel does; the C module must give the same
bytes (framed records, value encodings, cut blocks, commit records) and leave the
transaction and the database's cleanout map in the same state, for any values SQLite can
hand it: NULLs, empty strings, integers of any size and sign, floats fractional, huge,
tiny or not finite, multi-byte UTF-8, dates valid and not. What the C kernel does not
encode itself goes to the Python encoders, so a value that makes the Python path raise
makes the C path raise the same error. The workload's golden hashes are checked with
whichever kernel is built; :func:`test_the_python_twin_gives_the_golden_redo` checks the
twin in the same run.
"""

from __future__ import annotations

import json
import shutil
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine._native import enabled as native_enabled
from engine._native import load
from engine.embedded import bulk
from engine.embedded import bulkpack as bp
from engine.embedded import redogen as rg
from engine.embedded import redopack as rp
from engine.embedded.dictionary import ColumnDef, IndexDef, TableDef
from engine.redo.ids import Xid, make_dba
from tests.source.test_source_workload_golden import GOLDEN, SCENARIOS, _fingerprint

_C: Any = load("redopack")
needs_c = pytest.mark.skipif(_C is None, reason="the C kernel is disabled (GGSCI_NATIVE=0)")

COLUMNS = (
    ColumnDef("ID", "NUMBER", nullable=False),
    ColumnDef("NAME", "VARCHAR2", 4000),
    ColumnDef("AMOUNT", "NUMBER"),
    ColumnDef("CREATED", "DATE"),
    ColumnDef("STATUS", "CHAR", 1),
)
TABLES = {
    # the workload's shape: a NUMBER key and its index
    "number key": TableDef(
        "WL", "T", 76481, 76482, COLUMNS, key=("ID",),
        indexes=(IndexDef("PK", 76483, 76483, ("ID",), primary=True, block=0x441),),
    ),
    # a character key (its index form may be too long) and no index
    "text key": TableDef(
        "WL", "U", 76490, 76491, COLUMNS, key=("NAME",),
        indexes=(IndexDef("UK", 76492, 76492, ("NAME",), unique=True, block=0x461),),
    ),
    "no index": TableDef("WL", "V", 76495, 76496, COLUMNS, key=("ID",)),
}  # fmt: skip

# values SQLite gives back, and some it would not (the Python encoders decide about those)
good_numbers = st.one_of(
    st.none(),
    st.integers(-(2**64), 2**64),
    st.integers(-(10**38), 10**38),
    st.floats(-1e20, 1e20),
    st.floats(-1e6, 1e6).map(lambda f: round(f, 2)),
)
numbers = st.one_of(
    good_numbers,
    st.just(""),
    st.integers(),
    st.floats(),
    st.decimals(allow_nan=False, allow_infinity=False, places=3).map(str),
    st.text(max_size=5),
)
good_dates = st.one_of(
    st.none(),
    st.datetimes().map(lambda d: d.strftime("%Y-%m-%d %H:%M:%S")),
    st.datetimes().map(str),  # with microseconds
)
dates = st.one_of(
    good_dates,
    st.just(""),
    st.from_regex(r"\A[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\Z"),  # Feb 30 ...
    st.text(max_size=20),
    st.integers(),
)
texts = st.one_of(st.none(), st.just(""), st.text(), st.text(min_size=200), st.integers())
good_rows = st.tuples(good_numbers, texts, good_numbers, good_dates, texts)
row_values = st.one_of(good_rows, good_rows, st.tuples(numbers, texts, numbers, dates, texts))
BY_KIND = {"N": numbers, "D": dates, "T": texts}

# a transaction: usn, slot, undo record, undo sequence, started, row block seen, leaf
# seen, ITL entries left in the row block by commits (None: not dirty)
txns = st.tuples(
    st.integers(1, 10),
    st.integers(0, 47),
    st.integers(0, 0x101),
    st.integers(0, 0xFFFF),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.one_of(
        st.none(),
        st.lists(st.tuples(st.integers(1, 3), st.just(2), st.integers(0, 2**63)), max_size=3),
    ),
)
places = st.tuples(
    st.integers(0, 2**40),  # logical
    st.integers(0, 1500),  # switch_at - logical (small: the switch falls in the change)
    st.integers(1, 2**62),  # scn
    st.integers(-(2**62), 2**62),  # time
    st.integers(0, 0x3FFFFF),  # block
    st.integers(0, 0xFFFF),  # slot
    st.binary(min_size=8, max_size=8),  # rec_ids
)


def _kernels(name: str) -> tuple[Any, rp.Table]:
    table = TABLES[name]
    pack = bp.TablePack(table)
    kinds, encoders = rp.codecs_of(table)
    return _C.Table(pack, kinds, encoders), rp.Table(pack, kinds, encoders)


def _state(txn: tuple[Any, ...], dba: int, leaf: int) -> rp.Txn:
    usn, slot, rec, seq, started, seen, leaf_seen, entries = txn
    ids = rg.TxnIds(Xid(usn, slot, 0x357), undo_seq=seq, rec=rec, started=started)
    if seen:
        ids.blocks.add(dba)
    if leaf_seen:
        ids.blocks.add(leaf)
    dirty = {} if entries is None else {dba: list(entries), dba + 1: [(1, 2, 3)]}
    head = bp.tx_head(ids.header_cls, ids.header_dba, usn, slot, 0x357, ids.logon_user)
    return rp.Txn(head, ids, dirty, bp.session_cv(40, 7, 12345, "WL", "T1"))


def _outcome(call: Any, *args: Any) -> Any:
    try:
        return call(*args)
    except Exception as exc:  # the same error type on both paths
        return type(exc)


def _after(tx: rp.Txn) -> tuple[Any, ...]:
    ids = tx.ids
    return ids.rec, ids.undo_seq, ids.started, sorted(ids.blocks), ids.last_uba, tx.dirty


@needs_c
@settings(max_examples=400, deadline=None)
@given(
    name=st.sampled_from(sorted(TABLES)),
    op=st.sampled_from(["insert", "update", "delete"]),
    values=row_values,
    new=row_values,
    set_cols=st.lists(st.integers(0, 4), min_size=1, max_size=5, unique=True),
    txn=txns,
    where=places,
)
def test_the_c_row_change_is_the_python_one(
    name: str,
    op: str,
    values: tuple[Any, ...],
    new: tuple[Any, ...],
    set_cols: list[int],
    txn: tuple[Any, ...],
    where: tuple[int, int, int, int, int, int, bytes],
) -> None:
    logical, room, scn, ts, block, slot, rec_ids = where
    dba = make_dba(4, block)
    native, python = _kernels(name)
    key_col = python.pack.key_col
    cols = tuple(set_cols)
    results = []
    for kernel in (native, python):
        tx = _state(txn, dba, make_dba(4, 0x441))
        head = (tx, logical, rec_ids, logical + room, scn, ts, dba, slot)
        if op == "insert":
            got = _outcome(kernel.insert, *head, (7, *values))
        elif op == "update":
            row = (7, values[key_col], *(values[i] for i in cols))
            got = _outcome(kernel.update, *head, cols, row, tuple(new[i] for i in cols))
        else:
            got = _outcome(kernel.delete, *head, (7, *values))
        results.append((got, None if isinstance(got, type) else _after(tx)))
    assert results[0] == results[1]


@needs_c
@settings(max_examples=500, deadline=None)
@given(data=st.data())
def test_the_c_value_encodings_are_the_python_ones(data: st.DataObject) -> None:
    native, python = _kernels("number key")
    kinds, _ = rp.codecs_of(TABLES["number key"])
    values: list[object] = [None] * len(kinds)
    col = data.draw(st.integers(0, len(kinds) - 1))
    values[col] = data.draw(BY_KIND[kinds[col]])
    assert _outcome(native.encode, values) == _outcome(python.encode, values)


@needs_c
@pytest.mark.parametrize(
    "value",
    [0, -0.0, 0.0, 1, -1, 99, 100, -100, 10**38, -(10**38), 10**40, 2**63, -(2**63), 2**64,
     0.01, -0.01, 0.1, 0.5, 1.5, 123.45, -123.45, 1e-4, 1.5e-4, 1e-5, 1e15, 1e16, 1e22,
     123456789012.34, 0.30000000000000004, 1 / 3, 2.5e-300, float("inf"), float("nan")],
)  # fmt: skip
def test_boundary_numbers(value: object) -> None:
    native, python = _kernels("number key")
    row = (value, None, None, None, None)
    assert _outcome(native.encode, row) == _outcome(python.encode, row)


@needs_c
def test_a_log_switch_between_the_records_of_a_change_leaves_the_rest_unframed() -> None:
    native, python = _kernels("number key")
    got = []
    for kernel in (native, python):
        tx = _state((3, 5, 0, 0x10, False, False, False, None), make_dba(4, 9), 0)
        where = (tx, 1000, b"\1\0\1\0\1\0\0\0", 1001, 5000, 0, make_dba(4, 9), 3)
        got.append(kernel.delete(*where, (7, 12, "A", 1.5, "2024-02-29 23:59:59", "N")))
    assert got[0] == got[1]
    frames, rest = got[0]
    assert [n for n, _ in rest] == [2]
    assert len(frames) == int.from_bytes(frames[:4], "little") + 8  # one whole frame


@needs_c
@settings(max_examples=100, deadline=None)
@given(
    usn=st.integers(1, 10),
    slot=st.integers(0, 47),
    where=places,
    uba=st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 0xFFFF), st.integers(0, 0xFF)),
    rollback=st.booleans(),
)
def test_the_c_commit_is_the_python_one(
    usn: int,
    slot: int,
    where: tuple[int, int, int, int, int, int, bytes],
    uba: tuple[int, int, int],
    rollback: bool,
) -> None:
    logical, _, scn, ts, _, _, rec_ids = where
    head = bp.tx_head(15 + 2 * usn, 0xC00070, usn, slot, 0x1234, 90)
    args = (head, logical, rec_ids, scn, ts, uba, rollback)
    assert _C.commit(*args) == rp.commit(*args)


@needs_c
@given(data=st.binary(max_size=3000))
def test_the_c_crc_is_zlibs(data: bytes) -> None:
    assert _C.crc32(data) == zlib.crc32(data)


def test_the_c_kernel_is_built_wherever_there_is_a_compiler() -> None:
    if native_enabled() and (shutil.which("cc") or shutil.which("gcc")):
        assert _C is not None, "engine/_native/redopack.c did not build: see `pip install -e .`"


@pytest.mark.parametrize("scenario", ["rollbacks", "switches", "array"])
def test_the_python_twin_gives_the_golden_redo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scenario: str
) -> None:
    """The golden hashes with the pure-Python kernel, whichever one the build gives."""
    monkeypatch.setattr(bulk, "TABLE_KERNEL", rp.Table)
    monkeypatch.setattr(bulk, "COMMIT", rp.commit)
    want = json.loads(GOLDEN.read_text())[scenario]
    assert _fingerprint(tmp_path, SCENARIOS[scenario]) == want


@needs_c
@pytest.mark.parametrize(
    "value",
    ["2024-02-29 23:59:59", "2023-02-29 00:00:00", "2000-02-29 12:00:00", "1900-02-29 12:00:00",
     "0001-01-01 00:00:00", "0000-01-01 00:00:00", "9999-12-31 23:59:59", "2024-13-01 00:00:00",
     "2024-04-31 00:00:00", "2024-01-01 24:00:00", "2024-01-01 23:60:00", "2024-01-01 23:59:60",
     "2024-01-01T10:00:00", "2024-01-01 10:00:00.5", " 2024-01-01 10:00:00", "２０２４-01-01 10:00:00"],
)  # fmt: skip
def test_boundary_dates(value: str) -> None:
    native, python = _kernels("number key")
    row = (1, None, None, value, None)
    assert _outcome(native.encode, row) == _outcome(python.encode, row)
