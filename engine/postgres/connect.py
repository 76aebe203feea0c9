"""Which PostgreSQL database an Extract's parameter file names, and the connection to it.

``SOURCEDB postgresql://...`` (or a quoted libpq string ``SOURCEDB 'host=... dbname=...'``)
names it; a password comes from the URL, ``.pgpass`` or a trust/peer login. ``USERIDALIAS a``
takes user, database and password from the credential store (the alias's user is
``user@postgresql://...``), as DBLOGIN USERIDALIAS does; ``USERID user@postgresql://...``
gives the user. Anything else is not a PostgreSQL source (the embedded database's Extract
runs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.home.credstore import CredentialStore, CredentialStoreError
from engine.home.layout import Home
from params.models import ParamFile
from params.postgres_rules import is_postgres_spec


@dataclass(frozen=True)
class PgSource:
    target: str  # URL or libpq string
    user: str | None = None
    password: str | None = field(default=None, repr=False)


is_postgres = is_postgres_spec


class SourceLoginError(Exception):
    """The alias cannot be read; one line."""


def pg_source(home: Home, model: ParamFile) -> PgSource | None:
    login = model.login
    if is_postgres(login.sourcedb):
        assert login.sourcedb is not None
        user = login.userid.partition("@")[0] if login.userid else None
        return PgSource(login.sourcedb, user or None, _alias_password(home, model))
    if login.alias:
        try:
            cred = CredentialStore(home).lookup(login.alias, login.domain)
        except (CredentialStoreError, ValueError):
            return None  # not known to be PostgreSQL: the redo Extract reports its login
        user, _, db = cred.user.partition("@")
        if is_postgres(db):
            return PgSource(db, user or None, cred.password)
        return None
    if login.userid and "@" in login.userid:
        user, _, db = login.userid.partition("@")
        if is_postgres(db):
            return PgSource(db, user or None)
    return None


def _alias_password(home: Home, model: ParamFile) -> str | None:
    if not model.login.alias:
        return None
    try:
        return CredentialStore(home).lookup(model.login.alias, model.login.domain).password
    except (CredentialStoreError, ValueError) as exc:
        raise SourceLoginError(str(exc)) from exc


def connect(src: PgSource) -> Any:
    from engine.targets.pgconnect import pg_connect

    return pg_connect(
        src.target, user=src.user, password=src.password, autocommit=True, connect_timeout=10
    )
