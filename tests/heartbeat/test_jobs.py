"""The update and purge jobs: when they are due, what they write, and who runs them (the
embedded source's own scheduler in whatever process has it open, or the Manager)."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta

from engine.embedded.clock import ManualClock
from engine.embedded.database import Database
from engine.embedded.sql import execute
from engine.heartbeat import registry
from engine.heartbeat.jobs import run_purge, run_update
from engine.heartbeat.names import HeartbeatNames
from engine.heartbeat.schedule import BUSY_RETRY, HeartbeatSchedule
from engine.heartbeat.schema import Dialect
from engine.heartbeat.settings import utc_now
from engine.heartbeat.store import SqlStore
from engine.home.layout import Home
from engine.runtime.events import Severity
from tests.harness.logical import decode

from .conftest import Shell, Tick

T0 = datetime(2026, 3, 14, 12, 0, 0)
S = timedelta(seconds=1)


def sqlite_store(home: Home) -> SqlStore:
    conn = sqlite3.connect(home.root / "tgt.db")
    return SqlStore(conn, Dialect("sqlite"), HeartbeatNames(None), "TGT")


def seed_ts(home: Home) -> str:
    conn = sqlite3.connect(home.root / "tgt.db")
    return str(conn.execute("SELECT HEARTBEAT_TIMESTAMP FROM gg_heartbeat_seed").fetchone()[0])


def test_update_and_purge_on_a_sqlite_database(home: Home, shell: Shell) -> None:
    shell.run("DBLOGIN USERID gg@./tgt.db")
    shell.run("ADD HEARTBEATTABLE, FREQUENCY 10, RETENTION_TIME 2, PURGE_FREQUENCY 1")
    store = sqlite_store(home)
    store.execute("UPDATE gg_heartbeat_seed SET HEARTBEAT_TIMESTAMP = ?", ["2026-03-14 12:00:00"])
    store.execute("UPDATE gg_heartbeat_settings SET LAST_PURGE_TS = ?", ["2026-03-14 12:00:00"])
    store.conn.commit()
    assert run_update(store, T0 + 9 * S) == T0 + 10 * S  # not due: nothing written
    assert seed_ts(home) == "2026-03-14 12:00:00"
    assert run_update(store, T0 + 12 * S) == T0 + 22 * S  # due: the seed row moves on
    assert seed_ts(home) == "2026-03-14 12:00:12.000000"
    # history older than RETENTION_TIME days goes when the purge is due (PURGE_FREQUENCY)
    for days in (3, 1.5, 0):  # the cutoff will be 2 days before the purge: T0 - 1 day
        store.execute(
            "INSERT INTO gg_heartbeat_history (REMOTE_DATABASE, HEARTBEAT_RECEIVED_TS) "
            "VALUES ('SRC', ?)",
            [(T0 - timedelta(days=days)).isoformat(" ")],
        )
    store.conn.commit()
    assert run_purge(store, T0 + timedelta(hours=23)) == T0 + timedelta(days=1)
    assert store.rows("SELECT count(*) FROM gg_heartbeat_history") == [(3,)]
    later = T0 + timedelta(days=1, seconds=2)
    assert run_purge(store, later) == later + timedelta(days=1)
    assert store.rows("SELECT count(*) FROM gg_heartbeat_history") == [(1,)]
    assert store.settings().last_purge == later  # type: ignore[union-attr]
    # FREQUENCY 0 pauses the update job; TARGETONLY has none
    shell.run("ALTER HEARTBEATTABLE, FREQUENCY 0")
    assert run_update(store, later) is None
    shell.run("ALTER HEARTBEATTABLE, FREQUENCY 5, TARGETONLY")
    assert run_update(store, later) is None


def test_the_process_that_has_the_source_open_runs_its_jobs(home: Home, shell: Shell) -> None:
    shell.run("DBLOGIN SOURCEDB src")
    shell.run("ADD HEARTBEATTABLE, FREQUENCY 5")
    clock = ManualClock(T0)
    with Database(home.dirdb / "SRC", clock=clock) as db:
        app = db.session("APP")
        execute(db, app, "CREATE TABLE app.t (id NUMBER PRIMARY KEY)")
        start = len(db.records())

        def commit_one(i: int) -> None:
            execute(db, app, f"INSERT INTO app.t VALUES ({i})")
            execute(db, app, "COMMIT")  # end of a transaction: the scheduler looks

        commit_one(1)  # the first look runs the update (the seed's time is the ADD's, past)
        assert db.conn.execute(
            'SELECT HEARTBEAT_TIMESTAMP FROM "TESTER$GG_HEARTBEAT_SEED"'
        ).fetchone() == ("2026-03-14 12:00:00",)
        clock.advance(4)
        commit_one(2)  # 4 s later: not due
        clock.advance(1)
        commit_one(3)  # 5 s: due
        assert db.conn.execute(
            'SELECT HEARTBEAT_TIMESTAMP FROM "TESTER$GG_HEARTBEAT_SEED"'
        ).fetchone() == ("2026-03-14 12:00:05",)
        decoded = decode((lr.record for lr in db.records()[start:]), db.dictionary)
    jobs = [t for t in decoded.committed if any(c.table == "GG_HEARTBEAT_SEED" for c in t.changes)]
    # two updates, each a transaction of its own carrying every non-key column of the row
    assert [[c.op for c in t.changes] for t in jobs] == [["UPDATE"], ["UPDATE"]]
    assert len(jobs[0].changes[0].after) == 16
    assert jobs[1].changes[0].key == {"LOCAL_DATABASE": "SRC"}


def test_manager_runs_the_jobs_of_every_registered_database(home: Home, shell: Shell) -> None:
    shell.run("DBLOGIN SOURCEDB src")
    shell.run("ADD HEARTBEATTABLE, FREQUENCY 30")
    shell.run("DBLOGIN USERID gg@./tgt.db")
    shell.run("ADD HEARTBEATTABLE, FREQUENCY 10")
    events: list[tuple[str, str]] = []
    mono = [100.0]
    utc = Tick(datetime(2099, 1, 1))  # well after the ADD: everything is due at once
    schedule = HeartbeatSchedule(
        home, lambda c, _s, t: events.append((c, t)), clock=utc, monotonic=lambda: mono[0]
    )
    schedule.tick()
    assert seed_ts(home) == "2099-01-01 00:00:00.000000"
    keys = {e.kind: e.key for e in registry.load(home)}
    assert schedule.due[keys["sqlite"]] == 100.0 + 10  # next: FREQUENCY seconds later
    # the embedded source ran its own jobs (redo time ~ now): next run within 30 s
    assert 100.0 < schedule.due[keys["embedded"]] <= 130.0
    with Database(home.dirdb / "SRC") as db:
        (ts,) = db.conn.execute(
            'SELECT HEARTBEAT_TIMESTAMP FROM "TESTER$GG_HEARTBEAT_SEED"'
        ).fetchone()
        assert ts > "2026"
        # while another process has the source open, its scheduler runs the jobs: the
        # Manager only looks again a second later
        schedule.due.clear()
        schedule.tick()
        assert schedule.due[keys["embedded"]] == 100.0 + BUSY_RETRY
    assert events == []


def test_manager_reports_a_failing_database_once(home: Home, shell: Shell) -> None:
    shell.run("DBLOGIN USERID gg@./tgt.db")
    shell.run("ADD HEARTBEATTABLE")
    (home.root / "tgt.db").unlink()
    (home.root / "tgt.db").mkdir()  # not a database any more
    events: list[tuple[str, Severity, str]] = []
    mono = [0.0]
    schedule = HeartbeatSchedule(home, lambda c, s, t: events.append((c, s, t)),
                                 monotonic=lambda: mono[0])  # fmt: skip
    schedule.tick()
    mono[0] += 60
    schedule.tick()
    assert [(c, s) for c, s, _ in events] == [("OGG-14095", Severity.WARNING)]
    assert "Heartbeat jobs of database TGT failed" in events[0][2]


def test_a_source_clock_that_ran_ahead_keeps_running_while_closed(home: Home) -> None:
    """A workload at --clock-rate leaves redo time ahead of this machine's; the next opens go
    on from that lead at the normal rate (the heartbeat job must find its FREQUENCY again),
    instead of restarting at the last record's time every time."""
    root = home.dirdb / "SRC"
    with Database(root, clock_rate=3600.0) as db:
        s = db.session("APP")
        execute(db, s, "CREATE TABLE app.t (id NUMBER PRIMARY KEY)")
        for i in range(20):
            execute(db, s, f"INSERT INTO app.t VALUES ({i})")
            execute(db, s, "COMMIT")
        last = db.now()
    lead = last - utc_now()
    assert lead > timedelta(seconds=10)
    with Database(root) as db:
        assert db.clock.now() >= last
        assert abs((db.clock.now() - utc_now()) - lead) < timedelta(seconds=2)
        # what the next open starts from: now + the lead, not the last record's time
        assert abs(timedelta(microseconds=db.state.ahead_us) - lead) < timedelta(seconds=2)


