"""What the capture knows of a source table: its columns in order (the trail's column
indexes), how each is written, its key, and its REPLICA IDENTITY; read from the database's
catalog when the capture first meets the table, and again when a change names a column
the catalog did not have (a column added)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.postgres.testdecoding import unquote_ident
from engine.postgres.types import Convert, converter, unsupported_kind

#: REPLICA IDENTITY as pg_class.relreplident says it
IDENTITY_NAMES = {"d": "DEFAULT", "f": "FULL", "n": "NOTHING", "i": "USING INDEX"}

COLUMNS_SQL = """
SELECT a.attname, format_type(a.atttypid, NULL),
       format_type(CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE a.atttypid END, NULL),
       COALESCE(bt.typtype, t.typtype), COALESCE(bt.typcategory, t.typcategory)
FROM pg_attribute a
JOIN pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_type bt ON t.typtype = 'd' AND bt.oid = t.typbasetype
WHERE a.attrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum
"""

KEY_SQL = """
SELECT a.attname FROM pg_index i
JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
WHERE i.indrelid = %s::regclass AND i.indisprimary
ORDER BY array_position(i.indkey, a.attnum)
"""

TABLE_SQL = """
SELECT n.nspname, c.relname, c.relreplident, c.relkind
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.oid = %s::regclass
"""


@dataclass(frozen=True)
class Column:
    name: str
    type_name: str  # as declared (a domain's own name)
    convert: Convert | None  # None: unsupported, not written
    kind: str  # what the unsupported warning calls it


@dataclass(frozen=True)
class PgTable:
    qualified: str  # as test_decoding prints it (quoted where SQL needs quotes)
    schema: str
    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]  # primary key column names, in key order
    identity: str  # d | f | n | i
    index: dict[str, int] = field(default_factory=dict, compare=False)  # name -> position

    def __post_init__(self) -> None:
        self.index.update((c.name, i) for i, c in enumerate(self.columns))

    def index_of(self) -> dict[str, int]:
        return self.index

    @property
    def unsupported(self) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if c.convert is None)


Query = Callable[[str, tuple[Any, ...]], list[tuple[Any, ...]]]


def load_table(query: Query, qualified: str) -> PgTable | None:
    """The table test_decoding names ``qualified``; None when it is gone."""
    rows = query(TABLE_SQL, (qualified,))
    if not rows:
        return None
    schema, name, ident, _kind = rows[0]
    cols = []
    for attname, declared, base, typtype, category in query(COLUMNS_SQL, (qualified,)):
        conv = converter(str(base), str(typtype), str(category))
        cols.append(
            Column(
                str(attname),
                str(declared),
                conv,
                unsupported_kind(str(base), str(typtype), str(category)),
            )
        )
    key = tuple(str(r[0]) for r in query(KEY_SQL, (qualified,)))
    return PgTable(qualified, str(schema), str(name), tuple(cols), key, str(ident))


def split_qualified(qualified: str) -> tuple[str, str]:
    """``public.t`` / ``"My S"."T"`` -> (schema, name) unquoted."""
    from engine.postgres.testdecoding import _qualified

    text, _ = _qualified(qualified, 0)
    parts = text.split(".") if '"' not in text else _split_quoted(text)
    if len(parts) == 1:
        return "public", unquote_ident(parts[0])
    return unquote_ident(parts[0]), unquote_ident(parts[-1])


def _split_quoted(text: str) -> list[str]:
    from engine.postgres.testdecoding import _ident

    parts = []
    i = 0
    while i < len(text):
        part, i = _ident(text, i)
        parts.append(part)
        if i < len(text) and text[i] == ".":
            i += 1
    return parts
