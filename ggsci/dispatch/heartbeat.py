"""ADD / ALTER / INFO / DELETE HEARTBEATTABLE, DELETE HEARTBEATENTRY and LAG ... GLOBAL [,
HISTORY [, FILE name.svg]] (charts: engine.pictures.lag, imported when drawn), in the
database of the current DBLOGIN: the embedded source (its tables through its sessions and DDL,
so they are in its redo; its scheduler gets the two jobs), an SQLite file or a PostgreSQL
database (the Manager runs their jobs). Replies are GGSCI's timestamped OGG-140xx lines.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from engine.heartbeat import registry
from engine.heartbeat.jobs import job_definitions
from engine.heartbeat.lag import history_lines, lag_lines, read_history, read_lag
from engine.heartbeat.names import (
    LAG_HISTORY_VIEW,
    LAG_VIEW,
    PURGE_JOB,
    UPDATE_JOB,
    HeartbeatNames,
    Role,
    from_globals,
)
from engine.heartbeat.schedule import connect
from engine.heartbeat.schema import Dialect
from engine.heartbeat.settings import Settings, utc_now
from engine.heartbeat.store import EmbeddedStore, SqlStore
from engine.runtime.events import GGSCI_COMPONENT, Event, Severity, log_event
from ggsci.commands import models as M
from ggsci.session import CommandFailed, Login, Session

NOT_LOGGED_IN = "ERROR: Not logged into database, use DBLOGIN."


def _login(session: Session) -> Login:
    if session.login is None:
        raise CommandFailed(NOT_LOGGED_IN)
    return session.login


def _names(session: Session, login: Login) -> HeartbeatNames:
    names = from_globals(session.home.globals_file, login.user)
    return names.without_owner() if login.kind == "sqlite" else names


@contextmanager
def _store(session: Session, write: bool) -> Iterator[SqlStore]:
    """The heartbeat objects of the DBLOGIN database; ``write``: through the embedded
    source's sessions (it takes the database, which one process has open at a time)."""
    login = _login(session)
    names = _names(session, login)
    if login.kind == "embedded" and write:
        from engine.embedded.database import Database

        db = Database(Path(login.target))
        try:
            yield EmbeddedStore(db, names)
        finally:
            db.close()
        return
    if login.kind == "embedded":
        path = Path(login.target) / "data.sqlite"
        conn: Any = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    else:
        conn = connect(login.kind, login.target, login.user, login.password)
    try:
        yield SqlStore(conn, Dialect(login.kind), names, login.database)
    finally:
        conn.close()


def _say(session: Session, code: str, text: str) -> None:
    """A GGSCI message line (``2026-03-14 09:26:53  INFO    OGG-14000  text``), also logged."""
    when = session.clock()
    session.say(f"{when:%Y-%m-%d %H:%M:%S}  {Severity.INFO.value:<7} {code}  {text}")
    with suppress(OSError):
        log_event(
            session.home.ggserr_log,
            Event(code, Severity.INFO, text, GGSCI_COMPONENT),
            session.clock,
        )


def _now(store: SqlStore) -> Any:
    return store.db.clock.now() if isinstance(store, EmbeddedStore) else utc_now()


def _entry(login: Login, store: SqlStore) -> registry.Entry:
    return registry.Entry(
        login.kind,
        login.target,
        store.database,
        store.names.owner,
        store.names.table,
        login.user if login.kind == "postgresql" else None,
    )


def _define_jobs(store: EmbeddedStore, settings: Settings) -> list[str]:
    """The embedded source's scheduler jobs for ``settings``; returns the jobs defined."""
    from engine.embedded.scheduler import JobDef, define_job, drop_job

    defined = []
    for name, (target, args) in job_definitions(store.names).items():
        if name == UPDATE_JOB and settings.target_only:
            drop_job(store.db.conn, name)
            continue
        define_job(store.db.conn, JobDef(name, target, args))
        defined.append(name)
    store.db.checkpoint()
    store.db.scheduler.reload(store.db.conn)
    return defined


# -- the commands ---------------------------------------------------------------------------


