"""A Replicat test per MAP option, each on SQLite and on PostgreSQL: COLMAP (USEDEFAULTS
and expressions), WHERE, FILTER (ON, RAISEERROR), KEYCOLS, INSERTALLRECORDS with header
fields, IGNOREINSERTS / IGNOREUPDATES / IGNOREDELETES, HANDLECOLLISIONS (global and per
MAP), REPERROR (per error, per MAP, the 11.2 form without parentheses, RETRYOP)."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from replicat_helpers import Op, add_group, dele, ins, model, txn_records, upd, write_trail

from engine.home.groups import GroupKind, GroupStore, SourceType
from engine.home.layout import Home
from engine.replicat import MappingError, ReplicatError
from engine.replicat.engine import ReplicatRun
from engine.runtime.events import Severity
from engine.trail.layout import IOType

TABLES = (
    "CREATE TABLE hr.emp (id integer PRIMARY KEY, name varchar(40), sal numeric)",
    "CREATE TABLE hr.emp2 (eid integer, ename varchar(80), sal numeric, label varchar(10))",
    "CREATE TABLE hr.hist (id integer, name varchar(40), sal numeric, op varchar(20), "
    "ts varchar(30), csn varchar(20), grp varchar(10))",
)


class Db:
    """One target database for a test: its TARGETDB value, SQL on it, its rows."""

    def __init__(self, home: Home, kind: str, url: str | None) -> None:
        self.home, self.kind, self.url = home, kind, url
        self.targetdb = "./tgt.db" if kind == "sqlite" else str(url)
        if kind == "postgres":
            self.sql("DROP SCHEMA IF EXISTS hr CASCADE", "CREATE SCHEMA hr", *TABLES)
        else:
            self.sql(*(t.replace("hr.", "") for t in TABLES))

    def sql(self, *statements: str) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        if self.kind == "postgres":
            import psycopg

            with psycopg.connect(str(self.url), autocommit=True) as conn:
                for s in statements:
                    cur = conn.execute(s)
                    if cur.description is not None:
                        rows = [tuple(r) for r in cur.fetchall()]
            return rows
        conn = sqlite3.connect(self.home.root / "tgt.db")
        try:
            for s in statements:
                rows = conn.execute(s.replace("hr.", "")).fetchall()
            conn.commit()
        finally:
            conn.close()
        return rows

    def rows(self, table: str = "emp", order: str = "1, 2") -> list[tuple[Any, ...]]:
        out = self.sql(f"SELECT * FROM hr.{table} ORDER BY {order}")
        return [tuple(_plain(v) for v in r) for r in out]


def _plain(v: Any) -> Any:
    if isinstance(v, Decimal | float) and v == int(v):
        return int(v)
    return v


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Db:
    home = Home(tmp_path / "home")
    home.create_subdirs()
    url = request.getfixturevalue("pg_url") if request.param == "postgres" else None
    return Db(home, request.param, url)


def replicat(db: Db, params: str, *txns: list[Op]) -> tuple[ReplicatRun, list[str]]:
    """Write ``txns`` (one list of operations each) to a trail and make the Replicat."""
    home = db.home
    write_trail(home.root / "dirrmt" / "bb", [txn_records(100 + i, t) for i, t in enumerate(txns)])
    group = add_group(home, GroupKind.REPLICAT, "REP", SourceType.EXTTRAIL, "./dirrmt/bb")
    GroupStore(home).save(replace(group, checkpoint_table=None))
    seen: list[str] = []

    def emit(code: str, _sev: Severity, text: str) -> None:
        seen.append(f"{code} {text}")

    text = f"REPLICAT rep\nTARGETDB {db.targetdb}\n{params}"
    return ReplicatRun(home, model(home, "rep", text), group, emit), seen


def drain(r: ReplicatRun) -> None:
    try:
        r.run(lambda: False, stop_at_eof=True)
    finally:
        r.close()


def apply(db: Db, params: str, *txns: list[Op]) -> ReplicatRun:
    r, _ = replicat(db, params, *txns)
    drain(r)
    return r


# --------------------------------------------------------------------------- COLMAP


def test_colmap_usedefaults_and_expressions(db: Db) -> None:
    r = apply(
        db,
        "MAP hr.emp, TARGET hr.emp2, KEYCOLS (eid), COLMAP (USEDEFAULTS, eid = id, "
        "ename = @STRCAT(name, '-', @STRLEN(name)), label = @IF(sal > 5, 'high', 'low'));\n",
        [ins(1, "ann", 1), ins(2, "bo", 7)],
        [upd(2, 3)],  # FieldComp (id, sal): ename needs name, not in the record: left alone
    )
    assert db.rows("emp2") == [(1, "ann1-4", 1, "low"), (2, "bo2-3", 3, "low")]
    assert r.applier.counts["updates"] == 1


def test_colmap_expression_with_an_unknown_column_is_ogg_00919(db: Db) -> None:
    r, _ = replicat(db, "MAP hr.emp, TARGET hr.emp2, COLMAP (eid = id, ename = @STRUP(nme));\n",
                    [ins(1)])  # fmt: skip
    with pytest.raises(MappingError) as err:
        drain(r)
    assert err.value.code == "OGG-00919" and "NME" in err.value.text


# --------------------------------------------------------------------- WHERE / FILTER


def test_where_selects_records(db: Db) -> None:
    r = apply(db, "MAP hr.emp, TARGET hr.emp, WHERE (sal > 5);\n",
              [ins(1, sal=1), ins(2, sal=7), ins(3, sal=9)], [upd(2, 2)])  # fmt: skip
    # the update (sal 2) fails the WHERE too: the target keeps 7
    assert db.rows() == [(2, "n2", 7), (3, "n3", 9)]
    assert r.filtered == 2


def test_filter_on_insert_only(db: Db) -> None:
    r = apply(db, "MAP hr.emp, TARGET hr.emp, FILTER (ON INSERT, @STRFIND(name, 'keep') > 0);\n",
              [ins(1, "keep"), ins(2, "drop")], [upd(1, 5)])  # fmt: skip
    assert db.rows() == [(1, "keep1", 5)]  # the update passed: the FILTER is ON INSERT
    assert r.filtered == 1


def test_filter_raiseerror_goes_through_reperror(db: Db) -> None:
    r = apply(
        db,
        "REPERROR (DEFAULT, ABEND)\n"
        "MAP hr.emp, TARGET hr.emp, FILTER (RAISEERROR 9999, sal < 100), REPERROR (9999, DISCARD);\n",
        [ins(1, sal=5), ins(2, sal=500)],
    )
    assert db.rows() == [(1, "n1", 5)] and r.discard.discarded == 1
    assert "9999" in (db.home.dirrpt / "REP.dsc").read_text()


# --------------------------------------------------------------------------- KEYCOLS


_EMP2 = (
    "INSERT INTO hr.emp2 VALUES (1, 'a', 1, 'x')",
    "INSERT INTO hr.emp2 VALUES (2, 'b', 1, 'y')",
)
_COLS = "COLMAP (USEDEFAULTS, eid = id, ename = name)"


def test_keycols_choose_the_key_of_a_table_without_one(db: Db) -> None:
    db.sql(*_EMP2)
    apply(db, f"MAP hr.emp, TARGET hr.emp2, KEYCOLS (eid), {_COLS};\n", [upd(1, 9)], [dele(2)])
    assert db.rows("emp2") == [(1, "a", 9, "x")]


def test_without_keycols_every_column_is_the_key(db: Db) -> None:
    db.sql(*_EMP2)
    r, _ = replicat(db, f"MAP hr.emp, TARGET hr.emp2, {_COLS};\n", [upd(1, 9)])
    with pytest.raises(ReplicatError) as err:  # ENAME, LABEL are not in the record
        drain(r)
    assert "Key column(s)" in err.value.text


# ------------------------------------------------------------------ INSERTALLRECORDS


def test_insertallrecords_keeps_a_history_with_header_fields(db: Db) -> None:
    header = ("COLMAP (USEDEFAULTS, op = @GETENV ('GGHEADERINFO', 'OPTYPE'), "
              "ts = @GETENV ('GGHEADERINFO', 'COMMITTIMESTAMP'), csn = GGS_COMMIT_SCN, "
              "grp = @GETENV ('GGENVIRONMENT', 'GROUPNAME'))")  # fmt: skip
    r = apply(
        db,
        f"INSERTALLRECORDS\nMAP hr.emp, TARGET hr.hist, {header};\n",
        [ins(1, "a", 1)],
        [upd(1, 5)],
        [dele(1), (IOType.PURGEDATA, "HR.EMP", ())],
    )
    hist = db.rows("hist", "csn")
    assert [(h[0], h[2], h[3], h[5], h[6]) for h in hist] == [
        (1, 1, "INSERT", "100", "REP"),
        (1, 5, "SQL COMPUPDATE", "101", "REP"),
        (1, None, "DELETE", "102", "REP"),
    ]  # the truncate did not empty the history
    assert all(h[4].startswith("2023-11-14 22:13:20.") for h in hist), hist
    assert r.applier.counts["inserts"] == 3


def test_insertallrecords_as_a_map_option(db: Db) -> None:
    apply(
        db,
        "MAP hr.emp, TARGET hr.hist, INSERTALLRECORDS, COLMAP (USEDEFAULTS, op = GGS_OP_TYPE);\n",
        [ins(1)],
        [upd(1, 4)],
    )
    assert [(h[0], h[2], h[3]) for h in db.rows("hist", "sal")] == [
        (1, 1, "INSERT"),
        (1, 4, "SQL COMPUPDATE"),
    ]


def test_a_table_and_its_history_from_two_maps_of_one_source(db: Db) -> None:
    apply(
        db,
        "MAP hr.emp, TARGET hr.emp;\n"
        "MAP hr.emp, TARGET hr.hist, INSERTALLRECORDS, COLMAP (USEDEFAULTS, op = GGS_OP_TYPE);\n",
        [ins(1), ins(2)],
        [upd(1, 4), dele(2)],
    )
    assert db.rows() == [(1, "n1", 4)]
    assert [(h[0], h[2], h[3]) for h in db.rows("hist", "id, op")] == [
        (1, 1, "INSERT"),
        (1, 4, "SQL COMPUPDATE"),
        (2, None, "DELETE"),
        (2, 1, "INSERT"),
    ]


def test_without_insertallrecords_the_same_map_updates(db: Db) -> None:
    db.sql("INSERT INTO hr.hist (id, sal) VALUES (1, 0)")
    apply(db, "MAP hr.emp, TARGET hr.hist, KEYCOLS (id), COLMAP (USEDEFAULTS, op = GGS_OP_TYPE);\n",
          [upd(1, 4)])  # fmt: skip
    assert [(h[0], h[2], h[3]) for h in db.rows("hist")] == [(1, 4, "SQL COMPUPDATE")]


# ------------------------------------------------------------------ IGNORE<OP>S


@pytest.mark.parametrize(
    ("param", "txns", "expected", "skipped"),
    [
        ("IGNOREINSERTS", [[ins(1), ins(2)]], [], 2),
        ("IGNOREUPDATES", [[ins(1)], [upd(1, 6)]], [(1, "n1", 1)], 1),
        ("IGNOREDELETES", [[ins(1)], [dele(1)]], [(1, "n1", 1)], 1),
    ],
)
def test_ignore_operations(
    db: Db, param: str, txns: list[list[Op]], expected: list[tuple[Any, ...]], skipped: int
) -> None:
    r = apply(db, f"{param}\nMAP hr.emp, TARGET hr.emp;\n", *txns)
    assert db.rows() == expected and r.filtered == skipped


def test_getdeletes_turns_ignoredeletes_off_for_the_maps_after_it(db: Db) -> None:
    apply(db, "IGNOREDELETES\nGETDELETES\nMAP hr.emp, TARGET hr.emp;\n", [ins(1)], [dele(1)])
    assert db.rows() == []


# ------------------------------------------------------------------ HANDLECOLLISIONS


def test_handlecollisions_as_a_map_option(db: Db) -> None:
    db.sql("INSERT INTO hr.emp VALUES (1, 'old', 0)")
    r = apply(db, "MAP hr.emp, TARGET hr.emp, HANDLECOLLISIONS;\n", [ins(1), upd(9, 3)])
    assert db.rows() == [(1, "n1", 1), (9, None, 3)] and r.applier.collisions == 2


def test_nohandlecollisions_in_a_map_overrides_the_global_toggle(db: Db) -> None:
    db.sql("INSERT INTO hr.emp VALUES (1, 'old', 0)")
    r2, _ = replicat(db, "HANDLECOLLISIONS\nMAP hr.emp, TARGET hr.emp, NOHANDLECOLLISIONS;\n",
                     [ins(1)])  # fmt: skip
    with pytest.raises(ReplicatError) as err:
        drain(r2)
    assert err.value.code == "OGG-01004"


# --------------------------------------------------------------------------- REPERROR


def test_reperror_per_map_and_per_error(db: Db) -> None:
    r = apply(
        db,
        "REPERROR (DEFAULT, ABEND)\nMAP hr.emp, TARGET hr.emp, REPERROR (1403, DISCARD);\n",
        [ins(1), upd(7, 1), dele(8)],
    )
    assert db.rows() == [(1, "n1", 1)] and r.discard.discarded == 2


def test_reperror_without_parentheses_as_in_11_2_files(db: Db) -> None:
    r = apply(db, "REPERROR DEFAULT, IGNORE\nMAP hr.emp, TARGET hr.emp;\n", [ins(1), dele(5)])
    assert db.rows() == [(1, "n1", 1)] and r.ignored == 1


def test_a_global_reperror_applies_only_to_the_maps_after_it(db: Db) -> None:
    r, _ = replicat(db, "MAP hr.emp, TARGET hr.emp;\nREPERROR (1403, IGNORE)\n", [dele(5)])
    with pytest.raises(ReplicatError) as err:
        drain(r)
    assert "1403" in err.value.text


def test_reperror_transdiscard_discards_the_whole_source_transaction(db: Db) -> None:
    r = apply(
        db,
        "MAP hr.emp, TARGET hr.emp, REPERROR (1403, TRANSDISCARD);\n",
        [ins(1)],
        [ins(2), upd(9, 1), ins(3)],
        [ins(4)],
    )
    assert db.rows() == [(1, "n1", 1), (4, "n4", 1)]
    assert r.discard.discarded == 3
    text = (db.home.dirrpt / "REP.dsc").read_text()
    assert text.count("1403") >= 3, text
    r2, _ = replicat(db, "MAP hr.emp, TARGET hr.emp;\n")  # restarts after the discarded one
    assert r2.progress.position == r.progress.position
    r2.close()


def test_reperror_retryop_retries_then_abends(db: Db) -> None:
    r, _ = replicat(
        db,
        "MAP hr.emp, TARGET hr.emp, REPERROR (1403, RETRYOP, MAXRETRIES 2, DELAYSECS 3);\n",
        [dele(5)],
    )
    slept: list[float] = []
    r.sleep = slept.append
    with pytest.raises(ReplicatError) as err:
        drain(r)
    assert slept == [3, 3] and "after 2 RETRYOP retries" in err.value.text


def test_retryop_succeeds_when_the_row_appears(db: Db) -> None:
    r, _ = replicat(db, "MAP hr.emp, TARGET hr.emp, REPERROR (1403, RETRYOP MAXRETRIES 3);\n",
                    [upd(5, 2)])  # fmt: skip
    calls: list[float] = []

    def appear(delay: float) -> None:  # another writer inserts the row meanwhile
        calls.append(delay)
        if len(calls) == 2:
            r.target.execute("INSERT INTO " + ("hr." if db.kind == "postgres" else "")
                             + "emp VALUES (5, 'x', 0)")  # fmt: skip

    r.sleep = appear
    drain(r)
    assert db.rows() == [(5, "x", 2)] and len(calls) == 2


def test_several_filters_must_each_pass_and_the_first_failed_raises(db: Db) -> None:
    """GoldenGate ANDs the FILTER clauses of a MAP, in order: a record applied passes each
    (for its operation); the first it fails decides (here its RAISEERROR)."""
    r = apply(
        db,
        "MAP hr.emp, TARGET hr.emp, FILTER (ON INSERT, sal > 2), "
        "FILTER (RAISEERROR 9999, sal < 100), REPERROR (9999, DISCARD);\n",
        [ins(1, sal=1), ins(2, sal=5), ins(3, sal=500)],
        [upd(2, 1)],  # the first FILTER is ON INSERT: the update passes it, and the second
    )
    assert db.rows() == [(2, "n2", 1)]
    assert r.filtered == 1 and r.discard.discarded == 1  # sal 1: filtered; sal 500: raised


def test_record_fileseqno_and_filerba_are_each_records_own_position(db: Db) -> None:
    """@GETENV ('RECORD', 'FILESEQNO' / 'FILERBA') (double quotes as GoldenGate takes
    them): where each record is in the trail, not its transaction's start."""
    from engine.trail.txreader import TransactionReader

    cols = ('COLMAP (USEDEFAULTS, csn = @GETENV ("RECORD", "FILERBA"), '
            "grp = @GETENV ('RECORD', 'FILESEQNO'), op = @GETENV (\"GGHEADER\", \"OPTYPE\"))")  # fmt: skip
    apply(db, f"INSERTALLRECORDS\nMAP hr.emp, TARGET hr.hist, {cols};\n",
          [ins(1), ins(2), ins(3)], [upd(1, 5)])  # fmt: skip
    reader = TransactionReader(db.home.root / "dirrmt" / "bb")
    want = [(str(p.rba), str(p.seqno)) for t in reader.poll() for p in t.positions]
    reader.close()
    hist = db.rows("hist", "csn")
    assert len(set(want)) == 4 and len(want) == 4
    assert sorted((h[5], h[6]) for h in hist) == sorted(want)
    assert [h[3] for h in db.rows("hist", "id, op")] == [
        "INSERT",
        "SQL COMPUPDATE",
        "INSERT",
        "INSERT",
    ]
