"""SQL on the embedded database: DDL, DML, errors with codes, sessions, locks, savepoints."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.embedded.database import Database
from engine.embedded.dictionary import load_dictionary
from engine.embedded.errors import (
    ConstraintError,
    DatabaseError,
    RowLockedError,
    SourceError,
    SqlError,
    UnknownObjectError,
)
from engine.embedded.sql import execute, run_script, split_statements
from tests.harness.logical import decode, replay

DDL = """
CREATE TABLE t (id NUMBER PRIMARY KEY, name VARCHAR2(10) NOT NULL, born DATE, ts TIMESTAMP,
                code CHAR(3), amount NUMBER(10,2), CONSTRAINT t_uk UNIQUE (name));
"""


def _db(make_db: Callable[..., Database], threads: int = 1) -> Database:
    db = make_db(threads=threads)
    list(run_script(db, db.session("S1", username="APP"), DDL))
    return db


def test_split_statements() -> None:
    text = "a 'x;y'; -- c;\n b /* ; */; INSERT /*+ APPEND */ INTO t SELECT 1 FROM d\n/\n"
    assert list(split_statements(text)) == [
        "a 'x;y'",
        "b",
        "INSERT /*+ APPEND */ INTO t SELECT 1 FROM d",
    ]


def test_types_values_and_select(make_db: Callable[..., Database]) -> None:
    db = _db(make_db)
    s = db.session("S1")
    r = execute(
        db,
        s,
        "INSERT INTO t VALUES (1, 'ab', DATE '2013-01-02', "
        "TO_TIMESTAMP('2013-01-02 10:11:12.5','YYYY-MM-DD HH24:MI:SS.FF'), 'x', -3.25)",
    )
    assert r.feedback == "1 row created."
    execute(db, s, "INSERT INTO t (id, name) VALUES (2, 'c' || 'd')")
    res = execute(db, s, "SELECT id, name, born, ts, code, amount FROM t ORDER BY id")
    assert res.columns == ("ID", "NAME", "BORN", "TS", "CODE", "AMOUNT")
    assert res.rows[0] == (
        1,
        "ab",
        "2013-01-02 00:00:00",
        "2013-01-02 10:11:12.500000",
        "x  ",
        -3.25,
    )
    assert res.rows[1][:2] == (2, "cd")
    execute(db, s, "COMMIT")
    d = decode([lr.record for lr in db.records()], load_dictionary(db.root / "dictionary.json"))
    row = d.committed[-1].changes[0].after
    assert row["BORN"] == datetime(2013, 1, 2)
    assert row["TS"] == datetime(2013, 1, 2, 10, 11, 12, 500000)
    assert row["CODE"] == "x  " and row["AMOUNT"] == Decimal("-3.25")


@pytest.mark.parametrize(
    ("stmt", "code"),
    [
        ("INSERT INTO nosuch VALUES (1)", "ORA-00942"),
        ("INSERT INTO t VALUES (1)", "ORA-00947"),
        ("INSERT INTO t (id) VALUES (9)", "ORA-01400"),
        ("INSERT INTO t VALUES (3, 'toolongvalue!', NULL, NULL, NULL, NULL)", "ORA-12899"),
        ("UPDATE t SET nosuch = 1", "ORA-00904"),
        ("FROB the table", "ORA-00900"),
        ("SELECT FROM WHERE", "ORA-00900"),
        ("ROLLBACK TO SAVEPOINT nope", "ORA-01086"),
        ("CREATE TABLE t (x NUMBER)", "ORA-00955"),
        ("CREATE TABLE u (x BLOB)", "ORA-00902"),
    ],
)
def test_errors_have_codes(make_db: Callable[..., Database], stmt: str, code: str) -> None:
    db = _db(make_db)
    with pytest.raises(SqlError) as err:
        execute(db, db.session("S1"), stmt)
    assert err.value.code == code
    assert "\n" not in str(err.value)


def test_unique_violation_rolls_back_the_statement_only(make_db: Callable[..., Database]) -> None:
    db = _db(make_db)
    s = db.session("S1")
    execute(db, s, "INSERT INTO t (id, name) VALUES (1, 'a')")
    execute(db, s, "INSERT INTO t (id, name) VALUES (2, 'b')")
    with pytest.raises(ConstraintError) as err:
        execute(db, s, "UPDATE t SET name = 'z'")  # second row collides with the first
    assert err.value.code == "ORA-00001" and "T_UK" in err.value.message
    assert execute(db, s, "SELECT name FROM t ORDER BY id").rows == (("a",), ("b",))
    execute(db, s, "COMMIT")
    d = decode([lr.record for lr in db.records()], load_dictionary(db.root / "dictionary.json"))
    (txn,) = [t for t in d.committed if t.changes]
    assert [c.op for c in txn.changes] == ["INSERT", "INSERT"]  # the failed update compensated


def test_row_lock_between_sessions(make_db: Callable[..., Database]) -> None:
    db = _db(make_db, threads=2)
    a, b = db.session("A"), db.session("B")
    assert (a.thread, b.thread) != (a.thread, a.thread)
    execute(db, a, "INSERT INTO app.t (id, name) VALUES (1, 'a')")
    execute(db, a, "COMMIT")
    execute(db, a, "UPDATE app.t SET name = 'x' WHERE id = 1")
    with pytest.raises(RowLockedError) as err:
        execute(db, b, "DELETE FROM app.t WHERE id = 1")
    assert err.value.code == "ORA-00054" and "session A" in err.value.message
    execute(db, a, "ROLLBACK")
    assert execute(db, b, "DELETE FROM app.t WHERE id = 1").count == 1


def test_savepoints(make_db: Callable[..., Database]) -> None:
    db = _db(make_db)
    s = db.session("S1")
    execute(db, s, "INSERT INTO t (id, name) VALUES (1, 'a')")
    execute(db, s, "SAVEPOINT sp1")
    execute(db, s, "INSERT INTO t (id, name) VALUES (2, 'b')")
    execute(db, s, "UPDATE t SET name = 'q' WHERE id = 1")
    execute(db, s, "ROLLBACK TO SAVEPOINT sp1")
    execute(db, s, "INSERT INTO t (id, name) VALUES (3, 'c')")
    execute(db, s, "COMMIT")
    assert execute(db, s, "SELECT id, name FROM t ORDER BY id").rows == ((1, "a"), (3, "c"))
    recs = [lr.record for lr in db.records()]
    assert any("5.6" in r.ops for r in recs)
    d = decode(recs, load_dictionary(db.root / "dictionary.json"))
    txn = [t for t in d.committed if t.changes][-1]
    assert [(c.op, c.after.get("ID")) for c in txn.changes] == [("INSERT", 1), ("INSERT", 3)]


def test_rollback_writes_compensation_and_rollback_flag(make_db: Callable[..., Database]) -> None:
    db = _db(make_db)
    s = db.session("S1")
    execute(db, s, "INSERT INTO t (id, name) VALUES (1, 'a')")
    execute(db, s, "COMMIT")
    n = len(db.records())
    execute(db, s, "DELETE FROM t")
    execute(db, s, "ROLLBACK")
    recs = [lr.record for lr in db.records()[n:]]
    assert recs[-1].ops == ("5.4",) and recs[-1].changes[0].body.rollback  # type: ignore[union-attr]
    assert ("5.6", "11.2", "10.2", "10.2") in [r.ops for r in recs]
    assert execute(db, s, "SELECT COUNT(*) FROM t").rows == ((1,),)


def test_array_and_direct_path(make_db: Callable[..., Database]) -> None:
    db = _db(make_db)
    s = db.session("S1")
    for i in range(5):
        execute(db, s, f"INSERT INTO t (id, name) VALUES ({i}, 'n{i}')")
    execute(db, s, "CREATE TABLE t2 AS SELECT * FROM t WHERE ROWNUM < 1")
    assert execute(db, s, "INSERT INTO t2 SELECT * FROM t").count == 5
    ops = [r.ops for r in (lr.record for lr in db.records())]
    assert any("11.11" in o for o in ops)
    execute(db, s, "INSERT /*+ APPEND */ INTO t2 SELECT * FROM t")
    assert any("19.1" in r.ops for r in (lr.record for lr in db.records()))
    with pytest.raises(SqlError) as err:
        execute(db, s, "DELETE FROM t2")
    assert err.value.code == "ORA-12838"
    execute(db, s, "COMMIT")
    assert execute(db, s, "SELECT COUNT(*) FROM t2").rows == ((10,),)


def test_sessions_survive_reopen(make_db: Callable[..., Database]) -> None:
    db = _db(make_db)
    execute(db, db.session("A", username="APP"), "INSERT INTO t (id, name) VALUES (1, 'a')")
    db.close()
    db2 = make_db()
    with pytest.raises(RowLockedError):
        execute(db2, db2.session("B", username="APP"), "UPDATE t SET name = 'b'")
    execute(db2, db2.session("A"), "COMMIT")
    assert execute(db2, db2.session("B"), "UPDATE t SET name = 'b'").count == 1


def test_second_process_is_refused(make_db: Callable[..., Database]) -> None:
    db = _db(make_db)
    with pytest.raises(DatabaseError) as err:
        Database(db.root)
    assert err.value.code == "GGS-SRC-0103"


def test_crash_instance_orphans(make_db: Callable[..., Database]) -> None:
    db = _db(make_db, threads=2)
    a, b = db.session("A", thread=1), db.session("B", thread=2)
    execute(db, a, "INSERT INTO app.t (id, name) VALUES (1, 'a')")
    execute(db, b, "INSERT INTO app.t (id, name) VALUES (2, 'b')")
    execute(db, a, "COMMIT")
    orphans = db.crash_instance(2)
    assert len(orphans) == 1
    assert execute(db, db.session("C", username="APP", thread=1), "SELECT id FROM t").rows == (
        (1,),
    )
    d = decode([lr.record for lr in db.records()], load_dictionary(db.root / "dictionary.json"))
    assert [str(t.xid) for t in d.open] == orphans
    with pytest.raises(UnknownObjectError):
        execute(db, db.session("C"), "SELECT * FROM nope")


def test_replay_rebuilds_tables(make_db: Callable[..., Database]) -> None:
    db = _db(make_db)
    s = db.session("S1")
    for i in range(20):
        execute(db, s, f"INSERT INTO t (id, name, amount) VALUES ({i}, 'n{i}', {i * 1.5})")
    execute(db, s, "UPDATE t SET amount = amount * 2 WHERE MOD(id, 3) = 0")
    execute(db, s, "DELETE FROM t WHERE id > 15")
    execute(db, s, "COMMIT")
    rebuilt, held = _replayed_and_held(db, "T")
    assert rebuilt == held


def _replayed_and_held(db: Database, name: str) -> tuple[list[Any], list[Any]]:
    """APP.name's rows as the committed redo replays them, and as the table holds them."""
    d = decode([lr.record for lr in db.records()], load_dictionary(db.root / "dictionary.json"))
    rebuilt = replay(d.committed).get(f"APP.{name}", {})
    table = db.table("APP", name)
    return sorted(rebuilt.values(), key=lambda r: r["ID"]), [
        {c.name: _py(c.type, v) for c, v in zip(table.columns, row, strict=True)}
        for row in sorted(db.rows(table))
    ]


