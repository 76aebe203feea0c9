"""The Replicat checkpoint table and its ``_lox`` transaction table (seed 004), in the target.

``ADD CHECKPOINTTABLE owner.table`` creates both in the target database; Replicat records its
progress there (GROUP_NAME + GROUP_KEY identify a checkpoint; LOG_CMPLT_CSN / LOG_CMPLT_XIDS hold
the completed transactions, overflowing into ``<table>_lox``). Targets: SQLite files (SQLite has
no schemas: ``owner.table`` becomes the table ``table``) and PostgreSQL (``owner`` is the schema,
created if needed). Connections are DB-API connections opened by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

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


def ddl(name: TableName, dialect: str, created: datetime | None = None) -> list[str]:
    """The two tables. CREATE_TS is "the date and time when the checkpoint table was
    created" (seed 004): the creation time is the column's default, so every group's row
    carries it whenever the row itself is first written."""
    stamp = (created or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M:%S.%f")

    def table(cols: tuple[tuple[str, str], ...], key: tuple[str, ...], suffix: str) -> str:
        body = ", ".join(
            f"{c} {t} DEFAULT '{stamp}'" if c == "create_ts" else f"{c} {t}" for c, t in cols
        )
        return (
            f"CREATE TABLE {name.qualified(dialect, suffix)} "
            f"({body}, PRIMARY KEY ({', '.join(key)}))"
        )

    stmts = []
    if dialect == "postgresql" and name.owner:
        stmts.append(f'CREATE SCHEMA IF NOT EXISTS "{name.owner.lower()}"')
    return [*stmts, table(COLUMNS, PRIMARY_KEY, ""), table(LOX_COLUMNS, LOX_PRIMARY_KEY, "_lox")]


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
