"""The target contract: one connection, explicit transactions, introspection, conversions.

Everything runs in the Replicat process's main thread; nothing here needs to pickle.
"""

from __future__ import annotations

import abc
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

_GG_TIME = re.compile(r"^(\d{4}-\d{2}-\d{2})[: ](\d{2}:\d{2}:\d{2})(?:\.(\d+))?$")


@dataclass(frozen=True, slots=True)
class ColumnInfo:
    """A target column: its name as the database spells it and its kind
    (``number``, ``temporal`` or ``text``), which decides how trail text is bound."""

    name: str
    kind: str


@dataclass(frozen=True, slots=True)
class TableInfo:
    """A target table: SQL name (quoted, ready to use), display name, columns, key."""

    sql_name: str
    name: str
    columns: tuple[ColumnInfo, ...]
    key: tuple[str, ...]

    def column(self, name: str) -> ColumnInfo | None:
        folded = name.strip('"').lower()
        return next((c for c in self.columns if c.name.lower() == folded), None)


def temporal_text(text: str) -> str:
    """Trail DATE/TIMESTAMP text (``YYYY-MM-DD:HH:MI:SS[.fffffffff]``) as ISO text with at
    most microseconds, the fraction left out when it is zero (as the source stores it)."""
    m = _GG_TIME.match(text.strip())
    if m is None:
        return text
    day, clock, frac = m.groups()
    micros = int((frac or "0")[:6].ljust(6, "0"))
    return f"{day} {clock}.{micros:06d}" if micros else f"{day} {clock}"


def parse_temporal(text: str) -> datetime:
    return datetime.fromisoformat(temporal_text(text))


class Target(abc.ABC):
    """One target connection. Statements use the ``placeholder`` of the dialect."""

    dialect: str
    placeholder: str
    name: str

    @abc.abstractmethod
    def table(self, owner: str | None, name: str) -> TableInfo | None:
        """The table ``owner.name`` (names compared case-insensitively), or None."""

    @abc.abstractmethod
    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement in the current transaction; return its row count."""

    @abc.abstractmethod
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run a query in the current transaction; return its rows."""

    @abc.abstractmethod
    def begin(self) -> None: ...

    @abc.abstractmethod
    def commit(self) -> None: ...

    @abc.abstractmethod
    def rollback(self) -> None: ...

    @abc.abstractmethod
    def close(self) -> None: ...

    def savepoint(self, name: str) -> None:
        self.execute(f"SAVEPOINT {name}")

    def release(self, name: str) -> None:
        self.execute(f"RELEASE SAVEPOINT {name}")

    def rollback_to(self, name: str) -> None:
        self.execute(f"ROLLBACK TO SAVEPOINT {name}")

    @staticmethod
    def quote(ident: str) -> str:
        return '"' + ident.replace('"', '""') + '"'

    def bind(self, column: ColumnInfo, text: str | None) -> Any:
        """The parameter for trail text ``text`` in ``column`` (None is SQL NULL)."""
        if text is None:
            return None
        if column.kind == "temporal":
            return temporal_text(text)
        return text
