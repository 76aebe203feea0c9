"""PostgreSQL target through psycopg 3: one connection, explicit transactions (psycopg opens
one at the first statement), schemas as owners, errors mapped from SQLSTATE."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.targets import UNIQUE_CONSTRAINT, TargetConnectError, TargetSqlError
from engine.targets.base import ColumnInfo, TableInfo, Target
from engine.targets.pgconnect import pg_connect
from params.masking import mask_conn_error

_NUMERIC = {"smallint", "integer", "bigint", "numeric", "real", "double precision"}
_TEMPORAL_PREFIX = ("timestamp", "date", "time")
_SQLSTATE = {"23505": UNIQUE_CONSTRAINT, "23502": 1400, "22P02": 1722, "22003": 1438}


def column_kind(data_type: str) -> str:
    if data_type in _NUMERIC:
        return "number"
    if data_type.startswith(_TEMPORAL_PREFIX):
        return "temporal"
    return "text"


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class PostgresTarget(Target):
    dialect = "postgresql"
    placeholder = "%s"

    def __init__(self, url: str, user: str | None = None, password: str | None = None) -> None:
        import psycopg

        self._psycopg = psycopg
        try:
            self.conn = pg_connect(url, user=user, password=password, connect_timeout=10)
        except psycopg.Error as exc:
            raise TargetConnectError(
                mask_conn_error(f"Cannot connect to {url}: {_first_line(exc)}", url, password)
            ) from None
        self.name = str(self.conn.info.dbname)
        self._tables: dict[tuple[str | None, str], TableInfo | None] = {}

    def table(self, owner: str | None, name: str) -> TableInfo | None:
        key = (owner.lower() if owner else None, name.lower())
        if key not in self._tables:
            self._tables[key] = self._introspect(owner, name)
        return self._tables[key]

    def _introspect(self, owner: str | None, name: str) -> TableInfo | None:
        idle = self.conn.info.transaction_status == self._psycopg.pq.TransactionStatus.IDLE
        rows = self.query(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE lower(table_name) = lower(%s) AND lower(table_schema) = lower(%s)",
            (name.strip('"'), (owner or "public").strip('"')),
        )
        if not rows:
            if idle:
                self.rollback()
            return None
        schema, table = str(rows[0][0]), str(rows[0][1])
        cols = self.query(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = %s AND table_name = %s ORDER BY ordinal_position",
            (schema, table),
        )
        sql_name = f"{self.quote(schema)}.{self.quote(table)}"
        key = self.query(
            "SELECT a.attname FROM pg_index i JOIN pg_attribute a "
            "ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) "
            "WHERE i.indrelid = %s::regclass AND i.indisprimary "
            "ORDER BY array_position(i.indkey, a.attnum)",
            (sql_name,),
        )
        if idle:  # introspection must not leave a transaction open (nor end the caller's)
            self.rollback()
        return TableInfo(
            sql_name,
            f"{schema}.{table}",
            tuple(ColumnInfo(str(c), column_kind(str(t))) for c, t in cols),
            tuple(str(k[0]) for k in key),
        )

    def _error(self, exc: Exception, sql: str) -> TargetSqlError:
        state = getattr(exc, "sqlstate", None) or ""
        number = _SQLSTATE.get(state, 0)
        return TargetSqlError(f"PostgreSQL error {state}: {_first_line(exc)}; SQL: {sql}", number)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        try:
            cur = self.conn.execute(sql, tuple(params) if params else None)
        except self._psycopg.Error as exc:
            raise self._error(exc, sql) from exc
        return int(cur.rowcount)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            cur = self.conn.execute(sql, tuple(params) if params else None)
            return [tuple(r) for r in cur.fetchall()]
        except self._psycopg.Error as exc:
            raise self._error(exc, sql) from exc

    def begin(self) -> None:
        """psycopg opens the transaction at the first statement."""

    def commit(self) -> None:
        try:
            self.conn.commit()
        except self._psycopg.Error as exc:
            raise self._error(exc, "COMMIT") from exc

    def rollback(self) -> None:
        try:
            self.conn.rollback()
        except self._psycopg.Error as exc:
            raise self._error(exc, "ROLLBACK") from exc

    def close(self) -> None:
        self.conn.close()