def _py(t: str, v: object) -> object:
    from engine.embedded.dictionary import ColumnDef
    from engine.embedded.values import to_python

    return to_python(ColumnDef("X", t), v)  # type: ignore[arg-type]


def test_select_cleans_out_committed_blocks(make_db: Callable[..., Database]) -> None:
    from engine.embedded.dump_parse import parse_dump
    from engine.embedded.dump_write import dump_text
    from engine.redo.model import Cleanout

    db = _db(make_db)
    s = db.session("S1")
    execute(db, s, "INSERT INTO t (id, name) VALUES (1, 'a')")
    execute(db, s, "COMMIT")
    n = len(db.records())
    assert execute(db, s, "SELECT name FROM t").rows == (("a",),)
    new = [lr.record for lr in db.records()[n:]]
    assert [r.ops for r in new] == [("4.1",)]
    body = new[0].changes[0].body
    assert isinstance(body, Cleanout) and body.entries[0][2] < new[0].scn
    assert parse_dump(list(dump_text(new))).records == new
    execute(db, s, "SELECT name FROM t")
    assert len(db.records()) == n + 1  # cleaned once
    assert execute(db, s, "SELECT 1 + 1 FROM dual").rows == ((2,),)


def test_dml_cleans_out_blocks_like_the_seed(make_db: Callable[..., Database]) -> None:
    """Seed 002's single-row update: its 11.5 carries KTB op 0x11 with a block cleanout of
    the insert that committed before it."""
    from engine.embedded.dump_write import dump_text
    from engine.redo.model import Kdo

    db = _db(make_db)
    s = db.session("S1")
    execute(db, s, "INSERT INTO t (id, name) VALUES (1, 'a')")
    execute(db, s, "COMMIT")
    commit_scn = db.records()[-1].record.scn
    execute(db, s, "UPDATE t SET amount = 5 WHERE id = 1")
    rec = db.records()[-1].record
    assert rec.ops == ("5.2", "5.1", "11.5", "5.20")
    kdo = rec.changes[2].body
    assert isinstance(kdo, Kdo) and kdo.ktb.op == 0x11
    assert kdo.ktb.cleanout_scn == rec.scn and kdo.ktb.cleanout[0][2] == commit_scn
    assert any(line.startswith("Block cleanout record") for line in dump_text([rec]))
    execute(db, s, "UPDATE t SET amount = 6 WHERE id = 1")
    again = db.records()[-1].record.changes[1].body
    assert isinstance(again, Kdo) and again.ktb.kind == "C"


