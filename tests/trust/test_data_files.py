"""Files on disk hold data, never code: the data-file codec, the change-record layout, and the
embedded database's saved state (issue 12)."""

from __future__ import annotations

import contextlib
import math
import os
import pickle
import sqlite3
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.changes import Entry, Fragment, Kind, Lcr, Position
from engine.embedded.clock import ManualClock
from engine.embedded.database import Database, create_database
from engine.embedded.errors import DatabaseError
from engine.embedded.sql import execute
from engine.extract.lcrcodec import decode_lcrs, encode_lcrs
from engine.extract.orphans import read_source_state
from engine.home import datafile as df

I64 = st.integers(-(2**63), 2**63 - 1)
TEXT = st.text(st.characters(codec=None), max_size=20)  # surrogates included
COLUMNS = st.lists(st.tuples(I64, st.none() | TEXT), max_size=5).map(tuple)

#: What an Lcr and a Fragment both have: the transaction, where it is, SCN and time.
HEAD = {
    "xid": TEXT,
    "pos": st.builds(Position, I64, I64, I64),
    "end": I64,
    "scn": I64,
    "subscn": I64,
    "time_us": I64,
}

lcrs = st.builds(
    Lcr,
    kind=st.sampled_from(list(Kind)),
    **HEAD,
    io_type=I64,
    table=TEXT,
    rowid=st.none() | TEXT,
    columns=COLUMNS,
    before_columns=COLUMNS,
    ref=TEXT,
    user=TEXT,
    txn_name=TEXT,
    text=TEXT,
    record=st.binary(max_size=40),
)

TEXTS = st.lists(TEXT, max_size=4).map(tuple)
fragments = st.builds(
    Fragment,
    **HEAD,
    first_scn=I64,
    first_time_us=I64,
    sessions=st.lists(st.tuples(TEXT, TEXT), max_size=3).map(tuple),
    records=st.binary(max_size=60),
    count=st.just(0),
    refs=st.just(()),
    undone=TEXTS,
    table_ops=st.lists(st.tuples(TEXT, I64, I64), max_size=3).map(tuple),
    lcrs=st.integers(0, 2**32 - 1),
).flatmap(
    lambda f: TEXTS.map(lambda refs: Fragment(**{**_fields(f), "refs": refs, "count": len(refs)}))
)


def _marked(f: Fragment) -> st.SearchStrategy[Fragment]:
    """``f`` with a token mark per record (kind 9 on disk): 0, or a table count's place."""
    marks = st.binary(min_size=f.count, max_size=f.count).map(
        lambda b: bytes(x % (len(f.table_ops) + 1) for x in b)
    )
    return marks.map(lambda m: Fragment(**{**_fields(f), "marks": m}))


entries = lcrs | fragments | fragments.filter(lambda f: f.count > 0).flatmap(_marked)


def _fields(f: Fragment) -> dict[str, Any]:
    return {k: getattr(f, k) for k in Fragment.__slots__}


scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**300), 2**300)
    | st.floats(allow_nan=True)
    | TEXT
    | st.binary(max_size=30)
    | st.decimals(allow_nan=True, allow_infinity=True)
    | st.datetimes()
    | st.datetimes(timezones=st.sampled_from([UTC, timezone(timedelta(hours=-7, minutes=-30))]))
)
hashables = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT | st.binary(max_size=8) | st.datetimes(),
    lambda inner: st.lists(inner, max_size=3).map(tuple),
    max_leaves=6,
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.sets(hashables, max_size=4)
        | st.dictionaries(hashables, inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(st.lists(entries, max_size=6))
def test_change_records_round_trip(rows: list[Entry]) -> None:
    """Changes and fragments (the parallel assembly's cached items) alike."""
    assert decode_lcrs(encode_lcrs(rows)) == rows


@settings(max_examples=150, deadline=None)
@given(st.lists(entries, min_size=1, max_size=3), st.data())
def test_a_damaged_batch_is_a_data_error_or_data(rows: list[Entry], data: st.DataObject) -> None:
    raw = encode_lcrs(rows)
    cut = data.draw(st.integers(0, len(raw) - 1))
    with pytest.raises(df.DataError):
        decode_lcrs(raw[:cut])  # every truncation is refused
    at = data.draw(st.integers(0, len(raw) - 1))
    flipped = raw[:at] + bytes([raw[at] ^ data.draw(st.integers(1, 255))]) + raw[at + 1 :]
    with contextlib.suppress(df.DataError):  # a flip in a value may give another valid
        assert all(isinstance(r, (Lcr, Fragment)) for r in decode_lcrs(flipped))  # or refused


def canon(v: Any) -> Any:
    """``v`` comparable with ``==``: NaN made equal to itself, types and offsets kept."""
    if isinstance(v, float) and math.isnan(v):
        return ("nan",)
    if isinstance(v, Decimal) and v.is_nan():
        return ("dnan", str(v))
    if isinstance(v, list | tuple):
        return (type(v).__name__, tuple(canon(x) for x in v))
    if isinstance(v, set):
        return ("set", frozenset(canon(x) for x in v))
    if isinstance(v, dict):
        return ("dict", frozenset((canon(k), canon(x)) for k, x in v.items()))
    if isinstance(v, datetime):
        return ("datetime", v.isoformat())
    return (type(v).__name__, v)


@settings(max_examples=200, deadline=None)
@given(values)
def test_values_round_trip(value: Any) -> None:
    assert canon(df.unpack(df.pack(value))) == canon(value)


@settings(max_examples=150, deadline=None)
@given(values, st.data())
def test_damaged_values_and_frames_are_data_errors(value: Any, data: st.DataObject) -> None:
    raw = df.pack(value)
    cut = data.draw(st.integers(0, len(raw) - 1))
    with pytest.raises(df.DataError):
        df.unpack(raw[:cut])
    at = data.draw(st.integers(0, len(raw) - 1))
    flipped = raw[:at] + bytes([raw[at] ^ data.draw(st.integers(1, 255))]) + raw[at + 1 :]
    with contextlib.suppress(df.DataError):
        df.unpack(flipped)
    frame = df.seal(b"MAGIC", raw)
    at = data.draw(st.integers(0, len(frame) - 1))
    with pytest.raises(df.DataError):  # a frame's checksum catches every flip
        df.unseal(b"MAGIC", frame[:at] + bytes([frame[at] ^ 1]) + frame[at + 1 :])
    with pytest.raises(df.DataError):
        df.unseal(b"MAGIC", frame[: data.draw(st.integers(0, len(frame) - 1))])


def test_limits_are_checked_before_anything_is_allocated() -> None:
    with pytest.raises(df.DataError, match="exceeds the data left"):
        df.unpack(b"l\xff\xff\xff\xff")  # four billion items announced in five bytes
    with pytest.raises(df.DataError, match="nested deeper"):
        df.unpack(b"l\x01\x00\x00\x00" * 100 + b"N")
    with pytest.raises(df.DataError, match="exceeds the limit"):
        df.unseal(b"M", b"M" + (2**40).to_bytes(8, "little"))
    with pytest.raises(df.DataError, match="longer than its"):
        decode_lcrs(b"\xff\xff\xff\x00")
    with pytest.raises(df.DataError, match="cannot be written"):
        df.pack(object())


class _RunsCommand:
    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (os.system, (self.command,))


def test_a_pickle_in_the_databases_saved_state_is_refused_never_loaded(tmp_path: Path) -> None:
    root = create_database(tmp_path, "SRC")
    marker = tmp_path / "ran"
    with sqlite3.connect(root / "data.sqlite") as conn:
        conn.execute(
            "UPDATE _gg_state SET value = ? WHERE key = 'sessions'",
            (pickle.dumps(_RunsCommand(f"id > {marker}")),),
        )
    with pytest.raises(DatabaseError) as info:
        Database(root)
    assert info.value.code == "GGS-SRC-0108"
    assert "recreate the database" in str(info.value) and "older version" in str(info.value)
    with pytest.raises(df.DataError):
        read_source_state(root)  # the orphan scan reads it too: refused the same way
    assert not marker.exists()
    with sqlite3.connect(root / "data.sqlite") as conn:
        conn.execute("DELETE FROM _gg_state")
    with pytest.raises(DatabaseError, match="has no state"):
        Database(root)


def test_open_sessions_survive_a_restart_as_data(tmp_path: Path) -> None:
    """An open transaction's undo (NUMBER, DATE and NULL before-values), locks and savepoints
    are saved at close and give the same rollback after a reopen."""
    root = create_database(tmp_path, "SRC", threads=2)
    clock = ManualClock(datetime(2026, 5, 1, 12, 0, 0))
    with Database(root, clock=clock) as db:
        s = db.session("ddl", thread=1)
        execute(db, s, "CREATE TABLE hr.t (id NUMBER PRIMARY KEY, n NUMBER, d DATE, v VARCHAR2(9))")
        execute(db, s, "INSERT INTO hr.t VALUES (1, 1.25, DATE '2020-01-02', NULL)")
        execute(db, s, "COMMIT")
        a = db.session("a", thread=2)
        execute(db, a, "UPDATE hr.t SET n = 7, d = DATE '2021-01-01', v = 'x' WHERE id = 1")
        execute(db, a, "SAVEPOINT sp")
        execute(db, a, "INSERT INTO hr.t VALUES (2, 2, NULL, 'y')")
        xid = a.txn.xid if a.txn else None
    with sqlite3.connect(root / "data.sqlite") as conn:
        (raw,) = conn.execute("SELECT value FROM _gg_state WHERE key = 'sessions'").fetchone()
    assert not raw.startswith(b"\x80")  # not a pickle
    assert read_source_state(root).active_xids == {str(xid)}
    with Database(root, clock=clock) as db:
        a = db.session("a", thread=2)
        assert (
            a.txn is not None and a.txn.xid == xid and "SP" in {k.upper() for k in a.txn.savepoints}
        )
        execute(db, a, "ROLLBACK TO SAVEPOINT sp")
        assert execute(db, a, "SELECT id, v FROM hr.t ORDER BY id").rows == ((1, "x"),)
        execute(db, a, "ROLLBACK")
        back = execute(db, a, "SELECT id, n, d, v FROM hr.t ORDER BY id").rows
    assert back == ((1, 1.25, "2020-01-02 00:00:00", None),)
