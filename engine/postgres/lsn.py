"""Log sequence numbers: PostgreSQL's ``X/Y`` text (two 32-bit halves in hex) and the 64-bit
integer the trail's CSN and the checkpoints carry."""

from __future__ import annotations

import re

_LSN = re.compile(r"^([0-9A-Fa-f]{1,8})/([0-9A-Fa-f]{1,8})$")


class BadLsn(ValueError):
    """Text that is no LSN; one line."""


def parse_lsn(text: str) -> int:
    """``'0/16B3748'`` -> 23803720; a plain decimal integer is taken as it is."""
    t = text.strip()
    if t.isdigit():
        return int(t)
    m = _LSN.match(t)
    if m is None:
        raise BadLsn(f"{text!r} is not an LSN (like 0/16B3748)")
    return (int(m.group(1), 16) << 32) | int(m.group(2), 16)


def format_lsn(value: int) -> str:
    return f"{value >> 32:X}/{value & 0xFFFFFFFF:X}"
