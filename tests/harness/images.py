"""Table images for recovery tests: what the embedded database's tables hold, and what the
committed redo says they hold (every committed transaction in the logs replayed by ROWID
with the reference decoder, tests/harness/logical.py), both as ``{table: {ROWID: row}}``
with the columns' Python values, so a test compares them row by row, every table."""

from __future__ import annotations

from typing import Any

from engine.embedded.database import Database
from engine.embedded.dictionary import load_dictionary
from engine.embedded.values import to_python
from engine.redo.ids import RowId
from tests.harness.logical import decode, replay

Image = dict[str, dict[RowId, dict[str, Any]]]


def tables_image(db: Database) -> Image:
    """Every row of every table, by ROWID (``_rid`` = block << 16 | slot)."""
    out: Image = {}
    for t in db.dictionary.tables.values():
        names = ", ".join(f'"{c.name}"' for c in t.columns)
        rows = db.conn.execute(f'SELECT "_rid", {names} FROM "{t.sqlite_name}"').fetchall()
        img = {
            RowId(t.dataobj, t.file_no, r[0] >> 16, r[0] & 0xFFFF): {
                c.name: to_python(c, v) for c, v in zip(t.columns, r[1:], strict=True)
            }
            for r in rows
        }
        if img:
            out[t.qualified] = img
    return out


def redo_image(db: Database) -> Image:
    """The committed transactions of every log replayed from nothing, by ROWID."""
    records = (lr.record for lr in db.records())
    done = decode(records, load_dictionary(db.root / "dictionary.json"))
    out: Image = {}
    for name, rows in replay(done.committed).items():
        if rows:
            out[name] = {
                rid: {k: _padded(db, name, k, v) for k, v in row.items()}
                for rid, row in rows.items()
            }
    return out


def _padded(db: Database, table: str, column: str, value: Any) -> Any:
    """A decoded value as the tables give it back (``to_python``: CHAR padded, DATE to the
    second)."""
    owner, name = table.split(".", 1)
    t = db.dictionary.get(owner, name)
    col = t.columns[t.column_index(column)]
    return value if value is None else to_python(col, value)


def differences(a: Image, b: Image, limit: int = 10) -> list[str]:
    """Up to ``limit`` rows that differ (an empty list: the same rows, every table)."""
    out: list[str] = []
    for table in sorted(set(a) | set(b)):
        ra, rb = a.get(table, {}), b.get(table, {})
        for rid in sorted(set(ra) | set(rb), key=str):
            if ra.get(rid) != rb.get(rid):
                out.append(f"{table} {rid}: {ra.get(rid)} != {rb.get(rid)}")
                if len(out) >= limit:
                    return out
    return out
