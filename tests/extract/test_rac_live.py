"""Live capture of a two-thread (RAC) source against a catch-up of the same redo (issue 13).

The capture loop (:meth:`Capture.poll`, no Spark, no sleeps) runs while the workload writes,
and the test decides which thread's redo reaches the files when: one thread's commits are
flushed ahead of the other's, as two instances' log writers do. Whatever the order, the
live trail must hold the same transactions, in the same order, as a capture of the whole
redo afterwards, byte for byte after the file header.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from engine.embedded import database as database_module
from engine.embedded.clock import ManualClock
from engine.embedded.database import Database, create_database
from engine.embedded.session import Session
from engine.embedded.sql import execute
from engine.embedded.workload import WorkloadSpec, WorkloadStats, run_workload
from engine.extract import capture as capture_module
from engine.extract import merge
from engine.extract.capture import Capture
from engine.extract.start import initial_positions
from engine.home.layout import Home
from engine.trail.writer import TrailWriter
from tests.harness.livecheck import ALL_TABLES, KINDS, capture_for, one_run, trail_content

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SPEC = WorkloadSpec(tables=2, rows_per_txn=3, transactions=240, sessions=6, seed=7,
                    initial_rows=20, rollback_ratio=0.1)  # fmt: skip


def _content(home: Home, trail: str) -> bytes:
    """The trail's row records, as written (the file header, with its times, left out)."""
    return trail_content(home, trail)[1]


def two_threads(tmp_path: Path) -> tuple[Home, Path, Database, Session, Session]:
    """A home with a two-thread database "RAC" (a manual clock, 1 ms a step), session A on
    thread 1 and B on thread 2, and the table ``wl.t (id)``."""
    home = Home(tmp_path)
    home.create_subdirs()
    root = create_database(home.dirdb, "RAC", threads=2)
    db = Database(root, clock=ManualClock(datetime(2024, 1, 1), step=0.001))
    a = db.session("A", username="WL", thread=1)
    b = db.session("B", username="WL", thread=2)
    execute(db, a, "CREATE TABLE wl.t (id NUMBER PRIMARY KEY)")
    return home, root, db, a, b


def drain(cap: Capture) -> None:
    while cap.poll():
        pass


@dataclass
class Run:
    live: bytes
    catchup: bytes
    capture: Capture
    polls: int
    held_after_full_flush: list[int] = field(default_factory=list)
    left: int = 0  # items still held once the database is closed (none may be)


Step = Callable[[int, Database], None]


def _run(
    tmp: Path,
    step: Step,
    *,
    pin: Callable[[int], int] | None = None,
    log_bytes: int = 64 << 20,
    spec: WorkloadSpec = SPEC,
    spark: SparkSession | None = None,
    tables: str = ALL_TABLES,
) -> Run:
    """The workload on a two-thread database; after each transaction ``step(k, db)``
    flushes what it chooses, then the live capture polls. ``pin``: the thread of each
    workload session (default: the database's round robin); ``tables``: the TABLE
    statements of both captures."""
    home = Home(tmp)
    home.create_subdirs()
    root = create_database(home.dirdb, "RAC", threads=2, log_bytes=log_bytes)
    clock = ManualClock(datetime(2024, 1, 1), step=0.0005)
    with Database(root, clock=clock) as db:  # thread 2 has redo, from an earlier process
        side = db.session("SIDE", username="WL", thread=2)
        execute(db, side, "CREATE TABLE wl.side (id NUMBER PRIMARY KEY)")
        execute(db, side, "INSERT INTO wl.side VALUES (1)")
        execute(db, side, "COMMIT")
    db = Database(root, clock=clock)
    if pin is not None:
        db.session("WL_SETUP", username="WL", thread=pin(0))
        for i in range(spec.sessions):
            db.session(f"WL_S{i:02d}", username="WL", thread=pin(i))
    cap, writer = capture_for(home, root, "lv", spark, tables)
    if spark is not None:  # small batches: a poll reads several, each mined ahead
        cap.split_bytes, cap.max_poll_splits = 2048, 1
    run = Run(b"", b"", cap, 0)
    k = itertools.count()

    def progress(_: WorkloadStats) -> None:
        i = next(k)
        step(i, db)
        cap.poll()
        run.polls += 1
        if i % 4 == 3:  # after a flush of every thread: nothing may wait any more
            run.held_after_full_flush.append(sum(len(q) for q in cap.held.values()))

    run_workload(db, spec, progress=progress, wall=itertools.count().__next__, sleep=lambda s: 0)
    db.close()  # the last flush: every thread's progress marked
    drain(cap)
    cap.close()
    writer.close()
    run.live = _content(home, "lv")
    again, writer = capture_for(home, root, "cu", tables=tables)
    drain(again)
    writer.close()
    run.catchup = _content(home, "cu")
    run.left = sum(len(q) for c in (cap, again) for q in c.held.values())
    return run


