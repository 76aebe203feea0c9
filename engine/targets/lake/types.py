"""The trail's text as typed Arrow columns, and the type mapping of the tables the handler
creates.

A trail carries every value as text, and its table definition records (TDRs) carry the
column names only (engine/trail/metadata.py). So a table the handler creates has:

======================  ===================  ======================  =======================
column                  Arrow                Delta                   Iceberg
======================  ===================  ======================  =======================
each source column      string               string                  string
OP_TYPE (history)       string               string                  string
OP_TS (history)         timestamp[us, UTC]   timestamp               timestamptz
CSN, TRANID (history)   string               string                  string
POSITION (history)      string               string                  string
======================  ===================  ======================  =======================

A table that exists already keeps its types: the text of each value is converted to its
column's type (integers, floating point, decimals, booleans, dates, timestamps, strings);
a value its column cannot hold stops the Replicat with the table, column and value
(:class:`~engine.targets.lake.LakeError`), rather than writing a NULL or a wrong number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from engine.targets.base import temporal_text
from engine.targets.lake import LakeError

#: The history columns (INSERTALLRECORDS) and their Arrow types, in table order.
HISTORY_COLUMNS: tuple[tuple[str, pa.DataType], ...] = (
    ("OP_TYPE", pa.string()),
    ("OP_TS", pa.timestamp("us", tz="UTC")),
    ("CSN", pa.string()),
    ("TRANID", pa.string()),
    ("POSITION", pa.string()),
)
HISTORY_NAMES = frozenset(n for n, _ in HISTORY_COLUMNS)


def created_schema(columns: Sequence[str], history: bool) -> pa.Schema:
    """The schema of a table created for ``columns`` (a TDR's names)."""
    fields = [pa.field(c, pa.string()) for c in columns]
    if history:
        fields += [pa.field(n, t) for n, t in HISTORY_COLUMNS if n not in columns]
    return pa.schema(fields)


def kind_of(t: pa.DataType) -> str:
    """The engine's column kind (engine.targets.base.ColumnInfo) of an Arrow type."""
    if pa.types.is_timestamp(t) or pa.types.is_date(t):
        return "temporal"
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
        return "number"
    return "text"


def _cast(values: list[Any], t: pa.DataType) -> pa.Array:
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pa.array(values, t)
    if pa.types.is_timestamp(t):
        first = next((v for v in values if v is not None), None)
        if isinstance(first, datetime):  # the history's commit times (aware, UTC)
            return pa.array(values, t)
        values = [temporal_text(v) if isinstance(v, str) else v for v in values]
    elif pa.types.is_date(t):
        values = [temporal_text(v)[:10] if isinstance(v, str) else v for v in values]
    elif pa.types.is_boolean(t):
        values = [
            {"1": "true", "0": "false"}.get(v, v) if isinstance(v, str) else v for v in values
        ]
    text = pa.array(values, pa.string())
    if pa.types.is_date(t):
        return pc.cast(pc.cast(text, pa.timestamp("us")), t)
    if pa.types.is_timestamp(t) and t.tz is not None:  # trail times are UTC, without a zone
        return pc.cast(pc.cast(text, pa.timestamp(t.unit)), t)
    return pc.cast(text, t)


def to_arrow(rows: Sequence[Mapping[str, Any]], schema: pa.Schema, table: str) -> pa.Table:
    """``rows`` (column -> trail text, None: NULL; a column missing from a row is NULL) as a
    table of ``schema``; a value a column cannot hold raises :class:`LakeError`."""
    arrays = []
    for f in schema:
        values = [r.get(f.name) for r in rows]
        try:
            arrays.append(_cast(values, f.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError):
            arrays.append(_bad_value(values, f, table))
    return pa.Table.from_arrays(arrays, schema=schema)


def _bad_value(values: list[Any], f: pa.Field, table: str) -> pa.Array:
    for v in values:
        try:
            _cast([v], f.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError):
            shown = repr(v)[:80]
            raise LakeError(
                f"Column {f.name} of {table} is of type {f.type}, which cannot hold the value "
                f"{shown} (a column whose type was narrowed at the source, or a table created "
                "with another type): the change cannot be applied."
            ) from None
    raise LakeError(f"Column {f.name} of {table}: its values cannot be converted to {f.type}.")