def test_number_precision_and_scale(make_db: Callable[..., Database]) -> None:
    db = make_db()
    s = db.session("S", username="APP")
    execute(db, s, "CREATE TABLE n (a NUMBER(5,2), b NUMBER(3))")
    execute(db, s, "INSERT INTO n VALUES (1.005, 12.5)")
    assert execute(db, s, "SELECT a, b FROM n").rows == ((1.01, 13),)
    with pytest.raises(SqlError) as err:
        execute(db, s, "INSERT INTO n VALUES (1000, 1)")
    assert err.value.code == "ORA-01438"
    with pytest.raises(SqlError) as err:
        execute(db, s, "INSERT INTO n VALUES (1, 1000)")
    assert err.value.code == "ORA-01438"


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO big VALUES (2, '{v}', '{x}')",
        "INSERT INTO big SELECT 2, '{v}', '{x}' FROM big WHERE id = 1",
        "INSERT /*+ APPEND */ INTO big SELECT 2, '{v}', 'x' || '{x}' FROM big WHERE id = 1",
    ],
)
def test_a_row_too_large_for_one_kdo_is_logged(
    make_db: Callable[..., Database], statement: str
) -> None:
    """A 70 KB row (issue 29): a single-row insert's KDO records the row size in 16 bits,
    so the size saturates and each column is a field of its own (an 11.2 all the same); a
    direct load's block image and an update's changed columns carry it as they are. A value
    of 80 KB fits no change vector field (16-bit lengths, issue 24: Oracle keeps such values
    out of line): the statement fails whole with one coded error before anything changes.
    What the table holds is exactly what the redo replays to."""
    db = make_db()
    s = db.session("S1", username="APP")
    execute(
        db, s, "CREATE TABLE big (id NUMBER PRIMARY KEY, v VARCHAR2(40000), w VARCHAR2(200000))"
    )
    execute(db, s, "INSERT INTO big VALUES (1, 'a', 'small')")
    with pytest.raises(SqlError) as exc:
        execute(db, s, statement.format(v="b", x="x" * 80_000))
    assert exc.value.code == "GGS-SRC-0203" and "value of 8000" in exc.value.message
    with pytest.raises(SqlError):
        execute(db, s, "UPDATE big SET w = '" + "y" * 80_000 + "' WHERE id = 1")
    if "APPEND" in statement:  # a direct load's block image is one field: not that row
        with pytest.raises(SqlError) as exc:
            execute(db, s, statement.format(v="b" * 30_000, x="x" * 40_000))
        assert exc.value.code == "GGS-SRC-0203" and "block image" in exc.value.message
        execute(db, s, statement.format(v="b" * 20_000, x="x" * 40_000))
    else:
        execute(db, s, statement.format(v="b" * 30_000, x="x" * 40_000))
    execute(db, s, "COMMIT")
    execute(db, s, "UPDATE big SET w = '" + "y" * 60_000 + "' WHERE id = 1")  # a URP: logged
    execute(db, s, "COMMIT")
    # a delete's undo holds the whole row (its KDO size saturates at 16 bits), rolled back
    execute(db, s, "DELETE FROM big WHERE id = 2")
    execute(db, s, "ROLLBACK")
    execute(db, s, "INSERT INTO big VALUES (3, '" + "c" * 30_000 + "', '" + "z" * 40_000 + "')")
    execute(db, s, "DELETE FROM big WHERE id = 3")
    execute(db, s, "COMMIT")
    rebuilt, held = _replayed_and_held(db, "BIG")
    db.close()
    assert rebuilt == held
    assert rebuilt[0]["W"] == "y" * 60_000
    assert len(rebuilt) == 2 and len(rebuilt[1]["W"]) >= 40_000 and len(rebuilt[1]["V"]) >= 20_000


