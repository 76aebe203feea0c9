"""The two heartbeat jobs, GoldenGate's GG_UPDATE_HEARTBEATS and GG_PURGE_HEARTBEATS.

* update: every FREQUENCY seconds the seed row's HEARTBEAT_TIMESTAMP becomes "now" (0 pauses the
  job; a TARGETONLY database has none). On the embedded source this is a transaction of its own
  session, so it is in the redo and Extract captures it like any change.
* purge: every PURGE_FREQUENCY days, history rows received more than RETENTION_TIME days ago are
  deleted (and LAST_PURGE_TS is set).

When a job is due is derived from the database itself (the seed row's timestamp, LAST_PURGE_TS),
so whoever runs the jobs - the embedded database's own scheduler in whatever process has it open,
or the Manager - agrees on it, and a restart neither skips nor repeats a run. "Now" is always a
parameter: the embedded source's clock (redo time, UTC), or the Manager's UTC clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from engine.heartbeat.names import PURGE_JOB, UPDATE_JOB, HeartbeatNames
from engine.heartbeat.store import EmbeddedStore, SqlStore

if TYPE_CHECKING:
    from engine.embedded.database import Database

JOB_MODULE = "engine.heartbeat.jobs"


def update_due(store: SqlStore, now: datetime) -> datetime | None:
    """When the update job is next due (may be in the past); None when it never runs."""
    settings = store.settings()
    if settings is None or not settings.updates:
        return None
    period = timedelta(seconds=settings.frequency)
    last = store.last_heartbeat()
    if last is None or last > now + period:  # never ran, or the clock went back
        return now
    return last + period


def run_update(store: SqlStore, now: datetime) -> datetime | None:
    """Run the update job if it is due; return when it is next due (None: never)."""
    due = update_due(store, now)
    if due is None or now < due:
        return due
    store.update(now)
    return update_due(store, now)


def run_purge(store: SqlStore, now: datetime) -> datetime | None:
    """Run the purge job if it is due; return when it is next due (None: no settings)."""
    settings = store.settings()
    if settings is None:
        return None
    period = timedelta(days=settings.purge_days)
    last = settings.last_purge or settings.created
    if last is not None and now < last + period and last <= now:
        return last + period
    store.purge(now, settings)
    return now + period


@dataclass
class EmbeddedJob:
    """A scheduler job of the embedded source (:mod:`engine.embedded.scheduler`)."""

    names: HeartbeatNames
    purge: bool
    next_due: datetime | None = None

    def run_due(self, db: Database) -> datetime | None:
        now = db.clock.now()
        if self.next_due is not None and now < self.next_due:
            return self.next_due
        store = EmbeddedStore(db, self.names)
        self.next_due = run_purge(store, now) if self.purge else run_update(store, now)
        return self.next_due

    def describe(self, db: Database) -> tuple[str | None, ...]:
        """Its DBA_SCHEDULER_JOBS row after JOB_NAME (seed 001: 'look for valid entries for
        NEXT_RUN_DATE'): ENABLED, REPEAT_INTERVAL, START_DATE (the tables' creation),
        LAST_START_DATE, NEXT_RUN_DATE; times in the database's clock (UTC)."""
        store = EmbeddedStore(db, self.names)
        settings = store.settings()
        if settings is None:
            return ("FALSE", None, None, None, None)
        if self.purge:
            last = settings.last_purge
            start = last or settings.created
            nxt = start + timedelta(days=settings.purge_days) if start else None
            interval = f"FREQ=DAILY;INTERVAL={settings.purge_days}"
        else:
            last = store.last_heartbeat()
            nxt = update_due(store, db.clock.now())
            interval = f"FREQ=SECONDLY;INTERVAL={settings.frequency}"
        return ("TRUE" if nxt else "FALSE", interval, _stamp(settings.created), _stamp(last),
                _stamp(nxt))  # fmt: skip


def _stamp(moment: datetime | None) -> str | None:
    return None if moment is None else moment.strftime("%Y-%m-%d %H:%M:%S.%f")


def _names(args: dict[str, Any]) -> HeartbeatNames:
    return HeartbeatNames(args.get("owner"), str(args["table"]))


def update_job(args: dict[str, Any]) -> EmbeddedJob:
    return EmbeddedJob(_names(args), purge=False)


def purge_job(args: dict[str, Any]) -> EmbeddedJob:
    return EmbeddedJob(_names(args), purge=True)


def job_definitions(names: HeartbeatNames) -> dict[str, tuple[str, dict[str, Any]]]:
    """Scheduler job name -> (target, arguments) for the embedded source."""
    args = {"owner": names.owner, "table": names.table}
    return {
        UPDATE_JOB: (f"{JOB_MODULE}:update_job", args),
        PURGE_JOB: (f"{JOB_MODULE}:purge_job", args),
    }
