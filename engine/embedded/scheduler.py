"""The embedded database's job scheduler: its stand-in for Oracle's DBMS_SCHEDULER.

A job is a row of the internal table ``_gg_jobs`` in ``data.sqlite`` (not in the dictionary, so
defining one writes no redo): a name, a target ``"package.module:factory"`` and JSON arguments.
``factory(args)`` builds a :class:`JobRunner` whose ``run_due(db)`` does the job's work when it is
due (through sessions, so its changes are in the redo) and returns when it is next due, in the
database's own time (redo time, the injected clock).

Who runs jobs: one process has the database open at a time, so whoever has it does. The
database calls :meth:`Scheduler.tick` at the end of every transaction (a comparison with the next
due time, nothing more, until something is due); the Manager opens an idle database when a job is
due and calls :meth:`Scheduler.run_due`. The heartbeat jobs (``engine.heartbeat.jobs``) are the
only jobs today. A failing job does not fail the transaction that happened to trigger it: its
error is kept (``last_error``) and it is tried again ``RETRY_SECONDS`` later.
"""

from __future__ import annotations

import importlib
import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from engine.embedded.errors import STATEMENT_ERRORS

JOBS_TABLE = "_gg_jobs"
JOBS_VIEW = "DBA_SCHEDULER_JOBS"
JOBS_VIEW_COLUMNS = (
    "JOB_NAME", "ENABLED", "REPEAT_INTERVAL", "START_DATE", "LAST_START_DATE", "NEXT_RUN_DATE",
)  # fmt: skip
"""What ``SELECT ... FROM DBA_SCHEDULER_JOBS`` shows of the jobs (seed 001's check)."""
RETRY_SECONDS = 10.0
NEVER = datetime.max


@dataclass(frozen=True)
class JobDef:
    name: str
    target: str
    args: dict[str, Any] = field(default_factory=dict)


class JobRunner(Protocol):
    def run_due(self, db: Any) -> datetime | None:
        """Run if due; return when next due (None: not until the job is changed)."""
        ...


def load_jobs(conn: sqlite3.Connection) -> list[JobDef]:
    try:
        rows = conn.execute(f"SELECT name, target, args FROM {JOBS_TABLE} ORDER BY name").fetchall()
    except sqlite3.OperationalError:  # a database created before jobs existed has no table
        return []
    return [JobDef(str(n), str(t), json.loads(a or "{}")) for n, t, a in rows]


def define_job(conn: sqlite3.Connection, job: JobDef) -> None:
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {JOBS_TABLE} "
        "(name TEXT PRIMARY KEY, target TEXT NOT NULL, args TEXT)"
    )
    conn.execute(
        f"INSERT OR REPLACE INTO {JOBS_TABLE} VALUES (?, ?, ?)",
        (job.name, job.target, json.dumps(job.args, sort_keys=True)),
    )


def drop_job(conn: sqlite3.Connection, name: str) -> bool:
    try:
        return conn.execute(f"DELETE FROM {JOBS_TABLE} WHERE name = ?", (name,)).rowcount > 0
    except sqlite3.OperationalError:
        return False


def _factory(target: str) -> Callable[[dict[str, Any]], JobRunner]:
    module, _, attr = target.partition(":")
    factory: Callable[[dict[str, Any]], JobRunner] = getattr(importlib.import_module(module), attr)
    return factory


class Scheduler:
    """The jobs of one open database and when the next one is due."""

    def __init__(self, jobs: list[JobDef]) -> None:
        self.jobs = jobs
        self.next_due: datetime | None = None  # None: not known yet, check at the next tick
        self.last_error: str | None = None
        self._runners: dict[str, JobRunner] = {}
        self._busy = False

    def reload(self, conn: sqlite3.Connection) -> None:
        """The job definitions or their settings changed (in this process)."""
        self.jobs = load_jobs(conn)
        self._runners.clear()
        self.next_due = None

    def view_rows(self, db: Any) -> list[tuple[str | None, ...]]:
        """DBA_SCHEDULER_JOBS: a row per job whose runner describes itself (``describe(db)``:
        the columns after JOB_NAME, as text)."""
        out: list[tuple[str | None, ...]] = []
        for job in self.jobs:
            runner = self._runners.get(job.name)
            if runner is None:
                runner = self._runners[job.name] = _factory(job.target)(job.args)
            describe = getattr(runner, "describe", None)
            if describe is not None:
                out.append((job.name, *describe(db)))
        return out

    def tick(self, db: Any) -> None:
        """End of a transaction: run what is due (cheap when nothing is)."""
        if not self.jobs or self._busy:
            return
        if self.next_due is not None and db.clock.now() < self.next_due:
            return
        self.run_due(db)

    def run_due(self, db: Any) -> datetime | None:
        """Run every due job now; return when the next one is due (None: never)."""
        if self._busy:
            return self.next_due
        self._busy = True
        due: list[datetime] = []
        try:
            for job in self.jobs:
                try:
                    runner = self._runners.get(job.name)
                    if runner is None:
                        runner = self._runners[job.name] = _factory(job.target)(job.args)
                    when = runner.run_due(db)
                    self.last_error = None
                except (*STATEMENT_ERRORS, sqlite3.Error, ImportError, AttributeError) as exc:
                    self.last_error = f"{job.name}: {exc}"
                    when = db.clock.now() + timedelta(seconds=RETRY_SECONDS)
                if when is not None:
                    due.append(when)
        finally:
            self._busy = False
        self.next_due = min(due) if due else NEVER
        return None if self.next_due is NEVER else self.next_due
