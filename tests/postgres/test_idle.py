"""The slot of a caught-up PostgreSQL Extract moves although no captured table changes, as
GoldenGate for PostgreSQL's does: while the database is idle, while other databases of the
cluster write, and while tables it does not capture change, the WAL the slot holds back
stops growing. The same rounds with the idle advance switched off (the mutation) keep the
slot where it was and the retained WAL grows by all that was written."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from engine.home.layout import Home
from engine.postgres.run import PgExtractRun
from params.check import check_text
from tests.postgres.cluster import Cluster
from tests.postgres.pgsource import Events, prm, records, setup_group, sql

pytestmark = pytest.mark.postgres


def lsn(url: str, what: str = "pg_current_wal_lsn()") -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(f"SELECT ({what} - '0/0')::bigint").fetchone()
        assert row is not None and row[0] is not None
        return int(row[0])


def slot_of(url: str, run: PgExtractRun) -> tuple[int, int, int]:
    """(confirmed flush LSN, restart LSN, WAL retained in bytes)."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT (confirmed_flush_lsn - '0/0')::bigint, (restart_lsn - '0/0')::bigint, "
            "(pg_current_wal_lsn() - restart_lsn)::bigint FROM pg_replication_slots "
            "WHERE slot_name = %s",
            (run.reg.slot,),
        ).fetchone()
        assert row is not None
        return int(row[0]), int(row[1]), int(row[2])


def test_the_slot_moves_while_nothing_captured_changes(
    home: Home, pgdb: str, pg_cluster: Cluster
) -> None:
    sql(pgdb, "CREATE TABLE cap (id int PRIMARY KEY)", "CREATE TABLE other (id int, pad text)")
    other_db = pg_cluster.url()  # the cluster's postgres database: another database
    sql(other_db, "CREATE TABLE IF NOT EXISTS elsewhere (id int, pad text)")
    runs: list[PgExtractRun] = []
    for name in ("EPG", "EMUT"):
        group = setup_group(home, pgdb, name)
        model = check_text(prm(pgdb, "TABLE public.cap;", name=name)).model
        runs.append(PgExtractRun(home, model, group, Events(), durable=False))
    fixed, mutant = runs
    mutant.capture.advance_idle = False  # the mutation: the slot moves with commits only
    try:
        sql(pgdb, "INSERT INTO cap VALUES (1)")  # one captured change: both read it
        for run in runs:
            assert run.poll() == 1
            run.checkpoint()
        start = {id(r): slot_of(pgdb, r) for r in runs}

        def round_(activity: Any, read: int = 0) -> int:
            activity()
            sql(pgdb, "CHECKPOINT")  # (logs the running transactions: restart LSNs move)
            mark = lsn(pgdb, "pg_current_wal_flush_lsn()")
            for run in runs:
                assert run.poll() == read  # change lines read (none of a captured table)
                run.checkpoint()
            return mark

        idle = round_(lambda: None)
        elsewhere = round_(
            lambda: sql(other_db, "INSERT INTO elsewhere SELECT g, repeat('x', 200) "
                                  "FROM generate_series(1, 20000) g")
        )  # fmt: skip
        # caught up, nothing open: the slot is confirmed where the database was
        confirmed, restart, retained = slot_of(pgdb, fixed)
        assert confirmed >= elsewhere > idle > start[id(fixed)][0]
        assert restart > start[id(fixed)][1]  # the WAL before is let go
        assert retained < elsewhere - idle  # less than the last round wrote
        # the mutant's slot stayed; what it holds back grew by all of it
        m_confirmed, m_restart, m_retained = slot_of(pgdb, mutant)
        assert m_confirmed == start[id(mutant)][0] >= m_restart
        assert m_retained >= elsewhere - start[id(mutant)][0]
        # tables not captured change: the fixed slot keeps up, what it holds stays bounded
        uncaptured = round_(
            lambda: sql(pgdb, "INSERT INTO other SELECT g, repeat('y', 200) "
                              "FROM generate_series(1, 20000) g"),
            20000,
        )  # fmt: skip
        confirmed, restart, retained = slot_of(pgdb, fixed)
        assert confirmed >= uncaptured and restart >= idle
        assert retained < uncaptured - idle
        # and a captured change after all that is still written, once
        sql(pgdb, "INSERT INTO cap VALUES (2)")
        assert fixed.poll() == 1
        fixed.checkpoint()
    finally:
        for run in runs:
            run.close()
    assert [dict(r.columns)[0] for r in records(home)] == ["1", "2"]
