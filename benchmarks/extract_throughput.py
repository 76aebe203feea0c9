"""Extract catch-up throughput: a backlog of transactions of 100 row changes, captured from
START to the end of the log on Spark (local[*]).

Backlog (the issue's shape): an 8-column table like seed 002's STUDENT (NUMBER key, five
VARCHAR2, two NUMBER), and transactions of 100 row changes each: 50% of them insert
transactions, then 30% update transactions (TUITION_FEE of 100 existing rows), then 20%
delete transactions, eight sessions with their transactions open at the same time (their
changes interleave in the redo). Written through the embedded database's fast DML path
(:class:`engine.embedded.bulk.BulkSession`: the same redo as SQL statements would write).
Prints ``name=value`` lines; the last is ``lcr_per_s`` (row changes captured per second of
catch-up; the start of the JVM and of its Python workers, which the Extract does before it
reads, is excluded and reported as ``spark_start_s``); ``redo_read_mb_s`` is the redo (in
Oracle's format, as the embedded database writes it) read per second of catch-up.
``mine_wait_s`` is the driver waiting
for the Spark tasks (redo mined into trail bytes), ``driver_apply_s`` the driver ordering,
caching and appending their output, ``driver_cpu_s`` the driver process's CPU time in the
catch-up. ``--backlog DIR`` keeps the source database in DIR and reuses it when it is there
(same ``--transactions``), so that repeated runs skip building it.

``--shape spanning`` (issue 13): 500 transactions of 2,000 row changes, the same 50/30/20%
mix on the same table, 64 sessions with their transactions open at the same time: every
transaction crosses split boundaries, so the driver takes it change by change.

``--timeline`` also prints, per batch, when it was asked of Spark, when its results came
back and when the driver began and ended applying it (seconds from the catch-up's start:
docs/cluster.md, "Job order").

    python benchmarks/extract_throughput.py [--shape default|spanning] [--transactions N]
        [--split-mb M] [--backlog DIR] [--nochecksum] [--timeline]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.cluster.spark import SparkSettings, get_session, warm_workers
from engine.embedded.bulk import BulkSession
from engine.embedded.database import Database, create_database
from engine.embedded.dictionary import ColumnDef
from engine.extract.redo_source import MINER_MODULES
from engine.extract.run import ExtractRun
from engine.home.layout import Home
from params.check import check_text


@dataclass(frozen=True)
class Shape:
    """A backlog's shape: transactions of ``rows`` row changes, ``sessions`` open at once."""

    transactions: int
    rows: int
    sessions: int


