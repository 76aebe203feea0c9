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
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/harness

from engine.embedded.database import Database
from engine.embedded.workload import WorkloadSpec, run_workload
from engine.home.layout import Home
from engine.home.status import State, read_process_file
from tests.harness import pipeline_home as ph

ROWS_PER_TXN = 10
PARTS = ("extract", "pump", "replicat_read", "replicat_apply")


def pipeline(frequency: int) -> ph.PipelineSpec:
    return ph.PipelineSpec("./tgt.db", grouptransops=1000, heartbeat_frequency=frequency)


def setup(home: Home, spec: ph.PipelineSpec) -> None:
    ph.prepare_home(home, spec)
    out = ph.run_ggsci(home, *ph.target_commands(spec), *ph.add_and_start_commands(spec))
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


def running(home: Home, spec: ph.PipelineSpec) -> bool:
    return all(
        (pf := read_process_file(home, k, n)) is not None and pf.state == State.RUNNING
        for k, n in spec.groups
    )


def shutdown(home: Home, spec: ph.PipelineSpec) -> None:
    ph.run_ggsci(home, *ph.stop_commands(spec))
    time.sleep(2)
    ph.run_ggsci(home, "STOP MANAGER !")
    ph.kill_leftovers(home, spec)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--rate", type=float, default=1000.0, help="row changes per second")
    parser.add_argument("--frequency", type=int, default=1, help="heartbeat FREQUENCY")
    parser.add_argument("--warmup", type=float, default=15.0, help="seconds not measured")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ggsci-lag-") as tmp:
        home = Home(Path(tmp) / "home")
        spec = pipeline(args.frequency)
        setup(home, spec)
        try:
            deadline = time.monotonic() + 120
            while not running(home, spec) and time.monotonic() < deadline:
                time.sleep(0.5)
            load = WorkloadSpec(
                tables=len(spec.tables),
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
                stats = run_workload(db, load)
            time.sleep(8)  # the last heartbeats drain
            rows = history(home, started["ts"])
        finally:
            shutdown(home, spec)
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
