"""Heartbeats end to end with real processes under a real Manager: the Manager's update job on
the embedded source, Extract, pump and Replicat into SQLite; LAG ... GLOBAL shows the path.
And the heartbeat objects on a real PostgreSQL."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import psycopg
import pytest
from pipeline import (
    add_and_start,
    ggsci,
    in_sync,
    new_home,
    pipeline,
    report,
    shutdown,
    wait_until,
    workload,
)

from engine.home.layout import Home
from tests.harness import pipeline_home as ph


def history(home: Home) -> list[tuple[str, float]]:
    conn = sqlite3.connect(home.root / "tgt.db")
    try:
        rows = conn.execute(
            "SELECT INCOMING_PATH, INCOMING_LAG FROM gg_lag_history ORDER BY HEARTBEAT_RECEIVED_TS"
        ).fetchall()
    finally:
        conn.close()
    return [(str(p), float(lag)) for p, lag in rows]


@pytest.mark.e2e
def test_heartbeats_reach_the_sqlite_target_and_lag_global_shows_the_path(tmp_path: Path) -> None:
    spec = pipeline("./tgt.db", heartbeat=True)
    home = new_home(tmp_path, spec)
    out = ggsci(home, *ph.target_commands(spec))
    assert out.count("OGG-14000") == 2 and "OGG-14005" in out, out
    try:
        out = add_and_start(home, spec)
        assert "REPLICAT REP1 starting" in out, out
        workload(home, seed=21, transactions=100)  # data and heartbeats interleave

        def arrived() -> bool:
            return len(history(home)) >= 4

        try:
            wait_until(arrived, "heartbeats in GG_HEARTBEAT_HISTORY")
        except AssertionError:
            raise AssertionError(report(home, "REP1") + report(home, "EXT1")) from None
        paths = {p for p, _ in history(home)}
        assert paths == {"EXT1 ==> PMP1 ==> REP1"}
        assert all(-5 < lag < 60 for _, lag in history(home))
        out = ggsci(
            home,
            "DBLOGIN USERID gg@./tgt.db",
            "LAG REPLICAT rep1, GLOBAL",
            "LAG ext1, GLOBAL, HISTORY",
        )
        lines = out.splitlines()
        at = lines.index("Lag Information From Heartbeat Table")
        assert lines[at + 1].split() == ["LAG", "AGE", "FROM", "TO", "PATH"]
        assert re.fullmatch(
            r"-?\d+\.\d\ds +\S.* +SRC +TGT +EXT1 ==> PMP1 ==> REP1", lines[at + 2]
        ), out
        assert "Lag History for EXT1 ==> PMP1 ==> REP1" in out, out
        # the data went along with them
        wait_until(lambda: in_sync(home, spec), "the target tables to equal the source")
    finally:
        shutdown(home, spec)


@pytest.mark.postgres
def test_heartbeat_objects_and_lag_on_postgres(tmp_path: Path, pg_url: str) -> None:
    home = Home(tmp_path / "pghome")
    home.create_subdirs()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS hbown CASCADE")
    home.globals_file.write_text("GGSCHEMA hbown\n")
    login = f"DBLOGIN SOURCEDB {pg_url}"
    out = ggsci(home, login, "ADD HEARTBEATTABLE, RETENTION_TIME 2", "INFO HEARTBEATTABLE")
    assert "OGG-14024" in out and "HEARTBEAT table HBOWN.gg_heartbeat_history exists." in out, out
    assert "Retention time: 2 days." in out, out
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO hbown.gg_heartbeat (LOCAL_DATABASE, REMOTE_DATABASE, INCOMING_EXTRACT, "
            "INCOMING_ROUTING_PATH, INCOMING_REPLICAT, INCOMING_HEARTBEAT_TS, "
            "HEARTBEAT_RECEIVED_TS) VALUES ('PG', 'SRC', 'EXT1', 'PMP1', 'REP1', "
            "'2026-01-01 00:00:10', '2026-01-01 00:00:06.75')"
        )
        ((lag, path),) = conn.execute(
            "SELECT incoming_lag, incoming_path FROM hbown.gg_lag"
        ).fetchall()
    assert (float(lag), path) == (-3.25, "EXT1 ==> PMP1 ==> REP1")
    out = ggsci(
        home, login, "LAG rep1, GLOBAL", "DELETE HEARTBEATENTRY pmp1", "DELETE HEARTBEATTABLE"
    )
    assert "-3.25s" in out and "EXT1 ==> PMP1 ==> REP1" in out, out
    assert "Successfully deleted [1] heartbeat entries of [PMP1]." in out, out
    with psycopg.connect(pg_url, autocommit=True) as conn:
        left = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'hbown'"
        ).fetchone()
    assert left == (0,), out
