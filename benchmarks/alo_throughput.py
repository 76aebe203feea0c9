"""An attached database's Extract (engine/extract/alo.py) over archived logs of two redo
threads, in the Extract's own process: the embedded database writes a workload on both
threads, its archived logs are copied under LOG_ARCHIVE_FORMAT names and attached with a
dictionary, and the Extract reads them to the end. For comparison, the embedded database's
Extract (task miner and C kernels, no Spark) over the same redo. Prints the row changes
written per second of each, the attached run's redo MB/s, and last
``alo_row_changes_s=...``.

    python benchmarks/alo_throughput.py [--transactions N]
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
    args = ap.parse_args()
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
        run = ExtractRun(home, check_text(PRM).model, None, lambda *_: None, spark=None,
                         durable=False)  # fmt: skip
        try:
            run.run(threading.Event(), stop_at_eof=True)
        finally:
            run.close()
        t_alo = time.perf_counter() - t0
        alo_rows = run.capture.stats.trail_records

    print(f"archived_logs={len(copies)} redo_mb={mb:.1f} transactions={args.transactions}")
    print(f"embedded_rows={emb_rows} embedded_s={t_emb:.2f}")
    print(f"embedded_row_changes_s={emb_rows / t_emb:.0f}")
    print(f"alo_rows={alo_rows} alo_s={t_alo:.2f}")
    print(f"alo_redo_mb_s={mb / t_alo:.2f}")
    print(f"alo_row_changes_s={alo_rows / t_alo:.0f}")


if __name__ == "__main__":
    main()
