"""ADD / INFO / DELETE TRANDATA and ADD SCHEMATRANDATA for a PostgreSQL source: REPLICA
IDENTITY is PostgreSQL's supplemental logging (what an update's and a delete's old image
holds in the WAL).

GoldenGate's rules, as this module applies them:

* ``ADD TRANDATA t``: REPLICA IDENTITY DEFAULT (the primary key) when ``t`` has a primary key,
  FULL (every column) when it has none; ``ALLCOLS``: FULL always.
* ``DELETE TRANDATA t``: REPLICA IDENTITY NOTHING (no old image: the Extract cannot capture
  its updates' keys or its deletes).
* ``INFO TRANDATA t``: enabled for DEFAULT with a primary key and for FULL; disabled for
  NOTHING, and for DEFAULT without a primary key (which logs nothing either); USING INDEX is
  reported and refused (the Extract's key is the primary key or every column: ADD TRANDATA
  turns it into one of those).
* ``ADD SCHEMATRANDATA s [ALLCOLS]``: ADD TRANDATA of every table in ``s`` now.

Table names are ``schema.table`` (``table`` alone is in ``public``), wildcards ``*`` and
``?`` in either part; names compare case-insensitively as unquoted SQL names do.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

TABLES_SQL = """
SELECT n.nspname, c.relname, c.relreplident,
       EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary),
       ARRAY(SELECT a.attname::text FROM pg_index i
             JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
             WHERE i.indrelid = c.oid AND i.indisprimary
             ORDER BY array_position(i.indkey, a.attnum))
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg_toast%%'
ORDER BY 1, 2
"""


class TrandataError(Exception):
    """One line: no table matches, the table cannot be altered."""


@dataclass(frozen=True)
class TableIdentity:
    schema: str
    name: str
    identity: str  # d f n i
    has_key: bool
    key: tuple[str, ...]

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}"

    @property
    def sql(self) -> str:
        q = '"'
        return f"{q}{self.schema.replace(q, q * 2)}{q}.{q}{self.name.replace(q, q * 2)}{q}"


def split_spec(spec: str) -> tuple[str, str]:
    schema, dot, table = spec.strip().rpartition(".")
    return (schema.strip('"') if dot else "public"), table.strip('"')


def _matches(pattern: str, name: str) -> bool:
    return fnmatch.fnmatchcase(name.lower(), pattern.lower())


def matching(conn: Any, spec: str) -> list[TableIdentity]:
    schema_p, table_p = split_spec(spec)
    out = []
    for schema, name, ident, has_key, key in conn.execute(TABLES_SQL).fetchall():
        if _matches(schema_p, schema) and _matches(table_p, name):
            out.append(TableIdentity(schema, name, str(ident), bool(has_key), tuple(key or ())))
    return out


def _alter(conn: Any, t: TableIdentity, identity: str) -> None:
    try:
        conn.execute(f"ALTER TABLE {t.sql} REPLICA IDENTITY {identity}")
    except Exception as exc:  # psycopg.Error: not the owner, locked
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TrandataError(f"Cannot set REPLICA IDENTITY of {t.qualified}: {text}") from exc


def add_trandata(conn: Any, spec: str, allcols: bool) -> list[str]:
    tables = matching(conn, spec)
    if not tables:
        raise TrandataError(f"No tables found matching {spec} to add supplemental logging.")
    lines = []
    for t in tables:
        full = allcols or not t.has_key
        identity = "FULL" if full else "DEFAULT"
        _alter(conn, t, identity)
        why = "" if allcols or t.has_key else " (the table has no primary key)"
        lines.append(
            f"Logging of supplemental redo data enabled for table {t.qualified}: "
            f"REPLICA IDENTITY {identity}{why}."
        )
    return lines


def delete_trandata(conn: Any, spec: str) -> list[str]:
    tables = matching(conn, spec)
    if not tables:
        raise TrandataError(f"No tables found matching {spec} to delete supplemental logging.")
    lines = []
    for t in tables:
        _alter(conn, t, "NOTHING")
        lines.append(
            f"Logging of supplemental redo log data disabled for table {t.qualified}: "
            "REPLICA IDENTITY NOTHING."
        )
    return lines


def info_trandata(conn: Any, spec: str) -> list[str]:
    tables = matching(conn, spec)
    if not tables:
        raise TrandataError(f"No tables found matching {spec}.")
    lines = []
    for t in tables:
        if t.identity == "f":
            lines.append(
                f"Logging of supplemental redo log data is enabled for table "
                f"{t.qualified}: REPLICA IDENTITY FULL (all columns)."
            )
        elif t.identity == "d" and t.has_key:
            cols = ", ".join(t.key)
            lines.append(
                f"Logging of supplemental redo log data is enabled for table "
                f"{t.qualified}: REPLICA IDENTITY DEFAULT, key columns {cols}."
            )
        elif t.identity == "i":
            lines.append(
                f"Logging of supplemental redo log data is not supported for table "
                f"{t.qualified}: REPLICA IDENTITY USING INDEX is refused; "
                "ADD TRANDATA sets DEFAULT or FULL."
            )
        else:
            why = "NOTHING" if t.identity == "n" else "DEFAULT without a primary key"
            lines.append(
                f"Logging of supplemental redo log data is disabled for table "
                f"{t.qualified}: REPLICA IDENTITY {why}."
            )
    return lines


def add_schematrandata(conn: Any, schema: str, allcols: bool) -> list[str]:
    schema = schema.strip().strip('"')
    tables = [t for t in matching(conn, f"{schema}.*")]
    if not tables:
        raise TrandataError(f"Schema {schema} has no tables to add supplemental logging to.")
    lines = add_trandata(conn, f"{schema}.*", allcols)
    return [
        *lines,
        f"Supplemental logging enabled for the {len(tables)} table(s) of schema "
        f"{schema} that exist now (new tables need ADD TRANDATA).",
    ]
