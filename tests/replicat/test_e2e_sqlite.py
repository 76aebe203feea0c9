"""End to end on SQLite: workload -> Extract -> pump -> Replicat as real processes; the
Extract, the pump and the Replicat are each killed with SIGKILL mid-stream and restarted; after draining, every
target table equals its source table row for row, both trails hold every committed source
transaction exactly once, whole and in commit order, and the apply audit by trigger shows
every change applied exactly once (engine/soak)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from pipeline import (
    TABLES,
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

from tests.harness import pipeline_home as ph
from tests.harness.soak.audit import install_audit

pytestmark = pytest.mark.e2e


def test_sqlite_pipeline_survives_kill9_of_extract_pump_and_replicat(tmp_path: Path) -> None:
    spec = pipeline("./tgt.db")
    home = new_home(tmp_path, spec)
    out = ggsci(home, *ph.target_commands(spec))
    assert "Successfully created checkpoint table gg.chkpt." in out, out
    install_audit(home, spec)
    try:
        out = add_and_start(home, spec)
        assert "REPLICAT REP1 starting" in out and "EXTRACT PMP1 starting" in out, out
        workload(home, seed=1, transactions=150)
        wait_until(lambda: in_sync(home, spec), "the first batch on the target")
        assert len(ph.target_rows(home, spec, TABLES[0])) > 0
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
            wait_until(lambda: in_sync(home, spec), "the target to equal the source")
        except AssertionError:
            raise AssertionError(
                report(home, "REP1") + report(home, "PMP1") + report(home, "EXT1")
            ) from None
        assert exactly_once(home, spec) == []
        info = ggsci(home, "INFO ALL", "SEND REPLICAT rep1, STATUS")
        assert "REPLICAT    RUNNING     REP1" in info, info
        assert "EXTRACT     RUNNING     PMP1" in info, info
        # STATS over each process's socket: its counts per table since it started
        stats = ggsci(
            home, "STATS REPLICAT rep1, TOTAL", "STATS EXTRACT pmp1", "STATS EXTRACT ext1"
        )
        assert "Sending STATS request to REPLICAT REP1 ..." in stats, stats
        assert stats.count("Start of Statistics at") == 3, stats
        assert "Replicating from " in stats and "Extracting from " in stats, stats
        totals = [ln.split()[-1] for ln in stats.splitlines() if "Total operations" in ln]
        assert totals and any(float(t) > 0 for t in totals), stats
        children = ggsci(home, "SEND MANAGER CHILDSTATUS")
        assert "Sending CHILDSTATUS request to MANAGER ..." in children, children
        assert "Child Process Status - 3 Entries" in children, children
        conn = sqlite3.connect(home.root / "tgt.db")
        (cp,) = conn.execute("SELECT group_name, log_csn, log_cmplt_csn FROM chkpt").fetchall()
        conn.close()
        assert cp[0] == "REP1" and cp[1] == cp[2] and int(cp[1]) > 0
    finally:
        shutdown(home, spec)
