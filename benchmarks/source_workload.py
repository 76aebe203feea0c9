"""Benchmark: redo written by the embedded database's workload generator, and read back.

Two runs on a throw-away database with 2 redo threads and 8 sessions:

* ``oltp``: the default mix (statements: insert 50 / update 35 / delete 15, single-row,
  10 row changes per transaction, 5% rollbacks);
* ``backlog``: the mode for building large backlogs quickly (``ggsci db workload --array
  100 --mix insert=70,update=20,delete=10 --rows-per-txn 200``): inserts are array inserts
  of 100 rows (11.11 QMI, as INSERT ... SELECT or array binds write), updates and deletes
  stay single-row.

Then the whole log is read back with the splittable reader. Prints ``name=value`` lines;
the key figure, row changes per second of redo written in the default mode (``oltp``: issue
3 asks for >= 50,000), is the last line, ``row_changes_per_s``; the backlog mode's is
``backlog_row_changes_per_s``. Wall-clock figures: run it on a machine that is otherwise idle,
or compare the ``*_per_cpu_s`` lines. Usage: ``python benchmarks/source_workload.py [SCALE]``
(default 1.0).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from engine.embedded.database import Database, create_database
from engine.embedded.logfile import read_records
from engine.embedded.workload import WorkloadSpec, WorkloadStats, parse_mix, run_workload


def _run(root: Path, spec: WorkloadSpec) -> WorkloadStats:
    db = Database(root)
    try:
        cpu = time.process_time()
        stats = run_workload(db, spec)
        used = time.process_time() - cpu
        print(f"{_name(spec)}_cpu_seconds={used:.3f}")
        print(f"{_name(spec)}_row_changes_per_cpu_s={stats.row_changes / used:.0f}")
        return stats
    finally:
        db.close()


def _name(spec: WorkloadSpec) -> str:
    return "backlog" if spec.array > 1 else "oltp"


def main() -> None:
    scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    with tempfile.TemporaryDirectory() as tmp:
        root = create_database(Path(tmp), "BENCH", threads=2)
        warm = Database(root)
        run_workload(warm, WorkloadSpec(transactions=1, initial_rows=5000))
        warm.close()
        specs = [
            WorkloadSpec(transactions=int(10_000 * scale), rows_per_txn=10),
            WorkloadSpec(
                transactions=int(2_000 * scale),
                rows_per_txn=200,
                array=100,
                mix=parse_mix("insert=70,update=20,delete=10"),
                seed=2,
            ),
        ]
        results: dict[str, WorkloadStats] = {}
        for spec in specs:
            stats = _run(root, spec)
            name = _name(spec)
            print(f"{name}_transactions={stats.transactions}")
            print(f"{name}_row_changes={stats.row_changes}")
            print(f"{name}_redo_bytes={stats.redo_bytes}")
            print(f"{name}_seconds={stats.seconds:.3f}")
            print(f"{name}_row_changes_per_s={stats.row_changes_per_s:.0f}")
            results[name] = stats
        db = Database(root)
        logs = db.list_logs()
        db.close()
        t0 = time.perf_counter()
        n = sum(1 for info in logs for _ in read_records(info.path))
        read_s = time.perf_counter() - t0
        print(f"log_files={len(logs)}")
        print(f"records_read={n}")
        print(f"read_records_per_s={n / read_s:.0f}")
        print(f"read_mb_per_s={sum(i.size for i in logs) / read_s / 1e6:.1f}")
        print(f"row_changes_per_s={results['oltp'].row_changes_per_s:.0f}")


if __name__ == "__main__":
    main()
