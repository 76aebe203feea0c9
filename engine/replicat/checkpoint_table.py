"""The Replicat checkpoint table and its ``_lox`` transaction table (seed 004), in the target.

``ADD CHECKPOINTTABLE owner.table`` creates both in the target database; Replicat records its
progress there (GROUP_NAME + GROUP_KEY identify a checkpoint; LOG_CMPLT_CSN / LOG_CMPLT_XIDS hold
the completed transactions, overflowing into ``<table>_lox``). Targets: SQLite files (SQLite has
no schemas: ``owner.table`` becomes the table ``table``) and PostgreSQL (``owner`` is the schema,
created if needed). Connections are DB-API connections opened by the caller.

Tables made by an older version have no CREATE_TS default (their Replicat wrote the column):
:func:`upgrade` gives them one in place, keeping their rows - SQLite cannot change a column's
default, so there the table is rebuilt (copy, drop, rename) in one transaction; PostgreSQL
alters the column. ADD CHECKPOINTTABLE and Replicat's first use of the table call it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

Query = Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]
Execute = Callable[[str, Sequence[Any]], Any]

COLUMNS = (
    ("group_name", "VARCHAR(8) NOT NULL"),
    ("group_key", "BIGINT NOT NULL"),
    ("seqno", "INTEGER"),
    ("rba", "BIGINT NOT NULL"),
    ("audit_ts", "VARCHAR(29)"),
    ("create_ts", "TIMESTAMP NOT NULL"),
    ("last_update_ts", "TIMESTAMP NOT NULL"),
    ("current_dir", "VARCHAR(255) NOT NULL"),
    ("log_bsn", "VARCHAR(128)"),
    ("log_csn", "VARCHAR(129)"),
    ("log_xid", "VARCHAR(129)"),
    ("log_cmplt_csn", "VARCHAR(129)"),
    ("log_cmplt_xids", "VARCHAR(2000)"),
    ("version", "INTEGER"),
)
PRIMARY_KEY = ("group_name", "group_key")
LOX_COLUMNS = (
    ("group_name", "VARCHAR(8) NOT NULL"),
    ("group_key", "BIGINT NOT NULL"),
    ("log_cmplt_csn", "VARCHAR(129) NOT NULL"),
    ("log_cmplt_xids_seq", "INTEGER NOT NULL"),
    ("log_cmplt_xids", "VARCHAR(2000) NOT NULL"),
)
LOX_PRIMARY_KEY = ("group_name", "group_key", "log_cmplt_csn", "log_cmplt_xids_seq")


@dataclass(frozen=True)
class TableName:
    owner: str | None
    table: str

    @classmethod
    def parse(cls, name: str) -> TableName:
        owner, dot, table = name.rpartition(".")
        return cls(owner if dot else None, table)

    def qualified(self, dialect: str, suffix: str = "") -> str:
        table = f'"{(self.table + suffix).lower()}"'
        if dialect == "postgresql" and self.owner:
            return f'"{self.owner.lower()}".{table}'
        return table

    def __str__(self) -> str:
        return f"{self.owner}.{self.table}" if self.owner else self.table


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")


def _create(qualified: str, cols: tuple[tuple[str, str], ...], key: tuple[str, ...],
            stamp: str) -> str:  # fmt: skip
    body = ", ".join(
        f"{c} {t} DEFAULT '{stamp}'" if c == "create_ts" else f"{c} {t}" for c, t in cols
    )
    return f"CREATE TABLE {qualified} ({body}, PRIMARY KEY ({', '.join(key)}))"


def ddl(name: TableName, dialect: str, created: datetime | None = None) -> list[str]:
    """The two tables. CREATE_TS is "the date and time when the checkpoint table was
    created" (seed 004): the creation time is the column's default, so every group's row
    carries it whenever the row itself is first written."""
    stamp = _stamp(created or datetime.now(UTC))
    stmts = []
    if dialect == "postgresql" and name.owner:
        stmts.append(f'CREATE SCHEMA IF NOT EXISTS "{name.owner.lower()}"')
    return [
        *stmts,
        _create(name.qualified(dialect), COLUMNS, PRIMARY_KEY, stamp),
        _create(name.qualified(dialect, "_lox"), LOX_COLUMNS, LOX_PRIMARY_KEY, stamp),
    ]


def create_ts_default(query: Query, name: TableName, dialect: str) -> str | None:
    """The CREATE_TS column's default as the database holds it (None: no default, the
    layout of an older version)."""
    if dialect == "sqlite":
        rows = query(f"PRAGMA table_info({name.qualified(dialect)})", ())
        found = [r[4] for r in rows if str(r[1]).lower() == "create_ts"]
    else:
        rows = query(
            "SELECT column_default FROM information_schema.columns WHERE table_name = %s "
            "AND table_schema = %s AND column_name = 'create_ts'",
            (name.table.lower(), (name.owner or "public").lower()),
        )
        found = [r[0] for r in rows]
    return None if not found or found[0] is None else str(found[0])


def upgrade(
    query: Query, execute: Execute, name: TableName, dialect: str, now: datetime
) -> int | None:
    """Give an older version's table its CREATE_TS default, in place; the caller commits.

    The creation time is the earliest CREATE_TS its rows carry (what the old Replicat wrote
    when it first checkpointed), ``now`` when it has none. Returns the number of rows kept,
    or None when the table needs nothing."""
    if create_ts_default(query, name, dialect) is not None:
        return None
    main = name.qualified(dialect)
    rows = query(f"SELECT count(*), min(create_ts) FROM {main}", ())
    count, first = (int(rows[0][0] or 0), rows[0][1]) if rows else (0, None)
    stamp = str(first)[:26] if first else _stamp(now)
    if dialect != "sqlite":
        execute(f"ALTER TABLE {main} ALTER COLUMN create_ts SET DEFAULT '{stamp}'", ())
        execute(f"UPDATE {main} SET create_ts = '{stamp}' WHERE create_ts IS NULL", ())
        return count
    have = {str(r[1]).lower() for r in query(f"PRAGMA table_info({main})", ())}
    cols = [c for c, _ in COLUMNS if c in have]
    new = f'"{name.table.lower()}__upgrade"'
    picked = [f"COALESCE(create_ts, '{stamp}')" if c == "create_ts" else c for c in cols]
    execute(_create(new, COLUMNS, PRIMARY_KEY, stamp), ())
    execute(f"INSERT INTO {new} ({', '.join(cols)}) SELECT {', '.join(picked)} FROM {main}", ())
    execute(f"DROP TABLE {main}", ())
    execute(f"ALTER TABLE {new} RENAME TO {main}", ())
    return count


def connection_io(conn: Any) -> tuple[Query, Execute]:
    """:data:`Query` and :data:`Execute` over a DB-API connection."""

    def query(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        cur = conn.cursor()
        cur.execute(sql, tuple(params))
        return [tuple(r) for r in cur.fetchall()]

    def execute(sql: str, params: Sequence[Any]) -> Any:
        return conn.cursor().execute(sql, tuple(params))

    return query, execute


def exists(conn: Any, name: TableName, dialect: str) -> bool:
    cur = conn.cursor()
    if dialect == "sqlite":
        cur.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
            (name.table.lower(),),
        )
    else:
        cur.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = %s "
            "AND table_schema = %s",
            (name.table.lower(), (name.owner or "public").lower()),
        )
    row = cur.fetchone()
    return bool(row and row[0])


def create(conn: Any, name: TableName, dialect: str, created: datetime | None = None) -> None:
    cur = conn.cursor()
    for stmt in ddl(name, dialect, created):
        cur.execute(stmt)
    conn.commit()


def drop(conn: Any, name: TableName, dialect: str) -> None:
    cur = conn.cursor()
    for suffix in ("_lox", ""):
        cur.execute(f"DROP TABLE {name.qualified(dialect, suffix)}")
    conn.commit()


def row_count(conn: Any, name: TableName, dialect: str) -> int:
    cur = conn.cursor()
    cur.execute(f"SELECT count(*) FROM {name.qualified(dialect)}")
    row = cur.fetchone()
    return int(row[0]) if row else 0
