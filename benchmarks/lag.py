"""End-to-end lag measured by heartbeats, under a steady workload.

A steady workload (default 1,000 row changes per second: 100 transactions of 10 rows) runs on
the embedded source for a couple of minutes while its heartbeat job writes every FREQUENCY
seconds (default 1); Extract, pump and Replicat run as real processes under a real Manager into
an SQLite target. The heartbeats' lag is read from the target's GG_LAG_HISTORY: the incoming lag
(received - generated) and its four parts (extract, pump, Replicat read, Replicat apply).

Prints ``name=value`` lines; the last is ``p50=S p99=S`` (seconds; targets p50 <= 1, p99 <= 3).

    nice -n 5 python benchmarks/lag.py [--seconds 120] [--rate 1000] [--frequency 1]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from engine.home import Home
from engine.source.database import Database, create_database
from engine.source.workload import WorkloadSpec, run_workload
from engine.status import MANAGER, State, read_process_file

TABLES = ("WL_T01", "WL_T02")
GROUPS = (("EXTRACT", "EXT1"), ("EXTRACT", "PMP1"), ("REPLICAT", "REP1"))
ROWS_PER_TXN = 10
PARTS = ("extract", "pump", "replicat_read", "replicat_apply")


def ggsci(home: Home, *commands: str) -> str:
    env = {**os.environ, "GGHOME": str(home.root)}
    out = subprocess.run(
        [sys.executable, "-m", "ggsci", "run", *commands],
        env=env, cwd=home.root, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    return out.stdout + out.stderr


def setup(home: Home, frequency: int) -> None:
    home.create_subdirs()
    create_database(home.dirdb, "src")
    (home.dirprm / "mgr.prm").write_text("PORT 0\n")
    (home.dirprm / "ext1.prm").write_text(
        "EXTRACT ext1\nSOURCEDB src\nEXTTRAIL ./dirdat/lt\nCHECKPOINTSECS 1\nTABLE wl.*;\n"
    )
    (home.dirprm / "pmp1.prm").write_text(
        "EXTRACT pmp1\nRMTHOST localhost, MGRPORT 7809\nRMTTRAIL ./dirrmt/rt\nPASSTHRU\n"
        "CHECKPOINTSECS 1\nTABLE wl.*;\n"
    )
    (home.dirprm / "rep1.prm").write_text(
        "REPLICAT rep1\nTARGETDB ./tgt.db\nASSUMETARGETDEFS\nCHECKPOINTSECS 1\n"
        "GROUPTRANSOPS 1000\nMAP wl.*, TARGET wl.*;\n"
    )
    conn = sqlite3.connect(home.root / "tgt.db")
    for t in TABLES:
        conn.execute(
            f"CREATE TABLE {t} (ID NUMERIC PRIMARY KEY, NAME VARCHAR(40), AMOUNT NUMERIC, "
            "CREATED DATE, STATUS CHAR(1))"
        )
    conn.close()
    out = ggsci(
        home,
        "DBLOGIN USERID gg@./tgt.db",
        "ADD CHECKPOINTTABLE gg.chkpt",
        "ADD HEARTBEATTABLE, TARGETONLY",
        "DBLOGIN SOURCEDB src",
        f"ADD HEARTBEATTABLE, FREQUENCY {frequency}",
        "START MANAGER",
        "ADD EXTRACT ext1, TRANLOG, EXTSEQNO 1, EXTRBA 0",
        "ADD EXTTRAIL ./dirdat/lt, EXTRACT ext1",
        "ADD EXTRACT pmp1, EXTTRAILSOURCE ./dirdat/lt",
        "ADD RMTTRAIL ./dirrmt/rt, EXTRACT pmp1",
        "ADD REPLICAT rep1, EXTTRAIL ./dirrmt/rt, CHECKPOINTTABLE gg.chkpt",
        "START EXTRACT ext1",
        "START EXTRACT pmp1",
        "START REPLICAT rep1",
    )
    if "REPLICAT REP1 starting" not in out:
        raise SystemExit(f"set-up failed:\n{out}")


def history(home: Home, since: str) -> list[tuple[float, ...]]:
    conn = sqlite3.connect(f"file:{home.root / 'tgt.db'}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT INCOMING_LAG, INCOMING_EXTRACT_LAG, INCOMING_ROUTING_LAG, "
            "INCOMING_REPLICAT_READ_LAG, INCOMING_REPLICAT_LAG FROM gg_lag_history "
            "WHERE HEARTBEAT_RECEIVED_TS >= ? AND INCOMING_LAG IS NOT NULL "
            "ORDER BY HEARTBEAT_RECEIVED_TS",
            (since,),
        ).fetchall()
    finally:
        conn.close()
    return [tuple(float(v or 0) for v in r) for r in rows]


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def running(home: Home) -> bool:
    return all(
        (pf := read_process_file(home, k, n)) is not None and pf.state == State.RUNNING
        for k, n in GROUPS
    )


def shutdown(home: Home) -> None:
    ggsci(home, "STOP REPLICAT rep1", "STOP EXTRACT pmp1", "STOP EXTRACT ext1")
    time.sleep(2)
    ggsci(home, "STOP MANAGER !")
    for kind, name in (*GROUPS, (MANAGER, MANAGER)):
        pf = read_process_file(home, kind, name)
        if pf is not None and pf.state in (State.STARTING, State.RUNNING):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pf.pid, signal.SIGKILL)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--rate", type=float, default=1000.0, help="row changes per second")
    parser.add_argument("--frequency", type=int, default=1, help="heartbeat FREQUENCY")
    parser.add_argument("--warmup", type=float, default=15.0, help="seconds not measured")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ggsci-lag-") as tmp:
        home = Home(Path(tmp) / "home")
        setup(home, args.frequency)
        try:
            deadline = time.monotonic() + 120
            while not running(home) and time.monotonic() < deadline:
                time.sleep(0.5)
            spec = WorkloadSpec(
                tables=len(TABLES),
                tps=args.rate / ROWS_PER_TXN,
                rows_per_txn=ROWS_PER_TXN,
                duration=args.warmup + args.seconds,
                transactions=None,
                sessions=4,
                rollback_ratio=0.02,
                initial_rows=200,
            )
            started = {}

            def measured_from() -> None:  # the steady part starts after the warm-up
                time.sleep(args.warmup)
                started["ts"] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())

            threading.Thread(target=measured_from, daemon=True).start()
            with Database(home.dirdb / "SRC") as db:  # heartbeats run in this process now
                stats = run_workload(db, spec)
            time.sleep(8)  # the last heartbeats drain
            rows = history(home, started["ts"])
        finally:
            shutdown(home)
    if not rows:
        print("heartbeats=0")
        print("p50=nan p99=nan")
        return 1
    total = [r[0] for r in rows]
    print(f"row_changes_per_s={stats.row_changes_per_s:.0f}")
    print(f"measured_seconds={args.seconds:.0f}")
    print(f"heartbeats={len(rows)}")
    for i, name in enumerate(PARTS, start=1):
        part = [r[i] for r in rows]
        print(
            f"{name}_p50={quantile(part, 0.5):.3f} {name}_mean={statistics.fmean(part):.3f} "
            f"{name}_p99={quantile(part, 0.99):.3f}"
        )
    print(f"lag_mean={statistics.fmean(total):.3f} lag_max={max(total):.3f}")
    print(f"p50={quantile(total, 0.5):.3f} p99={quantile(total, 0.99):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