_EXAMPLES: list[int] = []  # one database per example (hypothesis runs many in one test)
_LARGE = st.lists(
    st.tuples(
        st.sampled_from(["insert", "insert-select", "update", "delete", "commit", "rollback"]),
        st.integers(1, 4),  # row id
        st.sampled_from([0, 10, 4000, 30_000, 64_000, 65_600, 80_000]),  # bytes in W
    ),
    min_size=1,
    max_size=8,
)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=_LARGE)
def test_large_rows_are_logged_or_fail_whole(
    make_db: Callable[..., Database], steps: list[tuple[str, int, int]]
) -> None:
    """Fuzz over row sizes around the 16-bit row piece (issue 29): whatever mix of large and
    small inserts, updates and deletes, each statement is logged or fails with a coded
    SourceError before it changes anything, and the committed redo replays to the table."""
    _EXAMPLES.append(0)
    db = make_db(name=f"L{len(_EXAMPLES)}")
    s = db.session("S1", username="APP")
    execute(
        db, s, "CREATE TABLE big (id NUMBER PRIMARY KEY, v VARCHAR2(40000), w VARCHAR2(200000))"
    )
    for op, key, size in steps:
        text = "x" * size
        statement = {
            "insert": f"INSERT INTO big VALUES ({key}, 'v', '{text}')",
            "insert-select": f"INSERT INTO big SELECT {key} + 10, v, w FROM big WHERE id = {key}",
            "update": f"UPDATE big SET w = '{text}' WHERE id = {key}",
            "delete": f"DELETE FROM big WHERE id = {key}",
            "commit": "COMMIT",
            "rollback": "ROLLBACK",
        }[op]
        try:
            execute(db, s, statement)
        except SourceError as exc:
            assert exc.code.startswith(("GGS-SRC-02", "ORA-")), exc
    execute(db, s, "COMMIT")
    rebuilt, held = _replayed_and_held(db, "BIG")
    db.close()
    assert rebuilt == held
