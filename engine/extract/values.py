"""Column values from Oracle bytes to the text the trail carries, fast.

:func:`engine.extract.decode.text_of` of :meth:`TableDef.decode` is the reference: it goes
through ``Decimal`` and ``datetime``, some 5 µs a value. The Extract's hot loop uses
:func:`converter` instead, which gives the same text: NUMBERs of up to 28 significant digits
are turned into text straight from their base-100 digits, and every type's recent values
are remembered (names, codes, dates and amounts repeat; keys do not, and NUMBER keys take
the fast path). A property test holds the two to the same text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from engine.extract.decode import text_of
from engine.source.codecs import decode_value

Convert = Callable[[bytes | None], str | None]

#: Values remembered per column before the memory is cleared.
CACHE_LIMIT: Final = 4096
_NUMBER_TYPES: Final = frozenset({"NUMBER", "INTEGER", "FLOAT"})
_DIGITS: Final = tuple(f"{d:02d}" for d in range(100))


def reference_text(type_name: str, raw: bytes | None) -> str | None:
    """The trail text of a value the slow, obviously right way."""
    return text_of(type_name, decode_value(type_name, raw))


def _reference_number(raw: bytes) -> str:
    text = reference_text("NUMBER", raw)
    assert text is not None  # only NULL has no text
    return text


def number_text(raw: bytes) -> str:
    """``reference_text("NUMBER", raw)`` without Decimal, for up to 14 base-100 digits
    and an exponent that keeps the text under 45 characters; the reference otherwise."""
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
        try:
            digits = "".join([_DIGITS[b - 1] for b in body])
        except IndexError:
            return _reference_number(raw)
        if body[0] == 1 or 0 in body:  # a leading zero digit, or a byte below 1: not canonical
            return _reference_number(raw)
    else:
        if head > 0x3E + 10 or head < 0x3E - 10:
            return _reference_number(raw)
        exp = 0x3E - head
        body = raw[1:-1] if raw[-1] == 0x66 else raw[1:]
        if not body or any(b > 101 or b < 2 for b in body) or body[0] == 101:
            return _reference_number(raw)
        sign = "-"
        digits = "".join([_DIGITS[101 - b] for b in body])
    if len(body) > 14:  # the reference rounds past 28 digits (Decimal's default context)
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
    exact = number_text if type_name in _NUMBER_TYPES else None

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
