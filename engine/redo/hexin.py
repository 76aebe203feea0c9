"""Redo records given as hex, one per line (as support tickets and other tools' tests carry
them): blank lines and ``#`` comments skipped, spaces inside a line ignored."""

from __future__ import annotations

import string
from collections.abc import Iterable, Iterator

from engine.redo import layout as L
from engine.redo.errors import RedoCorruptError, RedoError
from engine.redo.framing import Rba, Record, parse_record

MAX_LINE = 2 * L.MAX_RECORD


def hex_records(lines: Iterable[str], order: L.Order, layout: str) -> Iterator[Record]:
    for no, line in enumerate(lines, 1):
        text = "".join(line.split())
        if not text or text.startswith("#"):
            continue
        if len(text) > MAX_LINE:
            raise RedoCorruptError(f"line {no}: longer than a record can be")
        raw = _raw(text, no)
        try:
            yield parse_record(raw, order, layout, Rba(0, no, 0))
        except RedoError as exc:
            raise type(exc)(f"line {no}: {exc.message}", exc.offset) from exc


def _raw(text: str, no: int) -> bytes:
    """The bytes of line ``no``'s digits; what is wrong with them, by position, when they are not
    hex (a ``0x`` prefix, a letter out of range, a digit lost in copying)."""
    bad = next((i for i, c in enumerate(text) if c not in string.hexdigits), None)
    if bad is not None:
        raise RedoCorruptError(f"line {no}: not hex: {text[bad]!r} at digit {bad + 1}")
    if len(text) % 2:
        raise RedoCorruptError(f"line {no}: an odd number of hex digits ({len(text)})")
    return bytes.fromhex(text)
