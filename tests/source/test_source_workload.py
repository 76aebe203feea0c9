"""The workload generator: fast path identical to the generic path, determinism, long txns."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest

from engine.embedded.clock import ManualClock
from engine.embedded.database import Database, create_database
from engine.embedded.dictionary import load_dictionary
from engine.embedded.errors import SourceError
from engine.embedded.workload import WorkloadSpec, parse_mix, run_workload
from engine.redo.model import RedoRecord
from tests.harness.logical import decode, replay


def _run(tmp: Path, spec: WorkloadSpec, threads: int = 2) -> tuple[list[RedoRecord], Database]:
    root = create_database(tmp, "WL", threads=threads)
    db = Database(root, clock=ManualClock(datetime(2024, 1, 1)))
    run_workload(db, spec, wall=iter(range(10**9)).__next__, sleep=lambda s: None)
    return [lr.record for lr in db.records()], db


@pytest.mark.parametrize("array", [1, 7])
def test_fast_path_writes_the_generic_bytes(tmp_path: Path, array: int) -> None:
    spec = WorkloadSpec(
        transactions=150, rows_per_txn=6, initial_rows=60, rollback_ratio=0.1, array=array
    )
    fast, db1 = _run(tmp_path / "a", spec)
    slow, db2 = _run(tmp_path / "b", WorkloadSpec(**{**spec.__dict__, "bulk": False}))
    try:
        assert fast == slow
        assert len(fast) > (1500 if array == 1 else 500)
        for t in db1.dictionary.tables.values():
            assert db1.rows(t) == db2.rows(t)
    finally:
        db1.close()
        db2.close()


def test_workload_redo_rebuilds_the_tables(tmp_path: Path) -> None:
    recs, db = _run(
        tmp_path,
        WorkloadSpec(
            transactions=120,
            rows_per_txn=5,
            initial_rows=40,
            rollback_ratio=0.2,
            long_txns=2,
            long_age=60,
        ),
    )
    try:
        d = decode(recs, load_dictionary(db.root / "dictionary.json"))
        assert d.rolled_back and not d.open
        assert {r.thread for r in recs} == {1, 2}
        rebuilt = replay(d.committed)
        for t in db.dictionary.tables.values():
            ids = sorted(int(r["ID"]) for r in rebuilt[t.qualified].values())
            assert ids == sorted(int(r[0]) for r in db.rows(t))
        long = [
            t
            for t in d.committed
            if t.commit_time
            and t.commit_time - t.start_time
            and (t.commit_time - t.start_time).total_seconds() >= 60
        ]
        assert len(long) >= 2
    finally:
        db.close()


def test_mix_parsing() -> None:
    assert parse_mix("insert=2,update=1,delete=1") == (0.5, 0.25, 0.25)
    with pytest.raises(SourceError):
        parse_mix("upsert=1")
    with pytest.raises(SourceError):
        parse_mix("insert=0")


def test_tps_throttle_sleeps_on_the_injected_clock(tmp_path: Path) -> None:
    root = create_database(tmp_path, "T")
    db = Database(root, clock=ManualClock(datetime(2024, 1, 1)))
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    try:
        stats = run_workload(
            db,
            WorkloadSpec(transactions=20, tps=10, rows_per_txn=2, initial_rows=20),
            wall=lambda: now[0],
            sleep=sleep,
        )
    finally:
        db.close()
    assert stats.transactions >= 20
    assert slept and abs(now[0] - 2.0) < 0.15  # 20 transactions at 10/s of (fake) wall time


def test_interrupted_workload_leaves_redo_and_tables_consistent(tmp_path: Path) -> None:
    root = create_database(tmp_path, "I", threads=2)
    db = Database(root, clock=ManualClock(datetime(2024, 1, 1)))

    def progress(stats: object) -> None:
        if getattr(stats, "transactions", 0) > 30:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_workload(
            db,
            WorkloadSpec(transactions=10_000, initial_rows=50),
            progress,
            wall=iter(range(10**9)).__next__,
            sleep=lambda s: None,
        )
    try:
        d = decode([lr.record for lr in db.records()], load_dictionary(db.root / "dictionary.json"))
        assert not d.open
        rebuilt = replay(d.committed)
        for t in db.dictionary.tables.values():
            assert sorted(int(r["ID"]) for r in rebuilt[t.qualified].values()) == sorted(
                int(r[0]) for r in db.rows(t)
            )
    finally:
        db.close()


@pytest.mark.parametrize("bulk", [True, False])
def test_committed_redo_replays_to_the_tables_values_included(tmp_path: Path, bulk: bool) -> None:
    """Deletes and rollbacks move keys around: no two open transactions may change the
    same row (the generic path would raise ORA-00054, the fast path would write redo that
    no commit order replays), so every row the replay rebuilds is the row SQLite holds."""
    spec = WorkloadSpec(
        transactions=300,
        rows_per_txn=12,
        initial_rows=80,
        mix=parse_mix("insert=20,update=40,delete=40"),
        rollback_ratio=0.2,
        sessions=5,
        tables=3,
        seed=2,
        bulk=bulk,
    )
    recs, db = _run(tmp_path, spec)
    try:
        rebuilt = replay(decode(recs, load_dictionary(db.root / "dictionary.json")).committed)
        for t in db.dictionary.tables.values():
            want = sorted(
                (int(r["ID"]), r["NAME"], Decimal(r["AMOUNT"]), r["STATUS"])
                for r in rebuilt[t.qualified].values()
            )
            got = sorted((row[0], row[1], Decimal(str(row[2])), row[4]) for row in db.rows(t))
            assert want == got
    finally:
        db.close()
