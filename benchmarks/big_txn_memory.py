"""One very large open transaction: the Extract's resident memory stays within the cache
budget (CACHEMGR CACHESIZE) plus a fixed overhead, the excess paged out to dirtmp/.

Builds one transaction of N row changes on the embedded source and captures it with a small
cache budget: every row is cached until the commit record is read, so most of them are paged
out. The batch of redo being decoded (at most 8 splits of 16 MB) is the fixed overhead on
top of the budget. The transaction is written by a child process, so that the driver's peak
RSS is the Extract's alone (the generator's own memory is not counted). Prints the driver's
peak RSS, the JVM's RSS, the bytes paged out, and last
``driver_peak_rss_mb=... cache_budget_mb=...``.

    python benchmarks/big_txn_memory.py [--rows N] [--cache-mb M]
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import tempfile
import threading
import time
from pathlib import Path

from engine.cluster.spark import SparkSettings, get_session
from engine.embedded.database import Database, create_database
from engine.embedded.workload import WorkloadSpec, run_workload
from engine.extract.run import ExtractRun
from engine.home.layout import Home
from params.check import check_text


def jvm_rss_mb() -> float:
    """RSS of the Spark JVM started by this process (its child), from /proc."""
    total = 0.0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        if "Name:\tjava" in text and f"PPid:\t{Path('/proc/self').resolve().name}" in text:
            for line in text.splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
    return total


def build(root: Path, rows: int) -> None:
    """One open-then-committed transaction of ``rows`` inserts (run in a child process)."""
    with Database(root) as db:
        spec = WorkloadSpec(
            tables=1,
            rows_per_txn=rows,
            transactions=1,
            mix=(1.0, 0.0, 0.0),
            rollback_ratio=0.0,
            sessions=1,
            seed=5,
        )
        run_workload(db, spec)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--cache-mb", type=int, default=64)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp))
        home.create_subdirs()
        root = create_database(home.dirdb, "big", log_bytes=512 << 20)
        t0 = time.perf_counter()
        builder = multiprocessing.get_context("spawn").Process(target=build, args=(root, args.rows))
        builder.start()
        builder.join()
        if builder.exitcode != 0:
            raise SystemExit(f"building the transaction failed (exit {builder.exitcode})")
        build_s = time.perf_counter() - t0
        spark = get_session(SparkSettings(master="local[*]", log_file=home.dirrpt / "spark.log"))
        prm = (
            "EXTRACT big\nSOURCEDB big\nEXTTRAIL ./dirdat/bg\n"
            f"CACHEMGR CACHESIZE {args.cache_mb}MB\nTABLE WL.*;\n"
        )
        run = ExtractRun(
            home, check_text(prm).model, None, lambda *_: None, spark=spark, durable=False
        )
        t1 = time.perf_counter()
        run.run(threading.Event(), stop_at_eof=True)
        capture_s = time.perf_counter() - t1
        run.close()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        spilled = sum(p.stat().st_size for p in (home.dirtmp).rglob("*.spill"))
        print(f"rows={args.rows}")
        print(f"build_s={build_s:.1f}")
        print(f"capture_s={capture_s:.1f}")
        print(f"trail_records={run.capture.stats.trail_records}")
        print(f"cache_pageouts={run.capture.cache.spills}")
        print(f"spill_bytes_left={spilled}")
        print(f"jvm_rss_mb={jvm_rss_mb():.0f}")
        print(f"driver_peak_rss_mb={peak:.0f} cache_budget_mb={args.cache_mb}")


if __name__ == "__main__":
    main()
