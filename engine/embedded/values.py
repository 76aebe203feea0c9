"""Column values between SQL, SQLite storage and Oracle encodings.

In SQLite a NUMBER is stored as INTEGER or REAL (so WHERE clauses compare numerically;
beyond 15 significant digits a non-integer loses precision, a documented limit), DATE and
TIMESTAMP as ``YYYY-MM-DD HH:MM:SS[.ffffff]`` text (which sorts and compares correctly), and
character types as text. :func:`to_python` gives the value the redo encodes.
"""

from __future__ import annotations

from datetime import datetime
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation

from engine.embedded.dictionary import ColumnDef
from engine.embedded.errors import SqlError
from engine.redo.codecs import Value

SqliteValue = int | float | str | bytes | None
_NUMERIC = frozenset({"NUMBER", "INTEGER", "FLOAT"})
_TEMPORAL = frozenset({"DATE", "TIMESTAMP"})


def format_datetime(value: datetime) -> str:
    text = value.strftime("%Y-%m-%d %H:%M:%S")
    return f"{text}.{value.microsecond:06d}" if value.microsecond else text


def parse_datetime(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise SqlError(f"not a valid date/time: {text!r}", "ORA-01861") from exc


def to_python(col: ColumnDef, value: object) -> Value:
    """A stored (or computed) SQLite value as the column's Python value."""
    if value is None or value == "":
        return None
    t = col.type
    if t in _NUMERIC:
        if isinstance(value, int):
            number = Decimal(value)
        elif isinstance(value, float):
            number = Decimal(repr(value))
        else:
            try:
                number = Decimal(str(value).strip())
            except InvalidOperation as exc:
                raise SqlError(f"invalid number: {value!r}", "ORA-01722") from exc
        return _fit_number(col, number) if col.scale is not None or col.precision else number
    if t in _TEMPORAL:
        if isinstance(value, datetime):
            return value
        dt = parse_datetime(str(value))
        return dt if t == "TIMESTAMP" else dt.replace(microsecond=0)
    if not isinstance(value, int | float | str | bytes):
        raise SqlError(f"unsupported value {value!r} for {col.name}")
    text = value.decode("utf-8") if isinstance(value, bytes) else str(value)
    if isinstance(value, float) and value.is_integer():
        text = str(int(value))
    if t in ("CHAR", "NCHAR") and col.length:
        text = text.ljust(col.length)
    if col.length and len(text.encode("utf-8")) > col.length:
        raise SqlError(
            f'value too large for column "{col.name}" (actual: {len(text.encode("utf-8"))}, '
            f"maximum: {col.length})",
            "ORA-12899",
        )
    return text


def _fit_number(col: ColumnDef, number: Decimal) -> Decimal:
    """NUMBER(p, s): round to ``s`` decimals (half up, as Oracle), refuse more than ``p - s``
    integer digits (``ORA-01438``)."""
    if not number.is_finite():
        raise SqlError(f"invalid number: {number}", "ORA-01722")
    scale = col.scale or 0
    rounded = number.quantize(Decimal(1).scaleb(-scale), ROUND_HALF_UP, Context(prec=80))
    if col.precision:
        limit = Decimal(10) ** (col.precision - scale)
        if abs(rounded) >= limit:
            raise SqlError(
                f"value larger than specified precision allowed for column {col.name}",
                "ORA-01438",
            )
    return rounded if scale > 0 else rounded.to_integral_value()


def to_sqlite(col: ColumnDef, value: Value) -> SqliteValue:
    if value is None:
        return None
    if isinstance(value, Decimal):
        if value == value.to_integral_value() and abs(value) < (1 << 63):
            return int(value)
        return float(value)
    if isinstance(value, datetime):
        return format_datetime(value)
    if isinstance(value, int | float | str):
        return value
    raise SqlError(f"unsupported value {value!r} for {col.name}")
