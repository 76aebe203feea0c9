"""Column values from Oracle bytes to the text the trail carries, fast.

:func:`engine.extract.tasks.decode.text_of` of :meth:`TableDef.decode` is the reference: it goes
through ``Decimal`` and ``datetime``, some 5 µs a value. The Extract's hot loop uses
:func:`converter` instead, which gives the same text: NUMBERs
are turned into text straight from their base-100 digits, and every type's recent values
are remembered (names, codes, dates and amounts repeat; keys do not, and NUMBER keys take
the fast path). A property test holds the two to the same text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from engine.extract.tasks.decode import text_of
from engine.redo.codecs import decode_value
from engine.trail.codec import column_entry

Convert = Callable[[bytes | None], str | None]

#: Values remembered per column before the memory is cleared.
CACHE_LIMIT: Final = 4096
NUMBER_TYPES: Final = frozenset({"NUMBER", "INTEGER", "FLOAT"})
# A NUMBER digit byte to the byte whose hex is its two decimal digits (0xFF: not a digit).
_POSITIVE: Final = bytes(int(f"{b - 1:02d}", 16) if 1 <= b <= 100 else 0xFF for b in range(256))
_NEGATIVE: Final = bytes(int(f"{101 - b:02d}", 16) if 2 <= b <= 101 else 0xFF for b in range(256))


def reference_text(type_name: str, raw: bytes | None) -> str | None:
    """The trail text of a value the slow, obviously right way."""
    return text_of(type_name, decode_value(type_name, raw))


def _reference_number(raw: bytes) -> str:
    text = reference_text("NUMBER", raw)
    assert text is not None  # only NULL has no text
    return text


def number_text(raw: bytes) -> str:
    """``reference_text("NUMBER", raw)`` without Decimal, for an exponent that keeps the
    text under 65 characters; the reference otherwise."""
    n = len(raw)
    if raw == b"\x80":
        return "0"
    if n < 2:
        return _reference_number(raw)
    head = raw[0]
    if head >= 0x80:
        if head < 0xC1 - 10 or head > 0xC1 + 10:
            return _reference_number(raw)
        exp = head - 0xC1
        body = raw[1:]
        sign = ""
        bcd = body.translate(_POSITIVE)
    else:
        if head > 0x3E + 10 or head < 0x3E - 10:
            return _reference_number(raw)
        exp = 0x3E - head
        body = raw[1:-1] if raw[-1] == 0x66 else raw[1:]
        sign = "-"
        bcd = body.translate(_NEGATIVE)
    # A byte that is no digit, or a leading zero digit: not canonical, the reference says.
    if not bcd or 0xFF in bcd or bcd[0] == 0:
        return _reference_number(raw)
    digits = bcd.hex()
    if len(body) > 20:
        return _reference_number(raw)
    point = 2 * (exp + 1)  # digits before the decimal point
    if point >= len(digits):
        return sign + (digits + "0" * (point - len(digits))).lstrip("0")
    frac = digits[max(point, 0) :].rstrip("0")
    if not frac:
        return sign + (digits[:point].lstrip("0") or "0")
    whole = digits[:point].lstrip("0") or "0" if point > 0 else "0"
    lead = "0" * (-point) if point < 0 else ""
    return f"{sign}{whole}.{lead}{frac}"


def converter(type_name: str) -> Convert:
    """A function of a column's bytes (None = NULL) to its trail text, for one column:
    each column gets its own so that its remembered values stay its own."""
    memory: dict[bytes, str | None] = {}
    exact = number_text if type_name in NUMBER_TYPES else None

    def convert(raw: bytes | None) -> str | None:
        if raw is None:
            return None
        text = memory.get(raw)
        if text is None:
            text = exact(raw) if exact is not None else reference_text(type_name, raw)
            if len(memory) >= CACHE_LIMIT:
                memory.clear()
            memory[raw] = text
        return text

    return convert


def entry_converter(index: int, type_name: str) -> Callable[[bytes | None], bytes]:
    """Like :func:`converter`, but to the column's whole trail entry
    (:func:`engine.trail.codec.column_entry`), remembered the same way. Raises
    :class:`~engine.trail.errors.RecordLimitError` for a value too long for a record."""
    memory: dict[bytes, bytes] = {}
    null = column_entry(index, None)
    exact = number_text if type_name in NUMBER_TYPES else None

    def entry(raw: bytes | None) -> bytes:
        if raw is None:
            return null
        out = memory.get(raw)
        if out is None:
            text = exact(raw) if exact is not None else reference_text(type_name, raw)
            out = column_entry(index, text)
            if len(memory) >= CACHE_LIMIT:
                memory.clear()
            memory[raw] = out
        return out

    return entry
