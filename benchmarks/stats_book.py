"""What the STATS book costs a process per transaction it writes: ``StatsBook.add`` with the
rows of one transaction of the Extract benchmark's shape (one table; inserts, updates and
deletes), as :class:`engine.extract.run.ExtractRun` calls it for every transaction
(``counted`` then ``add``). It is part of the driver's serial work: 10,000 calls per million
changes of ``benchmarks/extract_throughput.py``. Best of ``--repeat`` runs of ``--calls``
calls; prints ``add_us_per_txn`` last.

    python benchmarks/stats_book.py [--calls N] [--repeat R]
"""

from __future__ import annotations

import argparse
import time
from datetime import datetime

from engine.runtime.stats import StatsBook, counted


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rows = [("US03.STUDENT", "Insert", 60), ("US03.STUDENT", "FieldComp", 30),
            ("US03.STUDENT", "Delete", 10)]  # fmt: skip
    best = float("inf")
    for _ in range(args.repeat):
        book = StatsBook(datetime.now, output="./dirdat/bt")
        t = time.perf_counter()
        for _ in range(args.calls):
            book.add(counted(rows))
        best = min(best, time.perf_counter() - t)
        assert book.total("INSERT") == 60 * args.calls
    print(f"calls={args.calls}")
    print(f"per_million_changes_s={best / args.calls * 10_000:.3f}")
    print(f"add_us_per_txn={best / args.calls * 1e6:.2f}")


if __name__ == "__main__":
    main()