SHAPES = {
    "default": Shape(transactions=10_000, rows=100, sessions=8),
    "spanning": Shape(transactions=500, rows=2_000, sessions=64),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", choices=sorted(SHAPES), default="default")
    ap.add_argument("--transactions", type=int, help="default: the shape's (10,000 or 500)")
    ap.add_argument("--master", default="local[*]")
    ap.add_argument("--split-mb", type=int, default=16)
    ap.add_argument("--profile", action="store_true", help="profile the driver and print the top")
    ap.add_argument("--backlog", type=Path, help="keep (and reuse) the source database here")
    ap.add_argument("--timeline", action="store_true", help="when each batch was mined and applied")
    ap.add_argument(
        "--nochecksum", action="store_true", help="EXTTRAIL ..., NOCHECKSUM (no record CRC-32)"
    )
    args = ap.parse_args()
    shape = SHAPES[args.shape]
    if args.transactions is not None:
        shape = Shape(args.transactions, shape.rows, shape.sessions)
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp))
        home.create_subdirs()
        t0 = time.perf_counter()
        root = _backlog(home, args.backlog, shape)
        backlog_s = time.perf_counter() - t0
        redo_bytes = sum(p.stat().st_size for p in (root / "redo").rglob("*.log"))
        t1 = time.perf_counter()
        spark = get_session(SparkSettings(master=args.master, log_file=home.dirrpt / "spark.log"))
        spark.range(1).count()
        warm_workers(spark, MINER_MODULES)  # as the Extract does at its start
        jvm_s = time.perf_counter() - t1
        model = check_text(
            f"EXTRACT bench\nSOURCEDB {root.name}\nEXTTRAIL ./dirdat/bt"
            f"{', NOCHECKSUM' if args.nochecksum else ''}\nTABLE US03.*;\n"
        ).model
        run = ExtractRun(home, model, None, lambda *_: None, spark=spark, durable=True)
        run.capture.split_bytes = args.split_mb << 20
        prof = cProfile.Profile() if args.profile else None
        timeline = _Timeline(run.capture) if args.timeline else None
        t2 = time.perf_counter()
        if timeline:
            timeline.start = t2
        cpu = time.process_time()
        spark_cpu = _descendants_cpu_s()
        if prof:
            prof.enable()
        run.run(threading.Event(), stop_at_eof=True)
        if prof:
            prof.disable()
        catchup_s = time.perf_counter() - t2
        cpu = time.process_time() - cpu
        spark_cpu = _descendants_cpu_s() - spark_cpu
        run.close()
        s = run.capture.stats
        timing = run.capture.timing
        if prof:
            pstats.Stats(prof).sort_stats("cumulative").print_stats(18)
        if timeline:
            timeline.print()
        print(
            f"workload=8-column STUDENT, {shape.rows} row changes/txn, 50/30/20% ins/upd/del"
            f" txns, {shape.sessions} sessions open at once"
        )
        print(f"shape={args.shape}")
        print(f"master={args.master}")
        print(f"split_mb={args.split_mb}")
        print(f"checksum={'off' if args.nochecksum else 'on'}")
        print(f"transactions={s.transactions}")
        print(f"redo_records={s.records_read}")
        print(f"redo_mb={redo_bytes / 1e6:.1f}")
        print(f"trail_records={s.trail_records}")
        print(f"backlog_s={backlog_s:.1f}")
        print(f"spark_start_s={jvm_s:.1f}")  # the JVM and its Python workers
        print(f"batches={int(timing['batches'])}")
        print(f"mine_wait_s={timing['mine_s']:.2f}")
        print(f"driver_apply_s={timing['apply_s']:.2f}")
        print(f"driver_cpu_s={cpu:.2f}")
        print(f"spark_cpu_s={spark_cpu:.2f}")  # the JVM and its Python workers (the miners)
        # the driver's apply does not shrink with more cores (docs/extract.md, Scaling)
        print(f"driver_apply_s_per_m_rows={timing['apply_s'] / s.trail_records * 1e6:.2f}")
        print(f"catchup_s={catchup_s:.2f}")
        # the redo the catch-up read (Oracle's format: headers, undo and index redo included)
        print(f"redo_read_mb_s={redo_bytes / catchup_s / 1e6:.1f}")
        print(f"lcr_per_s={s.trail_records / catchup_s:.0f}")


class _Timeline:
    """Wraps one capture's ``_submit`` and ``_apply`` (the instance's, for this run only)
    to note when each batch was asked for, came back, and was applied."""

    def __init__(self, capture: Any) -> None:
        self.start = time.perf_counter()
        self.lines: list[tuple[float, str]] = []
        submit, apply = capture._submit, capture._apply

        def _submit(batch: Any) -> Any:
            s = batch.splits[0] if batch.splits else None
            name = f"{len(batch.splits)} splits from {s.sequence}:{s.start}" if s else "empty"
            self.note(f"asked   {name}")
            mined = submit(batch)
            mined.add_done_callback(lambda _: self.note(f"mined   {name}"))
            return mined

        def _apply(merged: Any, base: Any, **kw: Any) -> int:
            self.note("apply")
            n = int(apply(merged, base, **kw))
            self.note(f"applied {n} items")
            return n

        capture._submit, capture._apply = _submit, _apply

    def note(self, what: str) -> None:
        self.lines.append((time.perf_counter() - self.start, what))

    def print(self) -> None:
        for t, what in sorted(self.lines):
            print(f"timeline {t:7.3f} s {what}")