def test_dba_scheduler_jobs_shows_the_update_job_on_the_embedded_source(
    home: Home, shell: Shell
) -> None:
    """Seed 001: 'SELECT START_DATE, LAST_START_DATE, NEXT_RUN_DATE FROM DBA_SCHEDULER_JOBS
    Where job_name = 'GG_UPDATE_HEARTBEATS'', then look for a valid NEXT_RUN_DATE."""
    query = (
        "SELECT START_DATE, LAST_START_DATE, NEXT_RUN_DATE FROM DBA_SCHEDULER_JOBS "
        "Where job_name ='GG_UPDATE_HEARTBEATS'"
    )
    clock = ManualClock(T0)
    with Database(home.dirdb / "SRC", clock=clock) as db:
        assert execute(db, db.session("DBA"), query).rows == ()  # no heartbeat table: no job
    shell.run("DBLOGIN SOURCEDB src")
    shell.run("ADD HEARTBEATTABLE, FREQUENCY 5")
    with Database(home.dirdb / "SRC", clock=clock) as db:
        s = db.session("DBA")
        ((start, last, nxt),) = execute(db, s, query).rows
        assert start is not None and last is not None
        assert nxt == "2026-03-14 12:00:00.000000"  # never ran at T0: due now
        db.scheduler.run_due(db)
        ((_, last, nxt),) = execute(db, s, query).rows
        assert (last, nxt) == ("2026-03-14 12:00:00.000000", "2026-03-14 12:00:05.000000")
        names = execute(db, s, "SELECT JOB_NAME, ENABLED, REPEAT_INTERVAL FROM "
                               "sys.dba_scheduler_jobs ORDER BY 1").rows  # fmt: skip
        assert names == (
            ("GG_PURGE_HEARTBEATS", "TRUE", "FREQ=DAILY;INTERVAL=1"),
            ("GG_UPDATE_HEARTBEATS", "TRUE", "FREQ=SECONDLY;INTERVAL=5"),
        )