def _add(session: Session, store: SqlStore, cmd: M.HeartbeatTableCommand) -> None:
    names = store.names
    if store.exists(names.heartbeat) or store.exists(names.seed):
        raise CommandFailed(
            f'ERROR: OGG-14040 Heartbeat table ["{names.heartbeat}"] already exists; use ALTER '
            "HEARTBEATTABLE to change it or DELETE HEARTBEATTABLE to drop it."
        )
    o = cmd.options
    defaults = Settings()
    settings = Settings(
        frequency=defaults.frequency if o.frequency is None else o.frequency,
        retention_days=o.retention_time or defaults.retention_days,
        purge_days=o.purge_frequency or defaults.purge_days,
        target_only=bool(o.target_only),
        partitioned=o.partitioned,
        add_trandata=not o.noaddtrandata,
    )
    store.create(settings, _now(store))
    embedded = isinstance(store, EmbeddedStore)
    logging = embedded and settings.add_trandata and not settings.target_only
    say = _say
    say(session, "OGG-14001", f'Successfully created heartbeat seed table ["{names.seed}"].')
    if logging:
        say(
            session,
            "OGG-14032",
            f'Successfully added supplemental logging for heartbeat seed table ["{names.seed}"].',
        )
    say(session, "OGG-14000", f'Successfully created heartbeat table ["{names.heartbeat}"].')
    if logging:
        say(
            session,
            "OGG-14033",
            f'Successfully added supplemental logging for heartbeat table ["{names.heartbeat}"].',
        )
    say(
        session,
        "OGG-14016",
        f'Successfully created heartbeat history table ["{names.history}"].',
    )
    say(
        session, "OGG-14090", f'Successfully created heartbeat settings table ["{names.settings}"].'
    )
    say(session, "OGG-14023", f'Successfully created heartbeat lag view ["{LAG_VIEW}"].')
    say(
        session,
        "OGG-14024",
        f'Successfully created heartbeat lag history view ["{LAG_HISTORY_VIEW}"].',
    )
    say(
        session,
        "OGG-14003",
        f"Successfully populated heartbeat seed table with [{store.database}].",
    )
    if isinstance(store, EmbeddedStore):
        jobs = _define_jobs(store, settings)
        if UPDATE_JOB in jobs:
            say(
                session,
                "OGG-14005",
                f'Successfully created scheduler job ["{UPDATE_JOB}"] to update the heartbeat '
                "tables.",
            )
        say(
            session,
            "OGG-14018",
            f'Successfully created scheduler job ["{PURGE_JOB}"] to purge the heartbeat history '
            "table.",
        )
    else:
        jobs_text = PURGE_JOB if settings.target_only else f"{UPDATE_JOB} and {PURGE_JOB}"
        say(
            session,
            "OGG-14091",
            f"The Manager runs {jobs_text} for database [{store.database}] (it has no scheduler).",
        )
    registry.put(session.home, _entry(_login(session), store))


def _alter(session: Session, store: SqlStore, cmd: M.HeartbeatTableCommand) -> None:
    settings = store.settings()
    if settings is None:
        raise CommandFailed(_missing(store))
    o = cmd.options
    new = settings.altered(o.frequency, o.retention_time, o.purge_frequency, o.target_only)
    store.save_settings(new)
    changes = (
        (o.frequency, "OGG-14010", f"heartbeat update frequency to [{new.frequency}] seconds"),
        (o.retention_time, "OGG-14011", f"heartbeat retention time to [{new.retention_days}] days"),
        (o.purge_frequency, "OGG-14012", f"heartbeat purge frequency to [{new.purge_days}] days"),
        (
            o.target_only,
            "OGG-14013",
            "heartbeat table to "
            + ("TARGETONLY (no update job)" if new.target_only else "NOTARGETONLY"),
        ),
    )
    for given, code, what in changes:
        if given is not None:
            _say(session, code, f"Successfully altered {what}.")
    if isinstance(store, EmbeddedStore):
        _define_jobs(store, new)
    registry.put(session.home, _entry(_login(session), store))


def _missing(store: SqlStore) -> str:
    return f"ERROR: HEARTBEAT table {store.names.shown(store.names.heartbeat)} does not exist."


def _info(session: Session, store: SqlStore) -> None:
    present = store.present()
    if not any(present.values()):
        raise CommandFailed(_missing(store))
    names = store.names
    for role in (Role.HEARTBEAT, Role.SEED, Role.HISTORY):
        state = "exists" if present[role] else "does not exist"
        session.say(f"HEARTBEAT table {names.shown(names.name(role))} {state}.")
    settings = store.settings()
    if settings is not None:
        session.say(
            f"Frequency interval: {settings.frequency} seconds.",
            f"Purge frequency interval: {settings.purge_days} days.",
            f"Retention time: {settings.retention_days} days.",
        )
        if settings.target_only:
            session.say("Target only: yes (no update job).")


