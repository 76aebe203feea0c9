"""The PostgreSQL Extract off the happy path: a large transaction paged out of a small
transaction cache and written whole, and a slot that lost its WAL (max_slot_wal_keep_size)
abending with the slot and the LSNs named."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import numpy as np
import psycopg
import pyarrow as pa
import pytest

from engine.extract.cache import TransactionCache
from engine.extract.start import ExtractError
from engine.home.layout import Home
from engine.postgres import fastpath
from engine.postgres.capture import PgCapture
from engine.postgres.slot import load_registration
from engine.replicat.lakeread import ColumnReader
from engine.trail.files import TrailName
from engine.trail.layout import IOType, TransInd
from engine.trail.model import TrailPosition
from tests.postgres.cluster import Cluster, ClusterUnavailable, start_cluster
from tests.postgres.pgsource import prm, records, run_once, setup_group, sql

pytestmark = pytest.mark.postgres


def test_large_transaction_paged_out_and_written_whole(
    home: Home, pgdb: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sql(pgdb, "CREATE TABLE big (id int PRIMARY KEY, pad text)")
    group = setup_group(home, pgdb)
    sql(pgdb, "INSERT INTO big SELECT g, repeat('x', 50) FROM generate_series(1, 60000) g")
    spilled: list[int] = []
    real = PgCapture._commit

    def spy(self: PgCapture, ev: tuple[object, ...]) -> None:
        txn = self.cache.txns.get(str(ev[2]))  # (COMMIT, lsn, xid, time)
        spilled.append(txn.spilled if txn is not None else 0)
        real(self, ev)

    monkeypatch.setattr(PgCapture, "_commit", spy)
    run_once(home, group, prm(pgdb, extra="CACHEMGR CACHESIZE 1MB\n"))
    recs = records(home)
    assert len(recs) == 60000
    assert spilled and spilled[0] > 0  # the cache paged rows out: memory stayed bounded
    assert recs[0].trans_ind == TransInd.BEGIN and recs[-1].trans_ind == TransInd.END
    assert {r.trans_ind for r in recs[1:-1]} == {TransInd.MIDDLE}
    assert [dict(r.columns)[0] for r in recs] == [str(i) for i in range(1, 60001)]
    assert sum(1 for r in recs if r.tranid) == 1


@pytest.fixture
def tiny_wal_cluster() -> Iterator[Cluster]:
    try:
        cluster = start_cluster(
            {"max_slot_wal_keep_size": "1MB", "min_wal_size": "2MB", "max_wal_size": "4MB"},
            wal_segsize_mb=1,
        )
    except ClusterUnavailable as exc:
        pytest.skip(str(exc))
    try:
        yield cluster
    finally:
        cluster.stop()


def test_lost_wal_abends_naming_slot_and_lsns(home: Home, tiny_wal_cluster: Cluster) -> None:
    url = tiny_wal_cluster.url()
    sql(url, "CREATE TABLE t (id int PRIMARY KEY, pad text)")
    group = setup_group(home, url)
    sql(url, "INSERT INTO t VALUES (0, 'first')")
    run_once(home, group, prm(url))
    with psycopg.connect(url, autocommit=True) as conn:
        for i in range(8):  # WAL past max_slot_wal_keep_size; checkpoints remove it
            conn.execute(
                "INSERT INTO t SELECT g, repeat('y', 200) FROM generate_series(%s::int, %s::int) g",
                (i * 5000 + 1, i * 5000 + 5000),
            )
            conn.execute("SELECT pg_switch_wal()")
            conn.execute("CHECKPOINT")
    reg = load_registration(home, "EPG")
    assert reg is not None
    with pytest.raises(ExtractError) as info:
        run_once(home, group, prm(url))
    assert info.value.code == "OGG-25362", info.value.text
    assert reg.slot in info.value.text and "lost" in info.value.text
    assert "checkpoint read LSN" in info.value.text
    assert len(records(home)) == 1  # nothing after the gap was written


def test_dropped_connection_abends_in_one_line(home: Home, pgdb: str) -> None:
    import threading

    from engine.postgres.run import PgExtractRun
    from engine.postgres.state import PgCaptureError
    from params.check import check_text
    from tests.postgres.pgsource import Events

    sql(pgdb, "CREATE TABLE t (id int PRIMARY KEY)")
    group = setup_group(home, pgdb)
    run = PgExtractRun(home, check_text(prm(pgdb)).model, group, Events(), durable=False)
    try:
        pid = run.conn.info.backend_pid
        sql(pgdb, f"SELECT pg_terminate_backend({pid})")
        with pytest.raises(PgCaptureError) as info:
            run.run(threading.Event(), stop_at_eof=True, idle=0)
        assert info.value.code == "OGG-25366"
        assert "\n" not in info.value.text and "failed after read LSN" in info.value.text
    finally:
        run.writer.close()


def test_a_million_row_transaction_is_paged_out_and_written_whole(
    home: Home, pgdb: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One transaction of 1,000,000 inserts under an 8 MB CACHEMGR: the cache pages it out
    (its weight never passes the budget by more than one fragment), and the trail holds
    every row once, in order, as one transaction."""
    rows = 1_000_000
    sql(pgdb, "CREATE TABLE huge (id int PRIMARY KEY, pad text)")
    group = setup_group(home, pgdb)
    sql(pgdb, f"INSERT INTO huge SELECT g, 'row ' || g FROM generate_series(1, {rows}) g")
    peak = [0, 0]  # the cache's largest weight, the transaction's rows paged out
    real_hold = TransactionCache._hold

    def hold(self: TransactionCache, txn: Any, entry: Any, n: int, time_us: int) -> None:
        real_hold(self, txn, entry, n, time_us)
        peak[0] = max(peak[0], self.weight)
        peak[1] = max(peak[1], txn.spilled)

    monkeypatch.setattr(TransactionCache, "_hold", hold)
    run = run_once(home, group, prm(pgdb, extra="CACHEMGR CACHESIZE 8MB\n"))
    assert run.capture.stats.trail_records == rows
    assert peak[1] > 0 and peak[0] <= 8 << 20
    # the trail read back in columns (the lakehouse Replicat's reader, held equal to the
    # record reader by tests/lake/test_lake_columns.py): a million TrailRecords took 20 s
    reader = ColumnReader(TrailName.parse(home.root / "dirdat" / "ep"), TrailPosition(0, 0),
                          lambda _table, _defn: True)  # fmt: skip
    got = reader.read(rows)
    assert got.error is None and got.classic is None and got.records == rows, got
    assert {name for c in got.chunks for name in c.names} == {"public.huge"}
    ids = pa.concat_arrays([c.columns[0][0] for c in got.chunks]).cast(pa.int64()).to_numpy()
    assert np.array_equal(ids, np.arange(1, rows + 1))
    assert np.all(np.concatenate([c.io_type for c in got.chunks]) == IOType.INSERT)
    inds = Counter(np.concatenate([c.trans_ind for c in got.chunks]).tolist())
    assert inds == {TransInd.BEGIN: 1, TransInd.MIDDLE: rows - 2, TransInd.END: 1}
    assert sum(bool(tranid) for c in got.chunks for _, tranid in c.tokens.values()) == 1


def test_a_line_that_is_not_test_decodings_abends_in_one_line(home: Home, pgdb: str) -> None:
    """Neither the kernel nor the parser can read it: OGG-25366 naming the slot and the LSN,
    never a traceback (the slot's text is checked, though a server never gives this)."""
    from engine.postgres.run import PgExtractRun
    from engine.postgres.state import PgCaptureError
    from params.check import check_text
    from tests.postgres.pgsource import Events

    sql(pgdb, "CREATE TABLE t (id int PRIMARY KEY)")
    group = setup_group(home, pgdb)
    run = PgExtractRun(home, check_text(prm(pgdb)).model, group, Events(), durable=False)
    try:
        bad = "table public.t: INSERT: id[integer"
        events, _ = fastpath.scan([(0x1_0000_0010, bad)], 0, run.capture.fast)
        assert events == [(fastpath.SLOW, 0x1_0000_0010, bad)]
        with pytest.raises(PgCaptureError) as exc:
            run.capture._slow(events[0])
        assert exc.value.code == "OGG-25366"
        assert "LSN 1/10" in exc.value.text and run.reg.slot in exc.value.text
        assert "\n" not in exc.value.text
    finally:
        run.close()
