"""The values an expression computes, and the conversions between them.

Column values arrive as text (``str``) or SQL NULL (``None``); numbers are ``int`` or
``Decimal`` (exact, as column values are decimal text); a comparison gives ``bool``.
:class:`Status` marks a column that is not in the record and a value that cannot be
computed (text that is not a number in arithmetic, a division by zero...).
"""

from __future__ import annotations

import enum
import re
from decimal import Decimal, DivisionByZero, InvalidOperation, localcontext

Number = int | Decimal


class Status(enum.Enum):
    MISSING = "MISSING"
    INVALID = "INVALID"


Value = str | int | Decimal | float | bool | None | Status

_INT = re.compile(r"\s*[+-]?\d+\s*")
_DEC = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*")


def as_number(v: Value) -> Number | Status | None:
    """A number, None for NULL, or a Status (text that is not a number is INVALID)."""
    if v is None or isinstance(v, Status):
        return v
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int | Decimal):
        return v
    if isinstance(v, float):
        return Decimal(repr(v))
    if _INT.fullmatch(v):
        return int(v)
    if _DEC.fullmatch(v):
        return Decimal(v.strip())
    return Status.INVALID


def normal(n: Decimal) -> Number:
    """A Decimal with no fraction as an int (``2.0`` -> ``2``)."""
    if n == n.to_integral_value():
        return int(n)
    return n


def arith(op: str, a: Value, b: Value) -> Value:
    x, y = as_number(a), as_number(b)
    if isinstance(x, Status) or isinstance(y, Status):
        return x if isinstance(x, Status) else y
    if x is None or y is None:
        return None
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    with localcontext() as ctx:
        ctx.prec = 38
        try:
            return normal(Decimal(x) / Decimal(y))
        except (DivisionByZero, InvalidOperation):
            return Status.INVALID


def compare(op: str, a: Value, b: Value) -> bool | None:
    """SQL-like: a NULL, missing or invalid side gives None (unknown). Numbers compare
    as numbers, and text with a number when the text is a number; otherwise as text."""
    if a is None or b is None or isinstance(a, Status) or isinstance(b, Status):
        return None
    x: object = a
    y: object = b
    if not (isinstance(a, str) and isinstance(b, str)):
        nx, ny = as_number(a), as_number(b)
        if isinstance(nx, Status) or isinstance(ny, Status) or nx is None or ny is None:
            x, y = text(a), text(b)
        else:
            x, y = nx, ny
    else:
        nx, ny = as_number(a), as_number(b)
        if not isinstance(nx, Status | None) and not isinstance(ny, Status | None):
            x, y = nx, ny
    if op == "=":
        return x == y
    if op == "<>":
        return x != y
    if op == "<":
        return bool(x < y)  # type: ignore[operator]
    if op == ">":
        return bool(x > y)  # type: ignore[operator]
    if op == "<=":
        return bool(x <= y)  # type: ignore[operator]
    return bool(x >= y)  # type: ignore[operator]


def truth(v: Value) -> bool | None:
    """A condition's truth: None for unknown (NULL, missing, invalid)."""
    if v is None or isinstance(v, Status):
        return None
    if isinstance(v, bool):
        return v
    n = as_number(v)
    if n is None or isinstance(n, Status):
        return None
    return n != 0


def text(v: Value) -> str:
    """The text of a non-NULL value (numbers as GoldenGate writes them, 1/0 for truth)."""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, Decimal):
        s = format(v, "f")
        return s.rstrip("0").rstrip(".") if "." in s else s
    if isinstance(v, float):
        return text(Decimal(repr(v)))
    return str(v)


def to_text(v: Value) -> str | Status | None:
    """What a column or token gets: text, None (NULL) or a Status."""
    if v is None or isinstance(v, Status):
        return v
    return text(v)