def _delete(session: Session, store: SqlStore) -> None:
    names = store.names
    present = store.present()
    if not any(present.values()):
        raise CommandFailed(_missing(store))
    if isinstance(store, EmbeddedStore):
        from engine.embedded.scheduler import drop_job

        for job, code in ((UPDATE_JOB, "OGG-14006"), (PURGE_JOB, "OGG-14019")):
            if drop_job(store.db.conn, job):
                _say(session, code, f'Successfully deleted scheduler job ["{job}"].')
        store.db.checkpoint()
        store.db.scheduler.reload(store.db.conn)
    store.drop()
    _say(session, "OGG-14025", f'Successfully dropped heartbeat lag view ["{LAG_VIEW}"].')
    _say(
        session,
        "OGG-14026",
        f'Successfully dropped heartbeat lag history view ["{LAG_HISTORY_VIEW}"].',
    )
    dropped = {
        Role.HISTORY: ("OGG-14027", "heartbeat history table"),
        Role.HEARTBEAT: ("OGG-14028", "heartbeat table"),
        Role.SEED: ("OGG-14029", "heartbeat seed table"),
        Role.SETTINGS: ("OGG-14030", "heartbeat settings table"),
    }
    for role, (code, what) in dropped.items():
        if present[role]:
            _say(session, code, f'Successfully dropped {what} ["{names.name(role)}"].')
    login = _login(session)
    registry.remove(session.home, login.kind, login.target)


def _run(session: Session, action: str, write: bool, body: Any) -> None:
    """Open the store and run ``body``, with every database failure as one line."""
    from engine.embedded.errors import STATEMENT_ERRORS

    try:
        with _store(session, write) as store:
            body(store)
    except CommandFailed:
        raise
    except STATEMENT_ERRORS as exc:
        raise CommandFailed(f"ERROR: {action} failed: {exc}") from exc
    except Exception as exc:  # sqlite3.Error, psycopg.Error: mapped to one line
        text = str(exc).strip()
        first = text.splitlines()[0] if text else type(exc).__name__
        raise CommandFailed(f"ERROR: {action} failed: {first}") from exc


def heartbeat_table(session: Session, cmd: M.HeartbeatTableCommand) -> None:
    _login(session)
    action = f"{cmd.action} HEARTBEATTABLE"
    bodies = {
        "ADD": lambda store: _add(session, store, cmd),
        "ALTER": lambda store: _alter(session, store, cmd),
        "DELETE": lambda store: _delete(session, store),
        "INFO": lambda store: _info(session, store),
    }
    _run(session, action, cmd.action != "INFO", bodies[cmd.action])


def delete_entry(session: Session, cmd: M.DeleteHeartbeatEntry) -> None:
    _login(session)
    wildcard = any(c in cmd.pattern for c in "*?")
    if (
        wildcard
        and not cmd.force
        and not session.confirm(
            f"Are you sure you want to delete the heartbeat entries of [{cmd.pattern}]? (y/n)"
        )
    ):
        return

    def body(store: SqlStore) -> None:
        if not store.exists(store.names.heartbeat):
            raise CommandFailed(_missing(store))
        n = store.delete_entries(cmd.pattern)
        _say(
            session,
            "OGG-14014",
            f"Successfully deleted [{n}] heartbeat entries of [{cmd.pattern}].",
        )

    _run(session, "DELETE HEARTBEATENTRY", True, body)


def _charts(session: Session, store: SqlStore, cmd: M.LagGroup) -> None:
    """HISTORY's charts per path and stage (sparklines); ``FILE x.svg``: the same as SVG."""
    from engine.pictures import lag as pic  # drawn on request only, never at start-up

    histories = pic.read_samples(store, cmd.pattern)
    session.say(*pic.chart_lines(histories))
    if cmd.file is None:
        return
    path = Path(cmd.file)
    try:
        pic.to_svg(histories).write(path if path.is_absolute() else session.home.root / path)
    except OSError as exc:
        raise CommandFailed(f"ERROR: cannot write {cmd.file}: {exc.strerror}.") from exc
    session.say(f"Lag chart written to {cmd.file}.")


def lag_global(session: Session, cmd: M.LagGroup) -> None:
    """LAG [kind] group, GLOBAL [, HISTORY]: from GG_LAG / GG_LAG_HISTORY of the DBLOGIN
    database (the group need not be defined here: a path may come from another home)."""
    _login(session)
    if cmd.file is not None and not cmd.file.lower().endswith(".svg"):
        raise CommandFailed(f"ERROR: FILE {cmd.file}: the chart is written as SVG (name.svg).")

    def body(store: SqlStore) -> None:
        if not store.exists(LAG_VIEW):
            raise CommandFailed(
                f"ERROR: Database {store.database} has no heartbeat lag view {LAG_VIEW}; "
                "run ADD HEARTBEATTABLE there (DBLOGIN to the database Replicat writes to)."
            )
        rows = read_lag(store, cmd.pattern)
        if not rows:
            session.say(f"No heartbeat lag information for [{cmd.pattern}] in {store.database}.")
            return
        session.say(*lag_lines(rows))
        if cmd.history:
            session.say(*history_lines(read_history(store, cmd.pattern)))
            _charts(session, store, cmd)

    _run(session, "LAG", False, body)


HANDLERS: dict[type[M.Command], Any] = {
    M.HeartbeatTableCommand: heartbeat_table,
    M.DeleteHeartbeatEntry: delete_entry,
}
