"""Benchmark: redo written by the embedded database's workload generator.

Creates a throw-away database (2 redo threads), runs ``ggsci db workload``'s generator
unthrottled with the default mix (insert 50 / update 35 / delete 15, 10 row changes per
transaction, 5% rollbacks, 8 sessions), then reads the redo back with the splittable
reader. Prints ``name=value`` lines; the key figure, row changes per second of redo
written, is the last line. Usage: ``python benchmarks/source_workload.py [TRANSACTIONS]``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from engine.source.database import Database, create_database
from engine.source.logfile import read_records
from engine.source.workload import WorkloadSpec, run_workload


def main() -> None:
    transactions = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    with tempfile.TemporaryDirectory() as tmp:
        root = create_database(Path(tmp), "BENCH", threads=2)
        db = Database(root)
        spec = WorkloadSpec(transactions=transactions, rows_per_txn=10, initial_rows=5000)
        run_workload(db, WorkloadSpec(transactions=1, initial_rows=5000))  # tables, warm-up
        stats = run_workload(db, spec)
        logs = db.list_logs()
        db.close()
        t0 = time.perf_counter()
        n = sum(1 for info in logs for _ in read_records(info.path))
        read_s = time.perf_counter() - t0
        print(f"transactions={stats.transactions}")
        print(f"row_changes={stats.row_changes}")
        print(f"redo_bytes={stats.redo_bytes}")
        print(f"seconds={stats.seconds:.3f}")
        print(f"redo_mb_per_s={stats.redo_bytes / stats.seconds / 1e6:.1f}")
        print(f"records_read={n}")
        print(f"read_records_per_s={n / read_s:.0f}")
        print(f"row_changes_per_s={stats.row_changes_per_s:.0f}")


if __name__ == "__main__":
    main()
