"""End to end on SQLite: workload -> Extract -> pump -> Replicat as real processes; the
Extract, the pump and the Replicat are each killed with SIGKILL mid-stream and restarted; after draining, every
target table equals its source table row for row."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from pipeline import (
    COLUMNS,
    TABLES,
    add_and_start,
    ggsci,
    kill9,
    new_home,
    norm,
    report,
    running,
    shutdown,
    source_rows,
    wait_until,
    workload,
)

from engine.home import Home

pytestmark = pytest.mark.e2e


def target_rows(home: Home, table: str) -> list[tuple[str | None, ...]]:
    conn = sqlite3.connect(home.root / "tgt.db")
    try:
        rows = conn.execute(f"SELECT {COLUMNS} FROM {table} ORDER BY ID").fetchall()
    finally:
        conn.close()
    return [tuple(norm(v) for v in r) for r in rows]


def in_sync(home: Home) -> bool:
    return all(source_rows(home, t) == target_rows(home, t) for t in TABLES)


def test_sqlite_pipeline_survives_kill9_of_extract_pump_and_replicat(tmp_path: Path) -> None:
    home = new_home(tmp_path, "./tgt.db")
    conn = sqlite3.connect(home.root / "tgt.db")
    for t in TABLES:
        conn.execute(
            f"CREATE TABLE {t} (ID NUMERIC PRIMARY KEY, NAME VARCHAR(40), AMOUNT NUMERIC, "
            "CREATED DATE, STATUS CHAR(1))"
        )
    conn.close()
    out = ggsci(home, "DBLOGIN USERID gg@./tgt.db", "ADD CHECKPOINTTABLE gg.chkpt")
    assert "Successfully created checkpoint table gg.chkpt." in out, out
    try:
        out = add_and_start(home)
        assert "REPLICAT REP1 starting" in out and "EXTRACT PMP1 starting" in out, out
        workload(home, seed=1, transactions=150)
        wait_until(lambda: in_sync(home), "the first batch on the target")
        assert len(target_rows(home, "WL_T01")) > 0
        workload(home, seed=2, transactions=300)
        kill9(home, "EXTRACT", "PMP1")  # the pump is copying the second batch
        assert "EXTRACT PMP1 starting" in ggsci(home, "START EXTRACT pmp1")
        wait_until(lambda: running(home, "EXTRACT", "PMP1"), "the pump to run again")
        workload(home, seed=3, transactions=300)
        kill9(home, "EXTRACT", "EXT1")  # the Extract is capturing the third batch
        assert "EXTRACT EXT1 starting" in ggsci(home, "START EXTRACT ext1")
        wait_until(lambda: running(home, "EXTRACT", "EXT1"), "the Extract to run again")
        kill9(home, "REPLICAT", "REP1")  # the Replicat is applying the third batch
        assert "REPLICAT REP1 starting" in ggsci(home, "START REPLICAT rep1")
        workload(home, seed=4, transactions=100)
        try:
            wait_until(lambda: in_sync(home), "the target to equal the source")
        except AssertionError:
            raise AssertionError(
                report(home, "REP1") + report(home, "PMP1") + report(home, "EXT1")
            ) from None
        info = ggsci(home, "INFO ALL", "SEND REPLICAT rep1, STATUS")
        assert "REPLICAT    RUNNING     REP1" in info, info
        assert "EXTRACT     RUNNING     PMP1" in info, info
        conn = sqlite3.connect(home.root / "tgt.db")
        (cp,) = conn.execute("SELECT group_name, log_csn, log_cmplt_csn FROM chkpt").fetchall()
        conn.close()
        assert cp[0] == "REP1" and cp[1] == cp[2] and int(cp[1]) > 0
    finally:
        shutdown(home)
