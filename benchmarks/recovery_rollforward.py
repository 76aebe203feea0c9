"""Benchmark: instance recovery's roll forward (engine/embedded/rollforward.py).

A throw-away database with 2 redo threads runs the default workload (8 sessions, 2 tables,
10 row changes per transaction, 5% rollbacks) after its tables are checkpointed, with no
checkpoint after that; the redo is flushed and the process "dies": the SQLite connection is
closed without a commit and the lock let go, as a SIGKILL leaves them. The next open runs
instance recovery, which rolls the committed changes forward; its time is measured.

Prints ``name=value`` lines; the key figure, row changes rolled forward per second of the
open's wall time, is the last line, ``rollforward_changes_per_s`` (``..._per_cpu_s`` beside
it: the machine is shared). Usage: ``python benchmarks/recovery_rollforward.py [SCALE]``
(default 1.0: 3,000 transactions).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from engine.embedded.database import Database, create_database
from engine.embedded.workload import WorkloadSpec, run_workload


def main() -> None:
    scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    with tempfile.TemporaryDirectory() as tmp:
        create_database(Path(tmp), "RB", threads=2)
        root = Path(tmp) / "RB"
        db = Database(root)
        run_workload(db, WorkloadSpec(tables=2, transactions=1, initial_rows=1000, seed=7))
        db.checkpoint()  # the tables as the crash will find them
        db.checkpoint = lambda: None  # type: ignore[method-assign]
        stats = run_workload(db, WorkloadSpec(tables=2, transactions=int(3000 * scale), seed=8))
        db.logs.flush(everything=True)
        db.conn.close()  # uncommitted: SQLite drops it, as after a SIGKILL
        db._lock.__exit__()
        redo = sum(p.stat().st_size for p in (root / "redo").rglob("*.log"))
        wall, cpu = time.perf_counter(), time.process_time()
        again = Database(root)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        rolled = again.rolled_forward
        assert rolled is not None
        again.close()
    print(f"workload_row_changes={stats.row_changes}")
    print(f"redo_mb={redo / 1e6:.1f}")
    print(f"rollforward_transactions={rolled.transactions}")
    print(f"rollforward_changes={rolled.changes}")
    print(f"recovery_open_s={wall:.2f}")
    print(f"recovery_open_cpu_s={cpu:.2f}")
    print(f"rollforward_changes_per_cpu_s={rolled.changes / cpu:.0f}")
    print(f"rollforward_changes_per_s={rolled.changes / wall:.0f}")


if __name__ == "__main__":
    main()
