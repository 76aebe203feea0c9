"""Extract catch-up throughput: a backlog of transactions of 100 row changes, captured from
START to the end of the log on Spark (local[*]).

Backlog: the embedded source's workload generator, one table, 100 row changes per
transaction, 50% inserts / 30% updates / 20% deletes chosen per row (the issue asks for
whole insert/update/delete transactions on an 8-column STUDENT-like table; the generator's
table has 5 columns and mixes operations within a transaction: noted in the output).
Prints ``name=value`` lines; the last is ``lcr_per_s`` (row changes captured per second of
catch-up, JVM start excluded and reported separately). ``mine_wait_s`` is the driver waiting
for the Spark tasks (redo mined into trail bytes), ``driver_apply_s`` the driver ordering,
caching and appending their output, ``driver_cpu_s`` the driver process's CPU time in the
catch-up. ``--backlog DIR`` keeps the source database in DIR and reuses it when it is there
(same ``--transactions``), so that repeated runs skip building it.

    python benchmarks/extract_throughput.py [--transactions N] [--split-mb M] [--backlog DIR]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import shutil
import tempfile
import threading
import time
from pathlib import Path

from engine.extract.engine import ExtractRun
from engine.home import Home
from engine.source.database import Database, create_database
from engine.source.workload import WorkloadSpec, run_workload
from engine.spark import SparkSettings, get_session
from params.check import check_text


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--transactions", type=int, default=10_000)
    ap.add_argument("--master", default="local[*]")
    ap.add_argument("--split-mb", type=int, default=16)
    ap.add_argument("--profile", action="store_true", help="profile the driver and print the top")
    ap.add_argument("--backlog", type=Path, help="keep (and reuse) the source database here")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp))
        home.create_subdirs()
        t0 = time.perf_counter()
        root = _backlog(home, args.backlog, args.transactions)
        backlog_s = time.perf_counter() - t0
        redo_bytes = sum(p.stat().st_size for p in (root / "redo").rglob("*.log"))
        t1 = time.perf_counter()
        spark = get_session(SparkSettings(master=args.master, log_file=home.dirrpt / "spark.log"))
        spark.range(1).count()
        jvm_s = time.perf_counter() - t1
        model = check_text(
            f"EXTRACT bench\nSOURCEDB {root.name}\nEXTTRAIL ./dirdat/bt\nTABLE WL.*;\n"
        ).model
        run = ExtractRun(home, model, None, lambda *_: None, spark=spark, durable=True)
        run.capture.split_bytes = args.split_mb << 20
        prof = cProfile.Profile() if args.profile else None
        t2 = time.perf_counter()
        cpu = time.process_time()
        if prof:
            prof.enable()
        run.run(threading.Event(), stop_at_eof=True)
        if prof:
            prof.disable()
        catchup_s = time.perf_counter() - t2
        cpu = time.process_time() - cpu
        run.close()
        s = run.capture.stats
        timing = run.capture.timing
        if prof:
            pstats.Stats(prof).sort_stats("cumulative").print_stats(18)
        print("workload=one 5-column table, 100 row changes/txn, 50/30/20 ins/upd/del per row")
        print(f"master={args.master}")
        print(f"split_mb={args.split_mb}")
        print(f"transactions={s.transactions}")
        print(f"redo_records={s.records_read}")
        print(f"redo_mb={redo_bytes / 1e6:.1f}")
        print(f"trail_records={s.trail_records}")
        print(f"backlog_s={backlog_s:.1f}")
        print(f"jvm_start_s={jvm_s:.1f}")
        print(f"batches={int(timing['batches'])}")
        print(f"mine_wait_s={timing['mine_s']:.2f}")
        print(f"driver_apply_s={timing['apply_s']:.2f}")
        print(f"driver_cpu_s={cpu:.2f}")
        print(f"catchup_s={catchup_s:.2f}")
        print(f"lcr_per_s={s.trail_records / catchup_s:.0f}")


def _backlog(home: Home, keep: Path | None, transactions: int) -> Path:
    """The source database with the backlog, in ``home``; with ``keep``, built there once
    per size and linked into ``home``."""
    if keep is None:
        return _build(home.dirdb, transactions)
    root = keep / "BENCH"
    marker = keep / "transactions.txt"
    if not (marker.exists() and marker.read_text() == str(transactions)):
        shutil.rmtree(keep, ignore_errors=True)
        keep.mkdir(parents=True)
        _build(keep, transactions)
        marker.write_text(str(transactions))
    (home.dirdb / root.name).symlink_to(root.resolve())
    return home.dirdb / root.name


def _build(dirdb: Path, transactions: int) -> Path:
    root = create_database(dirdb, "bench", log_bytes=256 << 20)
    with Database(root) as db:
        spec = WorkloadSpec(
            tables=1,
            rows_per_txn=100,
            transactions=transactions,
            mix=(0.5, 0.3, 0.2),
            rollback_ratio=0.0,
            sessions=8,
            seed=7,
        )
        run_workload(db, spec)
    return root


if __name__ == "__main__":
    main()
