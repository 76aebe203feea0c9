"""Benchmark: instance recovery's roll forward (engine/embedded/rollforward.py).

A throw-away database with 2 redo threads runs the default workload (8 sessions, 2 tables,
10 row changes per transaction, 5% rollbacks) after its tables are checkpointed, with no
checkpoint after that; the redo is flushed and the process "dies": the SQLite connection is
closed without a commit and the lock let go, as a SIGKILL leaves them. The next open runs
instance recovery, which rolls the committed changes forward; its time is measured.

Then the workload as ``ggsci db workload`` runs it, with its periodic checkpoints
(``WorkloadSpec.checkpoint_every``, 5,000 transactions): a child process runs 20,000 x
SCALE transactions of it after the tables are made, SIGKILLs itself (redo flushed) at the
transaction 9/10 of the way through, and the next open is timed (``killed_*``): what is left
to roll forward is bounded by the checkpoint interval, not by how long the workload ran.

Prints ``name=value`` lines; the key figure, row changes rolled forward per second of the
open's wall time, is the last line, ``rollforward_changes_per_s`` (``..._per_cpu_s`` beside
it: the machine is shared). Usage: ``python benchmarks/recovery_rollforward.py [SCALE]``
(default 1.0: 3,000 transactions).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from engine.embedded.database import Database, create_database
from engine.embedded.workload import CHECKPOINT_EVERY, WorkloadSpec, run_workload


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
    killed = _killed_workload(int(4 * CHECKPOINT_EVERY * scale))
    print(f"workload_row_changes={stats.row_changes}")
    print(f"redo_mb={redo / 1e6:.1f}")
    print(f"rollforward_transactions={rolled.transactions}")
    print(f"rollforward_changes={rolled.changes}")
    print(f"recovery_open_s={wall:.2f}")
    print(f"recovery_open_cpu_s={cpu:.2f}")
    for k, v in killed.items():
        print(f"killed_{k}={v}")
    print(f"rollforward_changes_per_cpu_s={rolled.changes / cpu:.0f}")
    print(f"rollforward_changes_per_s={rolled.changes / wall:.0f}")


_CHILD = """
import os, signal
from pathlib import Path
from engine.embedded import workload as W
from engine.embedded.database import Database

db = Database(Path({root!r}))
W.run_workload(db, W.WorkloadSpec(tables=2, transactions=1, initial_rows=1000, seed=7))
def progress(stats):
    if stats.transactions >= {kill_at}:
        db.logs.flush(everything=True)
        os.kill(os.getpid(), signal.SIGKILL)
W.run_workload(db, W.WorkloadSpec(tables=2, transactions={n}, seed=8), progress)
"""


def _killed_workload(n: int) -> dict[str, object]:
    """The workload with its periodic checkpoints, SIGKILLed at 9/10 of ``n`` transactions;
    the next open timed."""
    with tempfile.TemporaryDirectory() as tmp:
        create_database(Path(tmp), "KW", threads=2)
        root = Path(tmp) / "KW"
        kill_at = n * 9 // 10
        script = textwrap.dedent(_CHILD.format(root=str(root), kill_at=kill_at, n=n))
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
        r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True)
        assert r.returncode == -signal.SIGKILL, r.stderr.decode()[-2000:]
        wall, cpu = time.perf_counter(), time.process_time()
        again = Database(root)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        rolled = again.rolled_forward
        again.close()
    return {
        "at_transactions": kill_at,
        "rollforward_changes": rolled.changes if rolled is not None else 0,
        "open_s": f"{wall:.2f}",
        "open_cpu_s": f"{cpu:.2f}",
    }


if __name__ == "__main__":
    main()