def _descendants_cpu_s() -> float:
    """CPU seconds (user + system) used so far by this process's descendants: the JVM
    and the Python workers it started (Linux ``/proc``; 0 elsewhere)."""
    stats: dict[int, tuple[int, float]] = {}
    for entry in Path("/proc").iterdir() if Path("/proc/self/stat").exists() else ():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:  # the process ended meanwhile
            continue
        fields = text[text.rindex(")") + 2 :].split()  # after "pid (comm) "
        stats[int(entry.name)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0.0, list(children.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        total += stats[pid][1]
        todo.extend(children.get(pid, []))
    return total / os.sysconf("SC_CLK_TCK")


def _backlog(home: Home, keep: Path | None, shape: Shape) -> Path:
    """The source database with the backlog, in ``home``; with ``keep``, built there once
    per shape and size and linked into ``home``."""
    if keep is None:
        return _build(home.dirdb, shape)
    root = keep / "BENCH"
    marker = keep / "transactions.txt"
    # the default shape's marker is the bare count, as before (backlogs kept by older runs)
    default = SHAPES["default"]
    same = shape.rows == default.rows and shape.sessions == default.sessions
    tag = str(shape.transactions) if same else f"{shape.transactions}x{shape.rows}/{shape.sessions}"
    if not (marker.exists() and marker.read_text() == tag):
        shutil.rmtree(keep, ignore_errors=True)
        keep.mkdir(parents=True)
        _build(keep, shape)
        marker.write_text(tag)
    (home.dirdb / root.name).symlink_to(root.resolve())
    return home.dirdb / root.name


STUDENT_COLUMNS = [
    ColumnDef("STUDENT_KEY", "NUMBER", nullable=False),
    ColumnDef("FIRST_NAME", "VARCHAR2", 30),
    ColumnDef("SURNAME", "VARCHAR2", 30),
    ColumnDef("GENDER", "VARCHAR2", 1),
    ColumnDef("UNIVERSITY", "VARCHAR2", 30),
    ColumnDef("SUBJECT", "VARCHAR2", 30),
    ColumnDef("ENTRY_YEAR", "NUMBER"),
    ColumnDef("TUITION_FEE", "NUMBER"),
]
STUDENT_DDL = (
    "CREATE TABLE us03.student (student_key NUMBER PRIMARY KEY, first_name VARCHAR2(30), "
    "surname VARCHAR2(30), gender VARCHAR2(1), university VARCHAR2(30), "
    "subject VARCHAR2(30), entry_year NUMBER, tuition_fee NUMBER)"
)
FIRST = ("Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Niklaus")
SURNAMES = ("Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Wirth")
COURSES = (("Oxford", "Theology"), ("Oxford", "Biology"), ("Cambridge", "Mathematics"))


def _student(key: int) -> tuple[object, ...]:
    """STUDENT row ``key``: its SQLite values."""
    university, subject = COURSES[key % len(COURSES)]
    year, fee = 2013 + key % 3, 9000 + key % 250
    return (key, FIRST[key % 8], f"{SURNAMES[key // 8 % 8]}{key}", "MF"[key % 2], university,
            subject, year, fee)  # fmt: skip


def _build(dirdb: Path, shape: Shape) -> Path:
    """50% insert, 30% update, 20% delete transactions of ``shape.rows`` row changes,
    ``shape.sessions`` of them open at a time, their changes interleaved row by row."""
    root = create_database(dirdb, "bench", log_bytes=256 << 20)
    transactions, rows, sessions_open = shape.transactions, shape.rows, shape.sessions
    inserts, updates = transactions // 2, transactions * 3 // 10
    deletes = transactions - inserts - updates
    with Database(root) as db:
        setup = db.session("SETUP", username="US03")
        table = db.create_table(setup, "US03", "STUDENT", STUDENT_COLUMNS, STUDENT_DDL,
                                key=("STUDENT_KEY",))  # fmt: skip
        setup.commit(db)
        db.checkpoint()
        sessions = [
            BulkSession(db, db.session(f"S{i}", username="US03")) for i in range(sessions_open)
        ]
        fee_col = (len(STUDENT_COLUMNS) - 1,)

        def insert(s: BulkSession, key: int) -> None:
            s.insert(table, _student(key))

        def update(s: BulkSession, key: int) -> None:
            fee = 10_000 + key % 500
            s.update(table, key, fee_col, (fee,))

        def delete(s: BulkSession, key: int) -> None:
            s.delete(table, key)

        for op, count in ((insert, inserts), (update, updates), (delete, deletes)):
            for first in range(0, count, sessions_open):
                group = min(sessions_open, count - first)
                for r in range(rows):  # the group's transactions interleave row by row
                    for g in range(group):
                        op(sessions[g], 1 + ((first + g) * rows + r) % (inserts * rows))
                for s in sessions[:group]:
                    s.commit()
    return root


if __name__ == "__main__":
    main()
