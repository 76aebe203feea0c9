"""Lakehouse delivery: row changes per second applied by the Replicat into Delta Lake (apply
and history mode) and Apache Iceberg (apply and history mode), beside the same trail applied
to SQLite by the SQL Replicat in the same run.

One trail: ``--transactions`` transactions of 10 operations on HR.EMP (ID, NAME, SAL), keys
drawn from ``--keys``: 50% inserts of new keys, 35% compressed updates (SAL only), 15%
deletes. Each run applies the whole trail into a new home, GROUPTRANSOPS ``--batch-ops`` for
all (the lake handlers commit once per table per batch; SQLite commits once per batch too):

- ``sqlite_apply``: ``MAP hr.emp, TARGET hr.emp;`` into ``emp (id PK, name, sal)``
- ``sqlite_history``: ``INSERTALLRECORDS`` with COLMAP columns for the operation type, commit
  time, CSN and transaction id (what the lake's history columns hold)
- ``delta_apply``, ``delta_history``, ``iceberg_apply``, ``iceberg_history``: the lakehouse
  handler (``MAP ..., KEYCOLS (ID)`` / ``INSERTALLRECORDS``); tables created by the Replicat

Also printed: the in-process transform (MAP, reduction by key, Arrow conversion) per
operation and the table commit per batch of the Delta apply run, the figures behind running
the micro-batch transform in process rather than in Spark tasks (docs/replicat.md).

Key figures last: ``ratio_history_vs_sqlite`` (Delta history rate over SQLite history rate,
goal >= 2), then ``ratio_vs_sqlite``: Delta apply rate over SQLite apply rate (goal >= 1).

    python benchmarks/lake_replicat.py [--transactions N] [--keys N] [--batch-ops N]
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent)]

from engine.home.groups import GroupDef, GroupKind, GroupStore, SourceType  # noqa: E402
from engine.home.layout import Home  # noqa: E402
from engine.replicat import checkpoint_table as ct  # noqa: E402
from engine.replicat import lakeapply as lake_applier  # noqa: E402
from engine.replicat import lakefast as lake_fast  # noqa: E402
from engine.replicat import lakeread as lake_read  # noqa: E402
from engine.replicat.engine import ReplicatRun  # noqa: E402
from engine.replicat.lakerun import LakeReplicatRun  # noqa: E402
from engine.runtime.events import Severity  # noqa: E402
from engine.targets.lake.delta import DeltaLakeTable  # noqa: E402
from engine.targets.lake.iceberg import IcebergTable  # noqa: E402
from engine.trail.codec import encode_record  # noqa: E402
from engine.trail.layout import IOType, TransInd  # noqa: E402
from engine.trail.model import TableDef, TrailRecord  # noqa: E402
from engine.trail.writer import TrailWriter  # noqa: E402
from params.check import check_file  # noqa: E402

OPS = 10
HISTORY_COLMAP = (
    "COLMAP (USEDEFAULTS, op_type = @GETENV ('GGHEADERINFO', 'OPTYPE'), "
    "op_ts = @GETENV ('GGHEADERINFO', 'COMMITTIMESTAMP'), csn = @GETENV ('TRANSACTION', 'CSN'), "
    "tranid = @GETENV ('TRANSACTION', 'XID'))"
)


def write_trail(path: Path, transactions: int, keys: int) -> int:
    rnd = random.Random(27)
    writer = TrailWriter.open(path, durable=False, roll_on_restart=False)
    writer.define_table(TableDef("HR.EMP", ("ID", "NAME", "SAL")))
    live: set[int] = set()
    n = 0
    for t in range(transactions):
        records = []
        for i in range(OPS):
            r = rnd.random()
            if r < 0.5 or len(live) < 10:
                key = rnd.randrange(keys)
                while key in live:
                    key = rnd.randrange(keys)
                live.add(key)
                io, cols = IOType.INSERT, ((0, str(key)), (1, f"name{key}"), (2, str(key % 97)))
            elif r < 0.85:
                key = rnd.choice(tuple(live)) if len(live) < 64 else _pick(rnd, live)
                io, cols = IOType.FIELDCOMP, ((0, str(key)), (2, str(rnd.randrange(1000))))
            else:
                key = _pick(rnd, live)
                live.discard(key)
                io, cols = IOType.DELETE, ((0, str(key)),)
            records.append(
                TrailRecord(
                    io_type=io, table="HR.EMP", columns=cols,
                    before_after="B" if io == IOType.DELETE else "A",
                    trans_ind=TransInd.of(i, OPS), io_time_us=1_700_000_000_000_000 + t,
                    logcsn=str(1000 + t) if i == 0 else None,
                    tranid=f"1.1.{t}" if i == 0 else None,
                )
            )  # fmt: skip
        writer.append_many(encode_record(r) for r in records)
        n += len(records)
    writer.close()
    return n


def _pick(rnd: random.Random, live: set[int]) -> int:
    while True:  # a live key without copying the set
        key = rnd.randrange(max(live) + 1)
        if key in live:
            return key


def new_home(root: Path, name: str, trail: Path) -> tuple[Home, GroupDef]:
    home = Home(root / name)
    home.create_subdirs()
    (home.root / "dirrmt").mkdir(exist_ok=True)
    for f in trail.parent.glob(trail.name + "*"):
        (home.root / "dirrmt" / f.name).write_bytes(f.read_bytes())
    group = GroupDef(
        kind=GroupKind.REPLICAT, name="REP", source=SourceType.EXTTRAIL,
        created="2024-01-01 00:00:00", source_path="./dirrmt/" + trail.name,
        checkpoint_table="gg.chkpt",
    )  # fmt: skip
    GroupStore(home).save(group)
    return home, group


def _quiet(_code: str, _sev: Severity, _text: str) -> None:
    pass


def run_sqlite(root: Path, trail: Path, history: bool, batch: int) -> float:
    home, group = new_home(root, f"sqlite_{history}", trail)
    conn = sqlite3.connect(home.root / "tgt.db")
    conn.execute("CREATE TABLE emp (id NUMERIC PRIMARY KEY, name TEXT, sal NUMERIC)")
    conn.execute("CREATE TABLE emp_hist (id NUMERIC, name TEXT, sal NUMERIC, op_type TEXT, "
                 "op_ts TEXT, csn TEXT, tranid TEXT)")  # fmt: skip
    ct.create(conn, ct.TableName.parse("gg.chkpt"), "sqlite")
    conn.close()
    mapping = (
        f"MAP hr.emp, TARGET hr.emp_hist, INSERTALLRECORDS, {HISTORY_COLMAP};"
        if history
        else "MAP hr.emp, TARGET hr.emp;"
    )
    prm = home.dirprm / "rep.prm"
    prm.write_text(f"REPLICAT rep\nTARGETDB ./tgt.db\nGROUPTRANSOPS {batch}\n{mapping}\n")
    model = check_file(prm, cwd=home.root).require()
    r = ReplicatRun(home, model, group, _quiet)
    t = time.perf_counter()
    r.run(lambda: False, stop_at_eof=True, idle=0.01)
    elapsed = time.perf_counter() - t
    r.close()
    return elapsed


class Meter:
    """Where a lake run's time goes, measured by wrapping (this benchmark only): ``read``
    the trail read into columns (lakeread.ColumnReader.read), ``apply`` the mapping, the
    reduction per key and the table commits of a batch (lakefast.FastPath.apply), ``commit``
    the table commits alone (LakeTable.commit_reduced / commit_table); the record-by-record
    path (GGSCI_LAKE_COLUMNAR=0) is timed by the same names through its own methods."""

    def __init__(self) -> None:
        self.read = self.apply = self.commit = 0.0
        self.commits = 0
        self._saved: list[tuple[Any, str, Any]] = []
        self._wrap(lake_read.ColumnReader, "read", "read")
        self._wrap(lake_fast.FastPath, "apply", "apply")
        self._wrap(lake_applier.LakeApplier, "commit", "commit", count=True)
        for cls in (DeltaLakeTable, IcebergTable):
            self._wrap(cls, "commit_reduced", "commit", count=True)
            self._wrap(cls, "commit_table", "commit", count=True)

    def _wrap(self, cls: Any, name: str, into: str, count: bool = False) -> None:
        original = getattr(cls, name)
        meter = self

        def timed(self: Any, *a: Any) -> Any:
            t = time.perf_counter()
            out = original(self, *a)
            setattr(meter, into, getattr(meter, into) + time.perf_counter() - t)
            meter.commits += count
            return out

        setattr(cls, name, timed)
        self._saved.append((cls, name, original))

    def close(self) -> None:
        for cls, name, original in reversed(self._saved):
            setattr(cls, name, original)


def run_lake(root: Path, trail: Path, kind: str, history: bool, batch: int) -> tuple[float, Meter]:
    home, group = new_home(root, f"{kind}_{history}", trail)
    conn = sqlite3.connect(home.root / "dirchk" / "lake.db")
    ct.create(conn, ct.TableName.parse("gg.chkpt"), "sqlite")
    conn.close()
    (home.dirprm / "rep.props").write_text(
        f"gg.handlerlist=lake\ngg.handler.lake.type={kind}\ngg.handler.lake.location=./lake\n"
        "gg.handler.lake.batchIntervalMs=100\n"
    )
    mapping = (
        "MAP hr.emp, TARGET hr.emp_hist, INSERTALLRECORDS;"
        if history
        else "MAP hr.emp, TARGET hr.emp, KEYCOLS (ID);"
    )
    prm = home.dirprm / "rep.prm"
    prm.write_text("REPLICAT rep\nTARGETDB LIBFILE libggjava.so SET property=dirprm/rep.props\n"
                   f"GROUPTRANSOPS {batch}\n{mapping}\n")  # fmt: skip
    model = check_file(prm, cwd=home.root).require()
    r = LakeReplicatRun(home, model, group, _quiet)
    meter = Meter()
    try:
        t = time.perf_counter()
        r.run(lambda: False, stop_at_eof=True, idle=0.01)
        elapsed = time.perf_counter() - t
    finally:
        meter.close()
    r.close()
    return elapsed, meter


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--transactions", type=int, default=3000)
    ap.add_argument("--keys", type=int, default=20000)
    ap.add_argument("--batch-ops", type=int, default=10000)
    args = ap.parse_args()
    import deltalake  # noqa: F401  (imported before the clocks start, as in a running process)
    import pyiceberg.catalog.sql  # noqa: F401

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "t").mkdir()
        trail = root / "t" / "bb"
        n = write_trail(trail, args.transactions, args.keys)
        print(f"row_changes={n} transactions={args.transactions} grouptransops={args.batch_ops}")
        print(f"load_before={os.getloadavg()[0]:.2f}")
        rates: dict[str, float] = {}
        spent: dict[str, tuple[float, Meter]] = {}
        for history in (False, True):
            mode = "history" if history else "apply"
            rates[f"sqlite_{mode}"] = n / run_sqlite(root, trail, history, args.batch_ops)
            for kind, short in (("deltalake", "delta"), ("iceberg", "iceberg")):
                elapsed, meter = run_lake(root, trail, kind, history, args.batch_ops)
                rates[f"{short}_{mode}"] = n / elapsed
                if short == "delta":
                    spent[mode] = (elapsed, meter)
        for name, rate in rates.items():
            print(f"{name}_row_changes_per_s={rate:.0f}")
        for mode, (elapsed, meter) in spent.items():
            other = elapsed - meter.read - meter.apply
            print(f"delta_{mode}_read_us_per_op={meter.read / n * 1e6:.2f}")
            print(f"delta_{mode}_map_reduce_us_per_op={(meter.apply - meter.commit) / n * 1e6:.2f}")
            print(
                f"delta_{mode}_commit_ms_per_batch={meter.commit / max(meter.commits, 1) * 1e3:.0f}"
            )
            print(f"delta_{mode}_other_us_per_op={other / n * 1e6:.2f}")
        print(f"ratio_iceberg_apply_vs_sqlite={rates['iceberg_apply'] / rates['sqlite_apply']:.2f}")
        print(
            f"ratio_iceberg_history_vs_sqlite="
            f"{rates['iceberg_history'] / rates['sqlite_history']:.2f}"
        )
        print(f"load_after={os.getloadavg()[0]:.2f}")
        print(f"ratio_history_vs_sqlite={rates['delta_history'] / rates['sqlite_history']:.2f}")
        print(f"ratio_vs_sqlite={rates['delta_apply'] / rates['sqlite_apply']:.2f}")


if __name__ == "__main__":
    main()
