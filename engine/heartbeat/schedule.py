"""The Manager's side of the heartbeat jobs, for every database in the registry.

* SQLite and PostgreSQL databases have no scheduler: the Manager runs both jobs itself, with its
  UTC clock, connecting for each run.
* The embedded source has its own small scheduler (:mod:`engine.embedded.scheduler`), which runs
  in whatever process has the database open. When no process has it open, the Manager opens it
  for the moment a job is due and lets its scheduler run; when another process has it open
  (a workload), that process runs the jobs and the Manager looks again a second later.

:meth:`HeartbeatSchedule.tick` is called from the Manager's loop; between due times it does
nothing but compare numbers. A failing run is reported once (OGG-14095 warning) and retried.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from engine.heartbeat import registry
from engine.heartbeat.jobs import run_purge, run_update
from engine.heartbeat.registry import Entry
from engine.heartbeat.schema import Dialect
from engine.heartbeat.settings import utc_now
from engine.heartbeat.store import SqlStore
from engine.home.layout import Home
from engine.runtime.events import MANAGER_COMPONENT, Severity

Emit = Callable[[str, Severity, str], None]
BUSY_RETRY = 1.0  # the embedded database is open elsewhere: its own scheduler runs the jobs
ERROR_RETRY = 10.0
IDLE_RECHECK = 60.0  # nothing due (paused): look at the settings again this often


def connect(kind: str, target: str, user: str | None = None, password: str | None = None) -> Any:
    """A DB-API connection to an SQLite file or a PostgreSQL URL."""
    if kind == "postgresql":
        from engine.targets.pgconnect import pg_connect

        return pg_connect(target, user=user, password=password)
    return sqlite3.connect(target, timeout=10)


class HeartbeatSchedule:
    def __init__(
        self,
        home: Home,
        emit: Emit,
        clock: Callable[[], datetime] = utc_now,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.home = home
        self.emit = emit
        self.clock = clock
        self.monotonic = monotonic
        self.entries: list[Entry] = []
        self.due: dict[tuple[str, str], float] = {}
        self.errors: dict[tuple[str, str], str] = {}
        self._mtime: float | None = None

    def _refresh(self) -> None:
        path = registry.registry_path(self.home)
        try:
            mtime = path.stat().st_mtime
        except OSError:
            mtime = 0.0
        if mtime == self._mtime:
            return
        self._mtime = mtime
        self.entries = registry.load(self.home)
        self.due = {}  # settings may have changed: look at every database again now

    def tick(self) -> None:
        self._refresh()
        now = self.monotonic()
        for entry in self.entries:
            if now < self.due.get(entry.key, 0.0):
                continue
            try:
                delay = self.run(entry)
                self.errors.pop(entry.key, None)
            except Exception as exc:  # a database that is down must not stop the Manager
                delay = ERROR_RETRY
                text = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
                if self.errors.get(entry.key) != text:
                    self.errors[entry.key] = text
                    self.emit(
                        "OGG-14095",
                        Severity.WARNING,
                        f"Heartbeat jobs of database {entry.database} failed: {text}",
                    )
            self.due[entry.key] = self.monotonic() + delay

    def run(self, entry: Entry) -> float:
        """Run the due jobs of one database; seconds until it needs looking at again."""
        if entry.kind == "embedded":
            return self._run_embedded(entry)
        conn = connect(entry.kind, entry.target, entry.user)
        try:
            names = entry.names if entry.kind == "postgresql" else entry.names.without_owner()
            store = SqlStore(conn, Dialect(entry.kind), names, entry.database)
            now = self.clock()
            dues = [d for d in (run_update(store, now), run_purge(store, now)) if d is not None]
        finally:
            conn.close()
        return _delay(dues, now)

    def _run_embedded(self, entry: Entry) -> float:
        from engine.embedded.database import Database
        from engine.embedded.errors import DatabaseError

        try:
            db = Database(Path(entry.target), lock_wait=0.0, component=MANAGER_COMPONENT)
        except DatabaseError as exc:
            if exc.code == "GGS-SRC-0103":
                return BUSY_RETRY
            raise
        try:
            due = db.scheduler.run_due(db)
            now = db.clock.now()
        finally:
            db.close()
        return _delay([due] if due is not None else [], now)


def _delay(dues: list[datetime], now: datetime) -> float:
    if not dues:
        return IDLE_RECHECK
    return min(IDLE_RECHECK, max(0.0, (min(dues) - now).total_seconds()))
