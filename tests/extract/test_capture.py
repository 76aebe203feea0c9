"""Capture end to end on real Spark: SQL on the embedded source, Extract, trail content."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.embedded.database import Database, create_database
from engine.extract.run import ExtractRun
from engine.home.layout import Home
from engine.trail.reader import TrailReader
from params.check import check_text

from .conftest import run_sql

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PRM = "EXTRACT e1\nSOURCEDB src\nEXTTRAIL ./dirdat/aa\nTRANLOGOPTIONS EXCLUDEUSER GGREP\nTABLE hr.emp;\n"
DDL = [
    ("s1", "CREATE TABLE hr.emp (id NUMBER PRIMARY KEY, name VARCHAR2(20), sal NUMBER)"),
    ("s1", "CREATE TABLE hr.other (id NUMBER PRIMARY KEY)"),
]


def extract(home: Home, spark: SparkSession, prm: str = PRM) -> ExtractRun:
    model = check_text(prm).model
    events: list[tuple[str, str]] = []
    run = ExtractRun(
        home, model, None, lambda c, s, t: events.append((c, t)), spark=spark, durable=False
    )
    run.run(threading.Event(), stop_at_eof=True)
    run.close()
    return run


def trail(home: Home) -> list[Any]:
    return [rec for _, rec in TrailReader(str(home.root / "dirdat" / "aa")).records()]


def summary(records: list[Any]) -> list[tuple[str, str, int, str | None]]:
    return [(r.op_name, dict(r.columns).get(0) or "", r.trans_ind, r.tranid) for r in records]


def test_committed_rows_in_commit_order_rollbacks_never(
    home: Home, source: Any, spark: SparkSession
) -> None:
    root, open_db = source
    with open_db() as db:
        run_sql(db, [*DDL,
            ("s1", "INSERT INTO hr.emp VALUES (1, 'ann', 100)"),
            ("s2", "INSERT INTO hr.emp VALUES (2, 'bob', 200)"),
            ("s2", "INSERT INTO hr.other VALUES (2)"),
            ("s2", "COMMIT"),
            ("s1", "COMMIT"),
            ("s1", "UPDATE hr.emp SET sal = 300 WHERE id = 1"),
            ("s1", "ROLLBACK"),
            ("s1", "UPDATE hr.emp SET sal = 400 WHERE id = 1"),
            ("s1", "SAVEPOINT a"),
            ("s1", "DELETE FROM hr.emp WHERE id = 2"),
            ("s1", "ROLLBACK TO SAVEPOINT a"),
            ("s1", "UPDATE hr.emp SET id = 5 WHERE id = 1"),
            ("s1", "COMMIT"),
            ("s3", "INSERT INTO hr.emp SELECT id + 10, name, sal FROM hr.emp"),
            ("s3", "COMMIT"),
        ])  # fmt: skip
    run = extract(home, spark)
    recs = trail(home)
    assert [(r.op_name, r.columns, r.before_columns, r.trans_ind) for r in recs] == [
        ("Insert", ((0, "2"), (1, "bob"), (2, "200")), (), 3),
        ("Insert", ((0, "1"), (1, "ann"), (2, "100")), (), 3),
        ("FieldComp", ((0, "1"), (2, "400")), (), 0),
        ("GGSKeyFieldComp", ((0, "5"),), ((0, "1"),), 2),
        # the array insert: one record per row, in the order the source inserted them
        ("Insert", ((0, "15"), (1, "ann"), (2, "400")), (), 0),
        ("Insert", ((0, "12"), (1, "bob"), (2, "200")), (), 2),
    ]
    firsts = [r for r in recs if r.trans_ind in (0, 3)]
    assert all(r.logcsn and r.tranid for r in firsts)
    assert all(r.logcsn is None and r.tranid is None for r in recs if r.trans_ind not in (0, 3))
    assert [int(r.logcsn) for r in firsts] == sorted(int(r.logcsn) for r in firsts)
    assert run.capture.stats.rollbacks == 1

    # A restart reads from the checkpoint: nothing is written twice.
    extract(home, spark)
    assert len(trail(home)) == len(recs)
    # New work after the restart is appended once.
    with Database(root) as db:
        run_sql(db, [("s4", "DELETE FROM hr.emp WHERE id = 12"), ("s4", "COMMIT")])
    extract(home, spark)
    after = trail(home)
    assert len(after) == len(recs) + 1
    assert (after[-1].op_name, after[-1].columns) == ("Delete", ((0, "12"),))


def test_excluded_user_and_open_transaction_kept_across_restart(
    home: Home, source: Any, spark: SparkSession
) -> None:
    root, open_db = source
    with open_db() as db:
        run_sql(db, [*DDL, ("s1", "INSERT INTO hr.emp VALUES (1, 'open', 1)")])
        ggrep = db.session("rep", username="GGREP")
        from engine.embedded.sql import execute

        execute(db, ggrep, "INSERT INTO hr.emp VALUES (9, 'loop', 9)")
        execute(db, ggrep, "COMMIT")
    run = extract(home, spark)
    assert trail(home) == []
    assert run.capture.stats.excluded == 1
    assert len(run.capture.cache) == 1  # the open transaction of s1
    with Database(root) as db:
        run_sql(db, [("s1", "COMMIT")])
    extract(home, spark)  # re-reads from the recovery checkpoint: the whole transaction
    [rec] = trail(home)
    assert (rec.op_name, rec.columns[0]) == ("Insert", (0, "1"))


OPS = st.lists(
    st.tuples(
        st.integers(0, 2),
        st.sampled_from(["ins", "ins", "upd", "del", "commit", "rollback", "savepoint", "rbsave"]),
    ),
    min_size=1,
    max_size=40,
)


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(OPS)
def test_property_trail_is_exactly_the_committed_transactions_in_commit_order(
    tmp_path_factory: Any, spark: SparkSession, ops: list[tuple[int, str]]
) -> None:
    home = Home(Path(tmp_path_factory.mktemp("prop")))
    home.create_subdirs()
    root = create_database(home.dirdb, "src")
    expected: list[list[tuple[str, str]]] = []
    pending: dict[int, list[tuple[str, str]]] = {0: [], 1: [], 2: []}
    saved: dict[int, int | None] = {0: None, 1: None, 2: None}
    owned: dict[int, list[int]] = {0: [], 1: [], 2: []}  # committed-or-pending ids per session
    live: dict[int, list[int]] = {0: [], 1: [], 2: []}
    committed_live: dict[int, list[int]] = {0: [], 1: [], 2: []}
    counter = 0
    script: list[tuple[str, str]] = list(DDL)
    for s, op in ops:
        name = f"p{s}"
        if op == "ins":
            counter += 1
            key = s * 1000 + counter
            script.append((name, f"INSERT INTO hr.emp VALUES ({key}, 'n{key}', {counter})"))
            pending[s].append(("Insert", str(key)))
            live[s].append(key)
        elif op == "upd" and live[s]:
            key = live[s][0]
            script.append((name, f"UPDATE hr.emp SET sal = sal + 1 WHERE id = {key}"))
            pending[s].append(("FieldComp", str(key)))
        elif op == "del" and live[s]:
            key = live[s].pop()
            script.append((name, f"DELETE FROM hr.emp WHERE id = {key}"))
            pending[s].append(("Delete", str(key)))
        elif op == "savepoint" and pending[s]:
            script.append((name, "SAVEPOINT sp"))
            saved[s] = len(pending[s])
            owned[s] = list(live[s])
        elif op == "rbsave" and saved[s] is not None:
            script.append((name, "ROLLBACK TO SAVEPOINT sp"))
            del pending[s][saved[s] :]
            live[s] = list(owned[s])
        elif op == "commit" and pending[s]:
            script.append((name, "COMMIT"))
            expected.append(pending[s])
            pending[s] = []
            saved[s] = None
            committed_live[s] = list(live[s])
        elif op == "rollback" and pending[s]:
            script.append((name, "ROLLBACK"))
            pending[s] = []
            saved[s] = None
            live[s] = list(committed_live[s])
    with Database(root) as db:
        run_sql(db, script)
    extract(home, spark)
    got: list[list[tuple[str, str]]] = []
    for r in trail(home):
        if r.trans_ind in (0, 3):
            got.append([])
        got[-1].append((r.op_name, dict(r.columns)[0]))
    assert got == [t for t in expected if t]


def test_reportcount_lines_go_to_the_report(home: Home, source: Any, spark: SparkSession) -> None:
    _, open_db = source
    with open_db() as db:
        run_sql(
            db,
            [
                *DDL,
                *[("s1", f"INSERT INTO hr.emp VALUES ({i}, 'x', {i})") for i in range(5)],
                ("s1", "COMMIT"),
            ],
        )
    lines: list[str] = []
    model = check_text(PRM + "REPORTCOUNT EVERY 2 RECORDS, RATE\n").model
    run = ExtractRun(
        home, model, None, lambda *_: None, spark=spark, durable=False, report_line=lines.append
    )
    run.run(threading.Event(), stop_at_eof=True)
    run.close()
    assert len(lines) == 1
    assert (
        lines[0].startswith("5 records processed as of ")
        and "(rate " in lines[0]
        and ",delta " in lines[0]
    )
