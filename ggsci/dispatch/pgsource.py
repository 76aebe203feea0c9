"""REGISTER / UNREGISTER EXTRACT and the TRANDATA commands after a PostgreSQL DBLOGIN
(issue 25). With another login (or none) these commands stay what they were: answered as
not offered (:data:`ggsci.commands.grammar.NOT_OFFERED`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from engine.postgres import slot as pgslot
from engine.postgres import trandata as td
from engine.postgres.lsn import format_lsn
from engine.runtime.events import GGSCI_COMPONENT, Event, Severity, log_event
from ggsci.commands import models as M
from ggsci.session import CommandFailed, Session

_TRANDATA = (
    "ADD TRANDATA",
    "DELETE TRANDATA",
    "INFO TRANDATA",
    "ADD SCHEMATRANDATA",
    "DELETE SCHEMATRANDATA",
    "INFO SCHEMATRANDATA",
)


def handled(session: Session, cmd: M.NotOffered) -> bool:
    login = session.login
    if login is None or login.kind != "postgresql":
        return False
    if cmd.command in ("REGISTER EXTRACT", "UNREGISTER EXTRACT"):
        _register(session, cmd)
        return True
    if cmd.command in _TRANDATA:
        _trandata(session, cmd)
        return True
    return False


@contextmanager
def _connection(session: Session) -> Iterator[Any]:
    import psycopg

    from engine.targets.pgconnect import pg_connect

    login = session.login
    assert login is not None
    try:
        conn = pg_connect(
            login.target,
            user=login.user,
            password=login.password,
            autocommit=True,
            connect_timeout=10,
        )
    except psycopg.Error as exc:
        raise CommandFailed(f"ERROR: Cannot connect to {login.database}: {_first(exc)}") from exc
    try:
        yield conn
    finally:
        conn.close()


def _say(session: Session, code: str, severity: Severity, text: str) -> None:
    when = session.clock()
    session.say(f"{when:%Y-%m-%d %H:%M:%S}  {severity.value:<7} {code}  {text}")
    with suppress(OSError):
        log_event(
            session.home.ggserr_log, Event(code, severity, text, GGSCI_COMPONENT), session.clock
        )


def _register(session: Session, cmd: M.NotOffered) -> None:
    verb = cmd.command.split()[0]
    words = cmd.rest.split()
    if not words or len(words) > 2 or (len(words) == 2 and words[1].upper() != "DATABASE"):
        raise CommandFailed(
            f"ERROR: {verb} EXTRACT takes a group name and DATABASE "
            f"({verb} EXTRACT group DATABASE)."
        )
    group = words[0].upper()
    from engine.home.names import valid_group_name

    if not valid_group_name(group):
        raise CommandFailed(f"ERROR: Invalid group name {words[0]}.")
    with _connection(session) as conn:
        try:
            if verb == "REGISTER":
                reg = pgslot.register(conn, session.home, group, session.clock())
                _say(
                    session,
                    "OGG-25355",
                    Severity.INFO,
                    f"Successfully created replication slot '{reg.slot}' for Extract group "
                    f"'{group}' in database '{reg.database}' (at LSN "
                    f"{format_lsn(reg.created_lsn)}).",
                )
            else:
                reg = pgslot.unregister(conn, session.home, group)
                _say(
                    session,
                    "OGG-25359",
                    Severity.INFO,
                    f"Successfully dropped replication slot '{reg.slot}' for Extract group "
                    f"'{group}' in database '{reg.database}'.",
                )
        except pgslot.SlotError as exc:
            raise CommandFailed(f"ERROR: {exc.code}  {exc.text}") from exc


def _trandata(session: Session, cmd: M.NotOffered) -> None:
    verb, what = cmd.command.split()
    words = cmd.rest.replace(",", " ").split()
    allcols = any(w.upper() == "ALLCOLS" for w in words[1:])
    extra = [w for w in words[1:] if w.upper() != "ALLCOLS"]
    if not words or extra or (allcols and verb != "ADD"):
        shape = "schema" if what == "SCHEMATRANDATA" else "schema.table"
        raise CommandFailed(
            f"ERROR: {verb} {what} takes {shape}{' [ALLCOLS]' if verb == 'ADD' else ''}."
        )
    spec = words[0]
    with _connection(session) as conn:
        try:
            if what == "SCHEMATRANDATA":
                if verb == "ADD":
                    lines = td.add_schematrandata(conn, spec, allcols)
                elif verb == "DELETE":
                    lines = td.delete_trandata(conn, f"{spec}.*")
                else:
                    lines = td.info_trandata(conn, f"{spec}.*")
            elif verb == "ADD":
                lines = td.add_trandata(conn, spec, allcols)
            elif verb == "DELETE":
                lines = td.delete_trandata(conn, spec)
            else:
                lines = td.info_trandata(conn, spec)
        except td.TrandataError as exc:
            raise CommandFailed(f"ERROR: {exc}") from exc
    session.say(*lines)


def _first(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
