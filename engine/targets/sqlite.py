"""SQLite target: a file, WAL journal with full sync (a commit survives kill -9 and power
loss), explicit BEGIN/COMMIT. SQLite has no schemas: ``owner.table`` is the table ``table``."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.targets import UNIQUE_CONSTRAINT, TargetConnectError, TargetSqlError
from engine.targets.base import ColumnInfo, TableInfo, Target

_NUMERIC = ("INT", "NUM", "REAL", "DEC", "FLOA", "DOUB")
_TEMPORAL = ("DATE", "TIME")


def column_kind(declared: str) -> str:
    t = declared.upper()
    if any(k in t for k in _TEMPORAL):
        return "temporal"
    if any(k in t for k in _NUMERIC):
        return "number"
    return "text"


def _number(error: sqlite3.Error) -> int:
    text = str(error).lower()
    if "unique constraint" in text or "primary key" in text:
        return UNIQUE_CONSTRAINT
    if "not null constraint" in text:
        return 1400
    return 0


class SqliteTarget(Target):
    dialect = "sqlite"
    placeholder = "?"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = path.stem
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=FULL")
            self.conn.execute("PRAGMA busy_timeout=10000")
        except (sqlite3.Error, OSError) as exc:
            raise TargetConnectError(f"Cannot open SQLite database {path}: {exc}") from exc
        self._tables: dict[tuple[str | None, str], TableInfo | None] = {}
        self.in_transaction = False

    def table(self, owner: str | None, name: str) -> TableInfo | None:
        key = (owner, name.lower())
        if key not in self._tables:
            self._tables[key] = self._introspect(name)
        return self._tables[key]

    def _introspect(self, name: str) -> TableInfo | None:
        rows = self.query(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND lower(name) = lower(?)",
            (name.strip('"'),),
        )
        if not rows:
            return None
        actual = str(rows[0][0])
        info = self.query(f"PRAGMA table_info({self.quote(actual)})")
        columns = tuple(ColumnInfo(str(r[1]), column_kind(str(r[2] or ""))) for r in info)
        key = tuple(str(r[1]) for r in sorted((r for r in info if r[5]), key=lambda r: r[5]))
        return TableInfo(self.quote(actual), actual, columns, key)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        try:
            return self.conn.execute(sql, tuple(params)).rowcount
        except sqlite3.Error as exc:
            raise TargetSqlError(f"SQLite error: {exc}; SQL: {sql}", _number(exc)) from exc

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return list(self.conn.execute(sql, tuple(params)).fetchall())
        except sqlite3.Error as exc:
            raise TargetSqlError(f"SQLite error: {exc}; SQL: {sql}", _number(exc)) from exc

    def begin(self) -> None:
        self.execute("BEGIN IMMEDIATE")
        self.in_transaction = True

    def commit(self) -> None:
        self.execute("COMMIT")
        self.in_transaction = False

    def rollback(self) -> None:
        if self.conn.in_transaction:
            self.execute("ROLLBACK")
        self.in_transaction = False

    def close(self) -> None:
        self.conn.close()

    def bind(self, column: ColumnInfo, text: str | None) -> Any:
        if text is None or column.kind == "text":  # (as Target.bind, without its call)
            return text
        if column.kind == "number":
            try:
                return int(text)
            except ValueError:
                try:
                    return float(text)
                except ValueError:
                    return text
        return super().bind(column, text)
