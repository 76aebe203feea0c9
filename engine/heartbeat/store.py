"""The heartbeat objects of one database: create, drop, settings, and the jobs' statements.

:class:`SqlStore` works on a DB-API connection: SQLite and PostgreSQL targets, and (reading
only) the embedded source's SQLite storage. :class:`EmbeddedStore` writes the embedded source
through its own sessions and DDL, so the seed row's changes are in its redo for Extract to
capture, exactly like an application's changes; its views are SQLite views in its storage
(the embedded SQL has no views).

The caller opens and closes the connection (or the database); each method that changes
something commits.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from engine.heartbeat.names import LAG_HISTORY_VIEW, LAG_VIEW, HeartbeatNames, Role
from engine.heartbeat.schema import (
    COLUMNS,
    KEYS,
    TABLE_ORDER,
    Dialect,
    Kind,
    create_statements,
    drop_views,
    lag_history_view,
    lag_view,
    oracle_ddl,
)
from engine.heartbeat.settings import Settings, stamp, to_datetime

if TYPE_CHECKING:
    from engine.embedded.database import Database

NAME_COLUMNS = ("INCOMING_EXTRACT", "INCOMING_REPLICAT", "OUTGOING_EXTRACT", "OUTGOING_REPLICAT")
PATH_COLUMNS = ("INCOMING_ROUTING_PATH", "OUTGOING_ROUTING_PATH")


def like_pattern(group: str) -> str:
    """A group name with GGSCI wildcards (``*``, ``?``) as a LIKE pattern (escape ``\\``)."""
    out = []
    for ch in group.upper():
        if ch in "%_\\":
            out.append("\\" + ch)
        elif ch == "*":
            out.append("%")
        elif ch == "?":
            out.append("_")
        else:
            out.append(ch)
    return "".join(out)


class SqlStore:
    """Heartbeat objects through a DB-API connection (``dialect`` says which database)."""

    def __init__(self, conn: Any, dialect: Dialect, names: HeartbeatNames, database: str) -> None:
        self.conn = conn
        self.dialect = dialect
        self.names = names
        self.database = database.upper()

    # -- helpers ------------------------------------------------------------------------
    def table(self, role: Role) -> str:
        return self.dialect.table(self.names, self.names.name(role))

    def sql(self, text: str) -> str:
        """``?`` placeholders in the dialect's spelling."""
        return text.replace("?", self.dialect.placeholder)

    def rows(self, text: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cur = self.conn.cursor()
        cur.execute(self.sql(text), tuple(params))
        return [tuple(r) for r in cur.fetchall()]

    def execute(self, text: str, params: Sequence[Any] = ()) -> int:
        cur = self.conn.cursor()
        cur.execute(self.sql(text), tuple(params))
        return int(cur.rowcount)

    def ts(self, moment: datetime | None) -> Any:
        """A timestamp parameter: text for SQLite storage, a datetime for PostgreSQL."""
        if moment is None or self.dialect.name == "postgresql":
            return moment
        return stamp(moment)

    # -- what exists --------------------------------------------------------------------
    def exists(self, name: str) -> bool:
        if self.dialect.name == "postgresql":
            found = self.rows(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = ? "
                "AND table_name = ?",
                ((self.names.owner or "public").lower(), name.lower()),
            )
        else:
            stored = self.dialect.table(self.names, name).strip('"')
            found = self.rows(
                "SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'view') "
                "AND lower(name) = lower(?)",
                (stored,),
            )
        return bool(found and found[0][0])

    def present(self) -> dict[Role, bool]:
        return {role: self.exists(self.names.name(role)) for role in TABLE_ORDER}

    def any_present(self) -> bool:
        return any(self.present().values()) or self.exists(LAG_VIEW)

    # -- creating and dropping -------------------------------------------------------------
    def create(self, settings: Settings, now: datetime) -> None:
        for statement in create_statements(self.dialect, self.names):
            self.execute(statement)
        self._insert(Role.SEED, self._seed_row(now))
        self._insert(Role.SETTINGS, self._settings_row(settings, now))
        self.conn.commit()

    def _seed_row(self, now: datetime) -> dict[str, Any]:
        return {"LOCAL_DATABASE": self.database, "HEARTBEAT_TIMESTAMP": now}

    def _settings_row(self, settings: Settings, now: datetime) -> dict[str, Any]:
        s = replace(settings, created=now, last_purge=now)
        return dict(zip((c for c, _ in COLUMNS[Role.SETTINGS]), s.row(), strict=True))

    def _insert(self, role: Role, values: dict[str, Any]) -> None:
        cols = [c for c, _ in COLUMNS[role]]
        kinds = dict(COLUMNS[role])
        params = [self.ts(values.get(c)) if kinds[c] is Kind.TS else values.get(c) for c in cols]
        marks = ", ".join("?" for _ in cols)
        self.execute(f"INSERT INTO {self.table(role)} ({', '.join(cols)}) VALUES ({marks})", params)

    def drop(self) -> None:
        for statement in drop_views(self.dialect, self.names):
            self.execute(statement)
        for role in reversed(TABLE_ORDER):
            if self.exists(self.names.name(role)):
                self.execute(f"DROP TABLE {self.table(role)}")
        self.conn.commit()

    # -- settings ---------------------------------------------------------------------------
    def settings(self) -> Settings | None:
        if not self.exists(self.names.settings):
            return None
        cols = ", ".join(c for c, _ in COLUMNS[Role.SETTINGS])
        rows = self.rows(f"SELECT {cols} FROM {self.table(Role.SETTINGS)}")
        return Settings.from_row(rows[0]) if rows else None

    def save_settings(self, settings: Settings) -> None:
        cols = [c for c, _ in COLUMNS[Role.SETTINGS]]
        values = [self.ts(v) if isinstance(v, datetime) or v is None else v for v in settings.row()]
        sets = ", ".join(f"{c} = ?" for c in cols)
        self.execute(f"UPDATE {self.table(Role.SETTINGS)} SET {sets}", values)
        self.conn.commit()

    def last_heartbeat(self) -> datetime | None:
        """The seed row's HEARTBEAT_TIMESTAMP: when the update job last ran."""
        rows = self.rows(f"SELECT max(HEARTBEAT_TIMESTAMP) FROM {self.table(Role.SEED)}")
        return to_datetime(rows[0][0]) if rows else None

    # -- the jobs ---------------------------------------------------------------------------
    def update(self, now: datetime) -> int:
        """GG_UPDATE_HB_TAB: the seed row's HEARTBEAT_TIMESTAMP becomes ``now``."""
        n = self.execute(
            f"UPDATE {self.table(Role.SEED)} SET HEARTBEAT_TIMESTAMP = ?", [self.ts(now)]
        )
        self.conn.commit()
        return n

    def purge(self, now: datetime, settings: Settings) -> int:
        """GG_PURGE_HB_TAB: history older than RETENTION_TIME days goes; LAST_PURGE_TS = now."""
        cutoff = now - timedelta(days=settings.retention_days)
        n = self.execute(
            f"DELETE FROM {self.table(Role.HISTORY)} WHERE HEARTBEAT_RECEIVED_TS < ?",
            [self.ts(cutoff)],
        )
        self.execute(f"UPDATE {self.table(Role.SETTINGS)} SET LAST_PURGE_TS = ?", [self.ts(now)])
        self.conn.commit()
        return n

    def entry_filter(self, group: str) -> tuple[str, list[str]]:
        """WHERE text and parameters for rows whose paths name ``group`` (wildcards)."""
        like = like_pattern(group)
        terms = [f"{c} LIKE ? ESCAPE '\\'" for c in NAME_COLUMNS]
        terms += [f"(',' || {c} || ',') LIKE ? ESCAPE '\\'" for c in PATH_COLUMNS]
        params = [like] * len(NAME_COLUMNS) + [f"%,{like},%"] * len(PATH_COLUMNS)
        return " OR ".join(terms), params

    def delete_entries(self, group: str) -> int:
        """DELETE HEARTBEATENTRY: GG_HEARTBEAT rows whose incoming or outgoing path names
        ``group``."""
        where, params = self.entry_filter(group)
        n = self.execute(f"DELETE FROM {self.table(Role.HEARTBEAT)} WHERE {where}", params)
        self.conn.commit()
        return n


class EmbeddedStore(SqlStore):
    """The embedded source: reads through its SQLite storage, writes through its sessions
    (redo for every change) and DDL; views are SQLite views in its storage."""

    SESSION = "GG_HEARTBEAT_JOB"

    def __init__(self, db: Database, names: HeartbeatNames) -> None:
        super().__init__(db.conn, Dialect("embedded"), names, db.root.name)
        self.db = db

    @property
    def owner(self) -> str:
        return (self.names.owner or "GG").upper()

    def _session(self) -> Any:
        return self.db.session(self.SESSION, username=self.owner)

    def create(self, settings: Settings, now: datetime) -> None:
        from engine.embedded.dictionary import ColumnDef

        session = self._session()
        for role in TABLE_ORDER:
            cols = [_column_def(ColumnDef, c, k, c in KEYS.get(role, ())) for c, k in COLUMNS[role]]
            self.db.create_table(
                session,
                self.owner,
                self.names.name(role).upper(),
                cols,
                oracle_ddl(self.names, role),
                key=KEYS.get(role, ()),
            )
        for statement in (
            lag_view(self.dialect, self.names),
            lag_history_view(self.dialect, self.names),
        ):
            self.db.conn.execute(statement)
        self._insert_row(Role.SEED, self._seed_row(now))
        self._insert_row(Role.SETTINGS, self._settings_row(settings, now))
        session.commit(self.db)
        self.db.checkpoint()

    def _insert_row(self, role: Role, values: dict[str, Any]) -> None:
        from engine.embedded import dml

        table = self.db.table(self.owner, self.names.name(role).upper())
        row = tuple(_value(c.type, values.get(c.name)) for c in table.columns)
        dml.insert(self._session(), self.db, table, [row], array=False)

    def drop(self) -> None:
        for statement in drop_views(self.dialect, self.names):
            self.db.conn.execute(statement)
        session = self._session()
        for role in reversed(TABLE_ORDER):
            key = f"{self.owner}.{self.names.name(role).upper()}"
            table = self.db.dictionary.tables.get(key)
            if table is not None:
                self.db.drop_table(session, table, f"DROP TABLE {key}")
        self.db.checkpoint()

    def exists(self, name: str) -> bool:
        if name.upper() in (LAG_VIEW, LAG_HISTORY_VIEW):
            return super().exists(name)
        return f"{self.owner}.{name.upper()}" in self.db.dictionary.tables

    def _update(
        self, role: Role, values: dict[str, str], where: str = "", params: Sequence[Any] = ()
    ) -> int:
        """UPDATE through a session: ``values`` are column -> SQLite expression with ``?``;
        every other non-key column is written too (as itself), so the redo and the captured
        record carry the whole row, as supplemental logging of all columns would."""
        from engine.embedded import dml

        table = self.db.table(self.owner, self.names.name(role).upper())
        key = set(KEYS.get(role, ()))
        idx = [i for i, c in enumerate(table.columns) if c.name not in key]
        exprs = [values.get(table.columns[i].name, f'"{table.columns[i].name}"') for i in idx]
        session = self._session()
        n = dml.update(session, self.db, table, idx, exprs, where, params)
        session.commit(self.db)
        self.db.logs.flush()
        return n

    def save_settings(self, settings: Settings) -> None:
        cols = [c for c, _ in COLUMNS[Role.SETTINGS]]
        values = [self.ts(v) if isinstance(v, datetime) or v is None else v for v in settings.row()]
        self._update(Role.SETTINGS, {c: "?" for c in cols}, "", values)
        self.db.checkpoint()

    def update(self, now: datetime) -> int:
        return self._update(Role.SEED, {"HEARTBEAT_TIMESTAMP": "?"}, "", [self.ts(now)])

    def purge(self, now: datetime, settings: Settings) -> int:
        from engine.embedded import dml

        cutoff = now - timedelta(days=settings.retention_days)
        table = self.db.table(self.owner, self.names.history.upper())
        session = self._session()
        n = dml.delete(
            session, self.db, table, ' WHERE "HEARTBEAT_RECEIVED_TS" < ?', (self.ts(cutoff),)
        )
        session.commit(self.db)
        self._update(Role.SETTINGS, {"LAST_PURGE_TS": "?"}, "", [self.ts(now)])
        return n

    def delete_entries(self, group: str) -> int:
        from engine.embedded import dml

        where, params = self.entry_filter(group)
        table = self.db.table(self.owner, self.names.heartbeat.upper())
        session = self._session()
        n = dml.delete(session, self.db, table, f" WHERE {where}", params)
        session.commit(self.db)
        self.db.checkpoint()
        return n


def _column_def(cls: Any, name: str, kind: Kind, key: bool) -> Any:
    types = {
        Kind.NAME: ("VARCHAR2", 128),
        Kind.PATH: ("VARCHAR2", 4000),
        Kind.TS: ("TIMESTAMP", 0),
        Kind.NUM: ("NUMBER", 0),
        Kind.FLAG: ("CHAR", 1),
    }
    type_name, length = types[kind]
    return cls(name, type_name, length, not key)


def _value(type_name: str, value: Any) -> Any:
    """A Python value as the embedded source's DML takes it (Decimal for NUMBER)."""
    if value is None:
        return None
    if type_name == "NUMBER":
        return Decimal(str(value))
    return value


def matches_group(group: str, *names: str | None) -> bool:
    """Whether ``group`` (wildcards allowed) names one of ``names`` or one hop of a path."""
    pattern = group.upper()
    for name in names:
        for part in (name or "").split(","):
            if part and fnmatch.fnmatchcase(part.strip().upper(), pattern):
                return True
    return False
