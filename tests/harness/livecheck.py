"""Live capture against a catch-up of the same redo, on a two-thread (RAC) source: what
``benchmarks/rac_soak.py`` soaks and ``tests/extract/test_rac_live.py`` runs (issue 13).

:func:`one_run`: a fresh two-thread database; a workload in another process (the
database's own redo flushing, wall-clock driven, as ``ggsci db workload`` runs it) while
this process's capture loop (:class:`~engine.extract.capture.Capture`, without Spark) polls
the redo as it is written; then a catch-up capture of the whole redo into a second trail.
The two are compared transaction by transaction (``lost``: in the catch-up, not in the
live trail; ``dup``: in the live trail more than once, or not in the catch-up) and byte for
byte after the file header. Kinds: ``busy`` (sessions on both threads), ``idle`` (every
session on thread 1: thread 2, which has redo, writes nothing), ``switch`` (small logs:
both threads switch logs many times).
"""

from __future__ import annotations

import multiprocessing
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from engine.embedded.database import Database, create_database
from engine.embedded.sql import execute
from engine.embedded.workload import WorkloadSpec, run_workload
from engine.extract.capture import Capture
from engine.extract.start import initial_positions
from engine.home.layout import Home
from engine.trail.reader import TrailReader
from engine.trail.writer import TrailWriter
from params.check import check_text

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PRM = "EXTRACT r1\nSOURCEDB {db}\nEXTTRAIL ./dirdat/{trail}\n{tables}\n"
#: Every table of the workload, no options.
ALL_TABLES = "TABLE wl.*;"
KINDS = ("busy", "idle", "switch")


def _write(root: str, spec: WorkloadSpec, pin: int | None) -> None:
    """The workload process: ``pin`` puts every workload session on that thread."""
    with Database(Path(root)) as db:
        if pin is not None:
            db.session("WL_SETUP", username="WL", thread=pin)
            for i in range(spec.sessions):
                db.session(f"WL_S{i:02d}", username="WL", thread=pin)
        run_workload(db, spec)


def capture_for(
    home: Home,
    root: Path,
    trail: str,
    spark: SparkSession | None = None,
    tables: str = ALL_TABLES,
) -> tuple[Capture, TrailWriter]:
    """A capture of the WL tables of ``root`` (``tables``: the TABLE statements) from the
    start of its redo into ``trail``."""
    model = check_text(PRM.format(db=root.name, trail=trail, tables=tables)).model
    writer = TrailWriter.open(home.root / "dirdat" / trail, durable=False, megabytes=500)
    start = initial_positions(root / "redo", (), 2)
    capture = Capture(model, root, writer, home.dirtmp / trail, start=start, spark=spark)
    return capture, writer


def trail_content(home: Home, trail: str) -> tuple[list[str], bytes]:
    """Each transaction's ``tranid/logcsn`` in trail order, and the records' bytes."""
    out: list[str] = []
    raw = bytearray()
    files: dict[int, bytes] = {}
    for entry, rec in TrailReader(str(home.root / "dirdat" / trail)).records():
        if rec.tranid is not None:
            out.append(f"{rec.tranid}/{rec.logcsn}")
        if entry.seqno not in files:
            files[entry.seqno] = (home.root / "dirdat" / f"{trail}{entry.seqno:09d}").read_bytes()
        raw += files[entry.seqno][entry.rba : entry.rba + entry.length]
    return out, bytes(raw)


def side_commits(db: Database, table: str) -> None:
    """A commit on each of threads 1 and 2 into ``table`` (made here: OWNER.NAME, one
    NUMBER key column)."""
    for t in (1, 2):
        s = db.session(f"SIDE{t}", username=table.split(".")[0].upper(), thread=t)
        if t == 1:
            execute(db, s, f"CREATE TABLE {table} (id NUMBER PRIMARY KEY)")
        execute(db, s, f"INSERT INTO {table} VALUES ({t})")
        execute(db, s, "COMMIT")


def one_run(tmp: Path, kind: str, spec: WorkloadSpec, poll_s: float) -> dict[str, object]:
    home = Home(tmp)
    home.create_subdirs()
    log_bytes = 256 << 10 if kind == "switch" else 64 << 20
    root = create_database(home.dirdb, "RAC", threads=2, log_bytes=log_bytes)
    with Database(root) as db:  # both threads have redo before the run
        side_commits(db, "wl.side")
    # the workload's tables exist before the live capture starts
    with Database(root) as db:
        run_workload(db, replace(spec, transactions=1))
    live, writer = capture_for(home, root, "lv")
    ctx = multiprocessing.get_context("fork")
    proc = ctx.Process(target=_write, args=(str(root), spec, 1 if kind == "idle" else None))
    began = time.perf_counter()
    proc.start()
    polls = 0
    max_held = 0
    while proc.is_alive():
        live.poll()
        polls += 1
        max_held = max(max_held, sum(len(q) for q in live.held.values()))
        time.sleep(poll_s)
    proc.join()
    while live.poll():
        polls += 1
    writer.close()
    seconds = time.perf_counter() - began
    again, writer = capture_for(home, root, "cu")
    while again.poll():
        pass
    writer.close()
    return {
        "kind": kind,
        "polls": polls,
        "seconds": round(seconds, 1),
        "max_held": max_held,
        "skipped_recovered": live.stats.skipped_recovered,
        **compare(home, "lv", "cu"),
    }


def compare(home: Home, live: str, catchup: str) -> dict[str, object]:
    """The live trail against the catch-up: transactions, lost, dup, same_bytes."""
    got, got_raw = trail_content(home, live)
    want, want_raw = trail_content(home, catchup)
    in_live, in_catchup = Counter(got), Counter(want)
    return {
        "transactions": len(want),
        "lost": sum((in_catchup - in_live).values()),
        "dup": sum((in_live - in_catchup).values()),
        "same_bytes": got_raw == want_raw,
    }
