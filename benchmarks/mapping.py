"""Mapping cost: Extract catch-up with TABLE row options against the same run without them.

The backlog is benchmarks/extract_throughput.py's (8-column STUDENT, transactions of 100
row changes, 50/30/20% insert/update/delete transactions). The Extract captures it twice on
one Spark session (local[*]), each time into a new trail:

- ``plain``: ``TABLE US03.*;``
- ``options``: ``TABLE US03.STUDENT, COLSEXCEPT (gender), WHERE (student_key > 0),
  TOKENS (TKN-HOST = @GETENV (...), TKN-OP = GGS_OP_TYPE, TKN-COMMIT = @GETENV (...));``
  (every row passes WHERE, so both trails hold the same rows)

Prints ``name=value`` lines; ``extract_ratio`` is the options run's throughput over the
plain run's (the same redo, so the ratio of their catch-up times, plain / options; goal
>= 0.7). The order is plain, then ``--repeat N`` times (at most 20) options and plain
again, each options run between two plain ones: ``plain_s`` and ``options_s`` are the best
of their runs (each run is listed).
``--cpu`` also mines the same redo without Spark, in this process, plain / options /
plain (N rounds, the best time of each), and prints
``extract_ratio_cpu`` from the process's CPU time (steadier than the elapsed time on a
loaded machine; the miner's work is the same) and ``options_extra_cpu_us_per_row``, what
the options cost per row on top.

    python benchmarks/mapping.py [--transactions N] [--backlog DIR] [--cpu] [--repeat N]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import extract_throughput  # noqa: E402
from extract_throughput import _backlog  # noqa: E402

from engine.cluster.spark import SparkSettings, get_session, warm_workers  # noqa: E402
from engine.extract.redo_source import MINER_MODULES  # noqa: E402
from engine.extract.run import ExtractRun  # noqa: E402
from engine.home.layout import Home  # noqa: E402
from params.check import check_text  # noqa: E402

OPTIONS = (
    "TABLE US03.STUDENT, COLSEXCEPT (gender), WHERE (student_key > 0), "
    "TOKENS (TKN-HOST = @GETENV ('GGENVIRONMENT', 'HOSTNAME'), TKN-OP = GGS_OP_TYPE, "
    "TKN-COMMIT = @GETENV ('GGHEADERINFO', 'COMMITTIMESTAMP'));"
)


def _run(
    home: Home, spark: object, db: str, trail: str, table: str, cpu: bool = False
) -> tuple[float, int]:
    """One catch-up from the start of the redo, as group ``B<trail>`` (its own checkpoint):
    its elapsed time, or with ``cpu`` the process's CPU time."""
    prm = f"EXTRACT b{trail}\nSOURCEDB {db}\nEXTTRAIL ./dirdat/{trail}\n{table}\n"
    result = check_text(prm)
    assert not [d for d in result.diagnostics if d.is_error], result.diagnostics
    run = ExtractRun(home, result.model, None, lambda *_: None, spark=spark, durable=True)  # type: ignore[arg-type]
    run.capture.split_bytes = 16 << 20
    clock = time.process_time if cpu else time.perf_counter
    t = clock()
    run.run(threading.Event(), stop_at_eof=True)
    elapsed = clock() - t
    run.close()
    return elapsed, run.capture.stats.trail_records


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--transactions", type=int, default=1000)
    ap.add_argument("--backlog", type=Path, help="keep (and reuse) the source database here")
    ap.add_argument("--cpu", action="store_true", help="also the CPU ratio mined in process")
    ap.add_argument("--repeat", type=int, default=1, choices=range(1, 21),
                    help="rounds (the best of each)")  # fmt: skip
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp))
        home.create_subdirs()
        shapes = getattr(extract_throughput, "SHAPES", None)  # (newer: a backlog's shape)
        size: object = args.transactions
        if shapes is not None:
            size = dataclasses.replace(shapes["default"], transactions=args.transactions)
        root = _backlog(home, args.backlog, size)  # type: ignore[arg-type]
        spark = get_session(SparkSettings(master="local[*]", log_file=home.dirrpt / "spark.log"))
        spark.range(1).count()
        warm_workers(spark, MINER_MODULES)
        plains: list[float] = []
        optionss: list[float] = []
        n_plain = n_opts = 0
        # plain, then N times options, plain: each options run between two plain ones
        plains.append(_run(home, spark, root.name, "ap", "TABLE US03.*;")[0])
        for r in range(args.repeat):
            at = chr(ord("b") + r)
            t, n_opts = _run(home, spark, root.name, at + "o", OPTIONS)
            optionss.append(t)
            t, n_plain = _run(home, spark, root.name, at + "p", "TABLE US03.*;")
            plains.append(t)
        plain, options = min(plains), min(optionss)
        if args.cpu:  # the same redo mined here, without Spark: CPU time
            plain_cpu: list[float] = []
            options_cpu: list[float] = []
            for r in range(args.repeat):  # plain, options, plain: the best of each
                for k, (into, table) in enumerate(((plain_cpu, "TABLE US03.*;"),
                                                   (options_cpu, OPTIONS),
                                                   (plain_cpu, "TABLE US03.*;"))):  # fmt: skip
                    trail = chr(ord("c") + r % 20) + "abc"[k]
                    into.append(_run(home, None, root.name, trail, table, cpu=True)[0])
            best_plain, best_options = min(plain_cpu), min(options_cpu)
            print(f"plain_cpu_s={best_plain:.2f} options_cpu_s={best_options:.2f}")
            print(f"extract_ratio_cpu={best_plain / best_options:.2f}")
            extra = (best_options - best_plain) / max(n_plain, 1) * 1e6
            print(f"options_extra_cpu_us_per_row={extra:.2f}")
        print("workload=8-column STUDENT, 100 row changes/txn, 50/30/20% ins/upd/del txns")
        print(f"options={OPTIONS}")
        print(f"load={os.getloadavg()[0]:.2f}")
        print(f"trail_records_plain={n_plain}")
        print(f"trail_records_options={n_opts}")
        print(f"plain_s={plain:.2f} (runs {', '.join(f'{t:.2f}' for t in plains)})")
        print(f"options_s={options:.2f} (runs {', '.join(f'{t:.2f}' for t in optionss)})")
        print(f"plain_rows_per_s={n_plain / plain:.0f}")
        print(f"options_rows_per_s={n_opts / options:.0f}")
        print(f"extract_ratio={plain / options:.2f}")


if __name__ == "__main__":
    main()
