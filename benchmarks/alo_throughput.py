"""An attached database's Extract (engine/extract/alo.py) over archived logs of two redo
threads, mined in Spark tasks (``--spark MASTER``, default ``local[*]``; ``--spark none``: in
the Extract's own process): the embedded database writes a workload on both
threads, its archived logs are copied under LOG_ARCHIVE_FORMAT names and attached with a
dictionary, and the Extract reads them to the end. For comparison, the embedded database's
Extract (task miner and C kernels, no Spark) over the same redo. Prints the row changes
written per second of each, the attached run's redo MB/s, how its ranges were mined (by the
task miner, the fast path; records of those read by the redo miner in place; ranges read by
the redo miner whole), with Spark the ranges whose task result stood, those mined again on
the driver and the task slots, and last ``alo_row_changes_s=...``. ``--redo-miner``: the
attached Extract without its fast path (the redo miner alone: the figure before it).
``--split-mb``: the range size (default 16, the Extract's; smaller: more tasks). The session
starts, and its workers are warmed, before the timed run.

    python benchmarks/alo_throughput.py [--transactions N] [--redo-miner] [--spark MASTER]
        [--split-mb N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/harness

from engine.embedded.database import Database, create_database
from engine.embedded.workload import WorkloadSpec, run_workload
from engine.extract import oracle_source
from engine.extract.alo import AttachedOrigin
from engine.extract.redo_source import DEFAULT_SPLIT_BYTES, MINER_MODULES
from engine.extract.run import ExtractRun
from engine.home.layout import Home
from engine.redo.attached import attach
from params.check import check_text
from tests.harness.attached import archive_copies, oracle_dictionary
from tests.harness.livecheck import capture_for

PRM = (
    "EXTRACT a1\nSOURCEDB ORA\nTRANLOGOPTIONS ARCHIVEDLOGONLY\nEXTTRAIL ./dirdat/a1\nTABLE wl.*;\n"
)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--transactions", type=int, default=2000)
    ap.add_argument("--redo-miner", action="store_true", help="no fast path")
    ap.add_argument("--spark", default="local[*]", help="master, or none: no session")
    ap.add_argument("--split-mb", type=float, default=DEFAULT_SPLIT_BYTES / (1 << 20))
    args = ap.parse_args()
    spark = None
    slots = 0
    if args.spark != "none":
        from engine.cluster.spark import SparkSettings, get_session, task_slots, warm_workers

        log = Path(tempfile.gettempdir()) / "alo_throughput_spark.log"
        spark = get_session(SparkSettings(master=args.spark, app_name="alo-bench", log_file=log))
        warm_workers(spark, MINER_MODULES)
        slots = task_slots(spark)
    if args.redo_miner:
        oracle_source.fast_miner = lambda *_a: None  # type: ignore[assignment]
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp) / "home")
        home.create_subdirs()
        root = create_database(home.dirdb, "RAC", threads=2, log_bytes=8 << 20)
        spec = WorkloadSpec(tables=2, rows_per_txn=10, transactions=args.transactions,
                            sessions=4, seed=3, initial_rows=100)  # fmt: skip
        with Database(root) as db:
            run_workload(db, replace(spec, transactions=1))  # the tables, before the dictionary
            made = db.state.scn
            run_workload(db, spec)
            db.switch_log()
        copies = archive_copies(root, Path(tmp) / "arch")
        mb = sum(p.stat().st_size for p in copies) / 1e6
        dic = oracle_dictionary(root, Path(tmp) / "dictionary.json", made)

        t0 = time.perf_counter()
        cap, writer = capture_for(home, root, "rf")
        while cap.poll():
            pass
        cap.close()
        writer.close()
        t_emb = time.perf_counter() - t0
        emb_rows = cap.stats.trail_records

        attach(home.dirdb, "ORA", str(Path(tmp) / "arch"), dic, "%t_%s_%r.dbf")
        t0 = time.perf_counter()
        run = ExtractRun(home, check_text(PRM).model, None, lambda *_: None, spark=spark,
                         durable=False)  # fmt: skip
        run.capture.split_bytes = int(args.split_mb * (1 << 20))
        try:
            run.run(threading.Event(), stop_at_eof=True)
        finally:
            run.close()
        t_alo = time.perf_counter() - t0
        alo_rows = run.capture.stats.trail_records
        timing = run.capture.timing
        origin = run.capture.origin
        assert isinstance(origin, AttachedOrigin)
        states = origin.states

    print(f"archived_logs={len(copies)} redo_mb={mb:.1f} transactions={args.transactions}")
    print(f"embedded_rows={emb_rows} embedded_s={t_emb:.2f}")
    print(f"embedded_row_changes_s={emb_rows / t_emb:.0f}")
    print(f"alo_fast_ranges={states.fast_ranges} alo_redo_ranges={states.redo_ranges} "
          f"alo_records_read_by_redo_miner={states.delegated}")  # fmt: skip
    print(f"alo_spark={args.spark} alo_task_slots={slots} alo_split_mb={args.split_mb:g} "
          f"alo_task_ranges={states.tasks} alo_ranges_mined_again={states.remined}")  # fmt: skip
    print(f"alo_batches={timing['batches']:.0f} alo_driver_wait_mine_s={timing['mine_s']:.2f} "
          f"alo_driver_apply_s={timing['apply_s']:.2f}")  # fmt: skip
    print(f"alo_ahead_taken={timing['ahead_taken']:.0f} "
          f"alo_ahead_dropped={timing['ahead_dropped']:.0f}")  # fmt: skip
    print(f"alo_rows={alo_rows} alo_s={t_alo:.2f}")
    print(f"alo_redo_mb_s={mb / t_alo:.2f}")
    print(f"alo_row_changes_s={alo_rows / t_alo:.0f}")


if __name__ == "__main__":
    main()
