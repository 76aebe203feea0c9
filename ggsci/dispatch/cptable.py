"""ADD / INFO / DELETE CHECKPOINTTABLE, in the database of the current DBLOGIN."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from engine.replicat import checkpoint_table as ct
from ggsci.commands import models as M
from ggsci.session import CommandFailed, Login, Session

GLOBALS_CHECKPOINTTABLE = re.compile(r"^\s*CHECKPOINTTABLE\s+(\S+)", re.IGNORECASE | re.MULTILINE)


def default_table(session: Session) -> str | None:
    """``CHECKPOINTTABLE`` of GLOBALS, if set."""
    try:
        text = session.home.globals_file.read_text(errors="replace")
    except OSError:
        return None
    m = GLOBALS_CHECKPOINTTABLE.search(text)
    return m.group(1) if m else None


@contextmanager
def connect(login: Login) -> Iterator[Any]:
    if login.kind == "sqlite":
        conn = sqlite3.connect(login.target)
        try:
            yield conn
        finally:
            conn.close()
    elif login.kind == "postgresql":
        from engine.targets.pgconnect import pg_connect

        with pg_connect(login.target, user=login.user, password=login.password) as pg:
            yield pg
    else:
        raise CommandFailed(
            "ERROR: The checkpoint table belongs in the Replicat target database; DBLOGIN to an "
            "SQLite file or a PostgreSQL URL, not to an embedded source database."
        )


def checkpoint_table(session: Session, cmd: M.CheckpointTableCommand) -> None:
    login = session.login
    if login is None:
        raise CommandFailed("ERROR: Not logged into database, use DBLOGIN.")
    name_text = cmd.table or default_table(session)
    if name_text is None:
        raise CommandFailed(
            "ERROR: No checkpoint table given and none set by CHECKPOINTTABLE in GLOBALS."
        )
    name = ct.TableName.parse(name_text)
    try:
        with connect(login) as conn:
            present = ct.exists(conn, name, login.kind)
            if cmd.action == "ADD":
                if present:
                    query, execute = ct.connection_io(conn)
                    kept = ct.upgrade(query, execute, name, login.kind, session.clock())
                    if kept is None:
                        raise CommandFailed(f"ERROR: Checkpoint table {name} already exists.")
                    conn.commit()
                    session.say(
                        f"Checkpoint table {name} upgraded: CREATE_TS now defaults to the "
                        f"table's creation time ({kept} checkpoint row(s) kept)."
                    )
                    return
                ct.create(conn, name, login.kind)
                session.say(f"Successfully created checkpoint table {name}.")
            elif cmd.action == "DELETE":
                if not present:
                    raise CommandFailed(f"ERROR: Checkpoint table {name} does not exist.")
                if not cmd.force and not session.confirm(
                    f"Are you sure you want to delete checkpoint table {name}? (y/n)"
                ):
                    return
                ct.drop(conn, name, login.kind)
                session.say(f"Successfully deleted checkpoint table {name}.")
            else:
                if not present:
                    raise CommandFailed(f"ERROR: Checkpoint table {name} does not exist.")
                rows = ct.row_count(conn, name, login.kind)
                session.say(f"Checkpoint table {name} exists ({rows} checkpoint row(s)).")
    except CommandFailed:
        raise
    except Exception as exc:  # sqlite3.Error / psycopg.Error, mapped to one line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CommandFailed(f"ERROR: {cmd.action} CHECKPOINTTABLE failed: {first}") from exc


HANDLERS: dict[type[M.Command], Any] = {M.CheckpointTableCommand: checkpoint_table}