def _ahead(i: int, db: Database) -> None:
    """Thread 1 flushed ahead of thread 2, then thread 2 alone, then both (marks)."""
    phase = i % 4
    if phase == 0:
        if 1 in db.logs.writers:
            db.logs.writers[1].flush()  # a log writer's own flush: no progress mark
    elif phase == 2:
        if 2 in db.logs.writers:
            db.logs.writers[2].flush()
    elif phase == 3:
        db.logs.flush()


@pytest.fixture(autouse=True)
def _no_timed_flush(monkeypatch: pytest.MonkeyPatch) -> None:
    """Redo reaches the files only when the test says (or a 256 KiB buffer fills)."""
    monkeypatch.setattr(database_module, "FLUSH_INTERVAL", 1e9)


def test_both_threads_busy_live_equals_catchup(tmp_path: Path) -> None:
    run = _run(tmp_path, _ahead)
    assert run.live and run.live == run.catchup and not run.left
    assert run.capture.stats.skipped_recovered == 0
    assert run.held_after_full_flush and not any(run.held_after_full_flush)


def test_mined_ahead_on_spark_live_equals_catchup(
    tmp_path: Path, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With Spark the next batch is planned and mined before this one is applied: its
    watermark is the one known then, and what it holds is applied later all the same."""
    taken: list[bool] = []
    real = Capture._take_ahead

    def counted(self: Capture) -> Any:
        got = real(self)
        taken.append(got is not None)
        return got

    monkeypatch.setattr(Capture, "_take_ahead", counted)
    run = _run(tmp_path, _ahead, spec=replace(SPEC, transactions=24), spark=spark)
    assert run.live and run.live == run.catchup and not run.left
    assert any(taken)
    assert run.capture.stats.skipped_recovered == 0


#: TABLE options of the kind the tasks apply to fragments (rowscan.select's): WHERE on the
#: key, COLSEXCEPT, tokens of the operation and of the commit.
RULES = (
    "TABLE wl.wl_t01, COLSEXCEPT (name), WHERE (id > 5), TOKENS (TKN-OP = GGS_OP_TYPE, "
    "TKN-COMMIT = @GETENV ('GGHEADERINFO', 'COMMITTIMESTAMP'));\nTABLE wl.wl_t02;\n"
    "TABLE wl.side;"
)


def test_table_options_in_fragments_on_two_threads_live_equals_catchup(
    tmp_path: Path, spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows of a table with TABLE options travel in the fragments of transactions that
    span the live run's small splits (selected and cut in the tasks, their tokens added at
    commit), on two threads and mined ahead; the catch-up in one process closes every
    transaction in its split instead. The trails are the same."""
    marked: list[int] = []
    real = Capture._fragment

    def noted(self: Capture, f: Any) -> None:
        marked.append(len(f.marks))
        real(self, f)

    monkeypatch.setattr(Capture, "_fragment", noted)
    run = _run(tmp_path, _ahead, spec=replace(SPEC, transactions=40), spark=spark, tables=RULES)
    assert run.live and run.live == run.catchup and not run.left
    assert run.capture.stats.skipped_recovered == 0
    assert any(marked)  # fragments held rows of the rule table


def test_without_the_watermark_commits_are_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check above can fail: with every item applied at once (no low watermark), the
    same run drops thread 2's commits as "already written"."""
    monkeypatch.setattr(Capture, "_low", lambda self, batch, results: None)
    run = _run(tmp_path, _ahead)
    assert run.capture.stats.skipped_recovered > 0
    assert len(run.live) < len(run.catchup)


def test_idle_thread_does_not_stall_the_merge(tmp_path: Path) -> None:
    """Every session on thread 1; thread 2 (which has redo) writes nothing during the run:
    its progress mark, rewritten at each flush, lets the watermark pass."""
    run = _run(tmp_path, _ahead, pin=lambda i: 1)
    assert run.live and run.live == run.catchup and not run.left
    assert run.held_after_full_flush and not any(run.held_after_full_flush)


def test_thread_switching_logs(tmp_path: Path) -> None:
    def switching(i: int, db: Database) -> None:
        _ahead(i, db)
        if i % 25 == 24:
            db.switch_log(2)

    run = _run(tmp_path, switching, log_bytes=96 * 1024)
    logs = sorted((tmp_path / "dirdb" / "RAC" / "redo").rglob("*.log"))
    assert len(logs) > 6  # both threads switched, several times
    assert run.live and run.live == run.catchup and not run.left
    assert not any(run.held_after_full_flush)


def test_crashed_thread_does_not_hold_the_merge(tmp_path: Path) -> None:
    """Thread 2's instance crashes: its thread is marked closed, and thread 1's commits are
    applied as they are flushed, though thread 2 never writes again."""
    home, root, db, a, b = two_threads(tmp_path)
    execute(db, b, "INSERT INTO wl.t VALUES (0)")
    execute(db, b, "COMMIT")
    execute(db, b, "INSERT INTO wl.t VALUES (-1)")  # open when the instance dies
    cap, writer = capture_for(home, root, "lv")
    drain(cap)
    rows = cap.stats.trail_records
    assert rows == 1
    db.crash_instance(2)
    for i in range(1, 6):
        execute(db, a, f"INSERT INTO wl.t VALUES ({i})")
        execute(db, a, "COMMIT")
        db.logs.flush()  # thread 2 is closed: it gets no mark any more
        cap.poll()
        assert cap.stats.trail_records == rows + i  # applied now, not held for thread 2
    db.close()
    drain(cap)
    writer.close()
    again, writer = capture_for(home, root, "cu")
    drain(again)
    writer.close()
    assert _content(home, "lv") == _content(home, "cu")


def test_crashed_thread_opened_again_is_waited_for(tmp_path: Path) -> None:
    """A closed thread written again is open: its mark says so before its first record."""
    home = Home(tmp_path)
    home.create_subdirs()
    root = create_database(home.dirdb, "RAC", threads=2)
    with Database(root, clock=ManualClock(datetime(2024, 1, 1), step=0.001)) as db:
        b = db.session("B", username="WL", thread=2)
        execute(db, b, "CREATE TABLE wl.t (id NUMBER PRIMARY KEY)")
        db.crash_instance(2)
        cap, writer = capture_for(home, root, "lv")
        drain(cap)
        a = db.session("A", username="WL", thread=1)
        c = db.session("C", username="WL", thread=2)
        execute(db, c, "INSERT INTO wl.t VALUES (1)")
        c.commit(db)  # thread 2 again: buffered, not flushed (a SQL COMMIT would flush)
        execute(db, a, "INSERT INTO wl.t VALUES (2)")
        a.commit(db)
        w1 = db.logs.writers[1]
        w1.flush()
        w1.mark(db.state.scn)  # thread 1's own mark, past thread 2's commit
        cap.poll()
        assert cap.stats.trail_records == 0  # thread 1's commit waits for thread 2's
        db.logs.flush()
        drain(cap)
        assert cap.stats.trail_records == 2
        writer.close()


def test_multi_thread_backlog_is_read_in_bounded_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backlog on two threads, one sparse (one session of six): each batch reads at most
    ``max_poll_splits`` splits of a thread, cut to a common SCN, so that the busy thread
    does not leave the sparse one's redo held in memory batch after batch."""
    home = Home(tmp_path)
    home.create_subdirs()
    root = create_database(home.dirdb, "RAC", threads=2)
    with Database(root, clock=ManualClock(datetime(2024, 1, 1), step=0.0005)) as db:
        db.session("WL_SETUP", username="WL", thread=1)
        for i in range(6):
            db.session(f"WL_S{i:02d}", username="WL", thread=2 if i == 0 else 1)
        run_workload(db, replace(SPEC, transactions=400), wall=itertools.count().__next__)
    whole, writer = capture_for(home, root, "wh")
    whole.max_poll_splits = None
    drain(whole)
    writer.close()
    cap, writer = capture_for(home, root, "bd")
    cap.split_bytes = 4096
    cap.max_poll_splits = 2
    planned: list[dict[int, int]] = []
    real = merge.plan_batch

    def counting(*args: Any, **kwargs: Any) -> merge.Batch:
        batch = real(*args, **kwargs)
        per: dict[int, int] = {}
        for s in batch.splits:
            per[s.thread] = per.get(s.thread, 0) + 1
        planned.append(per)
        return batch

    monkeypatch.setattr(capture_module, "plan_batch", counting)
    held = []
    while cap.poll():
        held.append(sum(len(q) for q in cap.held.values()))
    writer.close()
    assert _content(home, "bd") == _content(home, "wh") != b""
    assert len(planned) > 10 and all(n <= 2 for per in planned for n in per.values())
    assert max(held) < 150, (held, planned)  # about a split's worth at most


@pytest.mark.parametrize("kind", KINDS)
def test_live_soak_in_processes(tmp_path: Path, kind: str) -> None:
    """The soak of ``benchmarks/rac_soak.py``, short: the workload in another process with
    the database's own flushing, the capture polling it as it writes."""
    spec = WorkloadSpec(tables=2, rows_per_txn=4, transactions=300, tps=200, sessions=6)
    r = one_run(tmp_path, kind, spec, poll_s=0.01)
    assert r["transactions"] and r["polls"] >= 3  # polled while the workload wrote
    assert (r["lost"], r["dup"], r["same_bytes"], r["skipped_recovered"]) == (0, 0, True, 0), r


def test_restart_while_items_are_held_is_exactly_once(tmp_path: Path) -> None:
    """The Extract stops (its checkpoint taken) while it holds items above the watermark,
    and starts again from that checkpoint: every transaction once, in the same order."""
    home = Home(tmp_path)
    home.create_subdirs()
    root = create_database(home.dirdb, "RAC", threads=2)
    db = Database(root, clock=ManualClock(datetime(2024, 1, 1), step=0.0005))
    for i in range(SPEC.sessions):
        db.session(f"WL_S{i:02d}", username="WL", thread=i % 2 + 1)
    run_workload(db, replace(SPEC, transactions=1), wall=itertools.count().__next__)
    live = [capture_for(home, root, "lv")]
    restarts = 0
    k = itertools.count()

    def progress(_: WorkloadStats) -> None:
        nonlocal restarts
        i = next(k)
        _ahead(i, db)
        cap, writer = live[-1]
        cap.poll()
        if any(cap.held.values()) and restarts < 5 and i % 7 == 0:
            state = cap.durable_state()
            writer.close()
            cap.close()
            writer = TrailWriter.open(home.root / "dirdat" / "lv", durable=False, megabytes=500)
            model = cap.model
            start = initial_positions(root / "redo", (), 2)
            again = Capture(model, root, writer, home.dirtmp / "lv", start=start, state=state)
            live.append((again, writer))
            restarts += 1

    run_workload(db, SPEC, progress=progress, wall=itertools.count().__next__, sleep=lambda s: 0)
    db.close()
    cap, writer = live[-1]
    drain(cap)
    writer.close()
    assert restarts >= 3
    whole, writer = capture_for(home, root, "cu")
    drain(whole)
    writer.close()
    assert _content(home, "lv") == _content(home, "cu") != b""
