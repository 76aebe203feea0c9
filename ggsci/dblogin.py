"""DBLOGIN: which database a login names, and checking that it answers.

A database is named after ``@`` in the user (``USERID gg@src1``), by ``SOURCEDB``, or by the
alias's user in the credential store. It resolves, in this order, to:

1. a PostgreSQL URL (``postgresql://host/db``) or libpq connection string
   (``host=h port=p dbname=db``): connected with psycopg;
2. an SQLite file (an existing file, or a name ending ``.db``/``.sqlite``/``.sqlite3``;
   relative to the home): opened read-only;
3. an embedded source database of the home (``dirdb/<name>/``, case-insensitive).

With no database named and exactly one embedded database in ``dirdb/``, that one is used.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import urlparse

from engine.home.layout import Home
from params import textfile

SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")


class LoginError(ValueError):
    """The database cannot be found or refuses the login; one line. ``wants_password``: the
    database asked for a password none was given for (libpq's ``no password supplied``)."""

    def __init__(self, text: str, *, wants_password: bool = False) -> None:
        super().__init__(text)
        self.wants_password = wants_password


#: libpq's line when the server asks for a password and the connection has none.
NO_PASSWORD: Final = "no password supplied"


@dataclass(frozen=True)
class Database:
    kind: str  # "embedded" | "sqlite" | "postgresql"
    target: str
    name: str


def split_user(userid: str) -> tuple[str, str | None]:
    user, sep, db = userid.partition("@")
    return user, (db if sep else None)


def is_libpq_dsn(spec: str) -> bool:
    """A libpq key=value connection string (``host=/tmp port=5432 dbname=src``)."""
    return bool(re.match(r"^\s*[a-z_]+\s*=", spec))


def dsn_dbname(spec: str) -> str:
    m = re.search(r"(?:^|\s)dbname\s*=\s*'?([^'\s]+)", spec)
    return m.group(1) if m else "postgres"


def resolve_database(home: Home, spec: str | None) -> Database:
    if spec is None:
        found = sorted(p for p in home.dirdb.glob("*") if p.is_dir()) if home.dirdb.is_dir() else []
        if len(found) == 1:
            return Database("embedded", str(found[0]), found[0].name)
        if not found:
            raise LoginError(
                "No database given and no embedded database in dirdb/; "
                "use user@database or SOURCEDB."
            )
        names = ", ".join(p.name for p in found)
        raise LoginError(f"Several embedded databases ({names}); name one with user@database.")
    if spec.startswith(("postgresql://", "postgres://")):
        name = urlparse(spec).path.lstrip("/") or "postgres"
        return Database("postgresql", spec, name)
    if is_libpq_dsn(spec):  # host=... port=... dbname=...
        return Database("postgresql", spec, dsn_dbname(spec))
    path = Path(spec).expanduser()
    path = path if path.is_absolute() else home.root / path
    if textfile.is_file(path) or path.suffix.lower() in SQLITE_SUFFIXES:
        if not textfile.is_file(path):
            raise LoginError(f"SQLite database file {spec} does not exist.")
        return Database("sqlite", str(path), path.stem)
    if home.dirdb.is_dir():
        for candidate in home.dirdb.iterdir():
            if candidate.is_dir() and candidate.name.lower() == spec.lower():
                return Database("embedded", str(candidate), candidate.name)
    raise LoginError(
        f"Database {spec} not found: not an embedded database in dirdb/, "
        "an SQLite file or a postgresql:// URL."
    )


def check_login(db: Database, user: str, password: str | None, os_auth: bool = False) -> None:
    """Connect once to prove the login works; raises LoginError with the database's reason.

    An embedded database checks the user and password against its users (ORA-01017 when
    they do not match); ``os_auth`` (SOURCEDB alone, or USERID /) logs in as the operating
    system user who owns the home, as Oracle's operating-system authentication does."""
    if db.kind == "embedded":
        from engine.embedded import users
        from engine.embedded.errors import DatabaseError
        from engine.embedded.ownfiles import check_database_files

        try:  # its users are in data.sqlite: believed only when the home's owner keeps it
            check_database_files(Path(db.target))
        except DatabaseError as exc:
            raise LoginError(str(exc)) from None
        if not os_auth and not users.check_login(Path(db.target), user, password):
            raise LoginError(users.INVALID_LOGIN)
    elif db.kind == "sqlite":
        try:
            with sqlite3.connect(f"file:{db.target}?mode=ro", uri=True) as conn:
                conn.execute("select count(*) from sqlite_master").fetchone()
        except sqlite3.Error as exc:
            raise LoginError(f"Cannot open SQLite database {db.name}: {exc}") from exc
    elif db.kind == "postgresql":
        from engine.targets.pgconnect import pg_connect
        from params.masking import mask_conn_error

        try:
            with pg_connect(db.target, user=user, password=password, connect_timeout=5) as conn:
                conn.execute("select 1")
        except Exception as exc:  # psycopg.Error and its many subclasses; mapped here
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            line = f"Cannot log in to {db.name}: {first}"
            wants = password is None and NO_PASSWORD in first
            raise LoginError(
                mask_conn_error(line, db.target, password), wants_password=wants
            ) from None
