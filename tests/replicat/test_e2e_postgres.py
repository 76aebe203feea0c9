"""End to end on PostgreSQL: the same pipeline as on SQLite, into a throwaway server, with a
kill -9 of the Replicat mid-stream; plus the Replicat's PostgreSQL specifics (schemas,
savepoint retry after a refused statement, the checkpoint row in the data's transaction)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest
from pipeline import (
    add_and_start,
    exactly_once,
    ggsci,
    in_sync,
    kill9,
    new_home,
    pipeline,
    report,
    running,
    shutdown,
    wait_until,
    workload,
)
from replicat_helpers import add_group, ins, model, txn_records, upd, write_trail

from engine.home.groups import GroupKind, GroupStore, SourceType
from engine.home.layout import Home
from engine.replicat import checkpoint_table as ct
from engine.replicat.engine import ReplicatRun
from engine.runtime.events import Severity
from engine.trail.layout import IOType
from tests.harness import pipeline_home as ph
from tests.harness.soak.audit import install_audit

pytestmark = pytest.mark.postgres


def pg(url: str, *sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows: list[tuple[Any, ...]] = []
        for s in sql:
            cur = conn.execute(s)
            if cur.description is not None:
                rows = [tuple(r) for r in cur.fetchall()]
        return rows


@pytest.mark.e2e
def test_postgres_pipeline_survives_kill9_of_replicat(tmp_path: Path, pg_url: str) -> None:
    spec = pipeline(pg_url, heartbeat=True)
    home = new_home(tmp_path, spec)
    # the checkpoint table and the heartbeat tables in the target (schema of the login user),
    # the heartbeat tables in the source
    out = ggsci(home, *ph.target_commands(spec))
    assert out.count("OGG-14000") == 2, out
    install_audit(home, spec)
    try:
        out = add_and_start(home, spec)
        assert "REPLICAT REP1 starting" in out, out
        workload(home, seed=11, transactions=150)
        wait_until(lambda: in_sync(home, spec), "the first batch on PostgreSQL")
        workload(home, seed=12, transactions=300)
        kill9(home, "REPLICAT", "REP1")
        assert "REPLICAT REP1 starting" in ggsci(home, "START REPLICAT rep1")
        wait_until(lambda: running(home, "REPLICAT", "REP1"), "the Replicat to run again")
        workload(home, seed=13, transactions=100)
        try:
            wait_until(lambda: in_sync(home, spec), "PostgreSQL to equal the source")
        except AssertionError:
            raise AssertionError(report(home, "REP1")) from None
        assert exactly_once(home, spec, trails=False) == []  # heartbeats are in the trails
        ((group, csn, low),) = pg(pg_url, "SELECT group_name, log_csn, log_cmplt_csn FROM gg.chkpt")
        assert group == "REP1" and csn == low
        paths = "SELECT DISTINCT incoming_path FROM postgres.gg_lag_history"
        wait_until(lambda: pg(pg_url, paths) == [("EXT1 ==> PMP1 ==> REP1",)], "heartbeats")
        out = ggsci(home, f"DBLOGIN SOURCEDB {pg_url}", "LAG REPLICAT rep1, GLOBAL")
        assert "Lag Information From Heartbeat Table" in out, out
        assert out.rstrip().endswith("SRC    POSTGRES EXT1 ==> PMP1 ==> REP1"), out
    finally:
        shutdown(home, spec)


def test_postgres_apply_savepoint_retry_and_collisions(tmp_path: Path, pg_url: str) -> None:
    pg(
        pg_url,
        "DROP SCHEMA IF EXISTS hr CASCADE",
        "DROP SCHEMA IF EXISTS gg2 CASCADE",
        "CREATE SCHEMA hr",
        "CREATE TABLE hr.emp (id integer PRIMARY KEY, name text NOT NULL, sal numeric)",
        "INSERT INTO hr.emp VALUES (1, 'old', 0)",
    )
    with psycopg.connect(pg_url) as conn:
        ct.create(conn, ct.TableName.parse("gg2.chkpt"), "postgresql")
    home = Home(tmp_path / "home")
    home.create_subdirs()
    null_name = (IOType.INSERT, "HR.EMP", ((0, "5"), (1, None), (2, "1")))
    write_trail(
        home.root / "dirrmt" / "bb",
        [txn_records(100, [ins(1), ins(2), null_name, upd(9, 3)]), txn_records(101, [ins(3)])],
    )
    group = add_group(home, GroupKind.REPLICAT, "REP", SourceType.EXTTRAIL, "./dirrmt/bb")
    from dataclasses import replace

    GroupStore(home).save(replace(group, checkpoint_table="gg2.chkpt"))
    prm = (
        f"REPLICAT rep\nTARGETDB {pg_url}\nHANDLECOLLISIONS\nREPERROR (1400, DISCARD)\n"
        "MAP hr.*, TARGET hr.*;\n"
    )
    seen: list[str] = []

    def emit(code: str, _s: Severity, text: str) -> None:
        seen.append(code)

    r = ReplicatRun(home, model(home, "rep", prm), GroupStore(home).get("REP") or group, emit)
    r.run(lambda: False, stop_at_eof=True)
    r.close()
    # The NOT NULL failure aborted the grouped transaction; the retry in savepoints applied
    # everything else. HANDLECOLLISIONS turned the duplicate 1 into an update and the update
    # of the missing 9 into an insert, which NOT NULL refuses too: two records discarded.
    assert pg(pg_url, "SELECT id, name, sal FROM hr.emp ORDER BY id") == [
        (1, "n1", 1),
        (2, "n2", 1),
        (3, "n3", 1),
    ]
    assert r.discard.discarded == 2 and r.applier.collisions == 2
    ((csn, xids),) = pg(pg_url, "SELECT log_cmplt_csn, log_cmplt_xids FROM gg2.chkpt")
    assert (csn, xids) == ("101", "1.5.101")


def test_dblogin_and_checkpoint_table_on_postgres(tmp_path: Path, pg_url: str) -> None:
    """GGSCI on a PostgreSQL login: DBLOGIN with a URL, ADD/INFO/DELETE CHECKPOINTTABLE."""
    home = Home(tmp_path / "pghome")
    home.create_subdirs()
    login = f"DBLOGIN SOURCEDB {pg_url}"
    out = ggsci(home, login, "ADD CHECKPOINTTABLE ggchk.cp1", "INFO CHECKPOINTTABLE ggchk.cp1")
    assert "Successfully logged into database." in out, out
    assert "Successfully created checkpoint table ggchk.cp1." in out, out
    cols = {r[0] for r in pg(pg_url, "SELECT column_name FROM information_schema.columns "
                                      "WHERE table_schema = 'ggchk' AND table_name = 'cp1'")}  # fmt: skip
    assert {"group_name", "group_key", "seqno", "rba", "log_csn", "log_cmplt_csn"} <= cols
    assert pg(pg_url, "SELECT count(*) FROM information_schema.tables "
                      "WHERE table_schema = 'ggchk' AND table_name = 'cp1_lox'") == [(1,)]  # fmt: skip
    out = ggsci(home, login, "DELETE CHECKPOINTTABLE ggchk.cp1 !")
    assert pg(pg_url, "SELECT count(*) FROM information_schema.tables "
                      "WHERE table_schema = 'ggchk'") == [(0,)], out  # fmt: skip
