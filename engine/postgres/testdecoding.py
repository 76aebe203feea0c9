"""The ``test_decoding`` output plugin's text, parsed (pure: text in, changes out).

One line per change::

    table public.t: INSERT: id[integer]:1 name[text]:'it''s'
    table public.t: UPDATE: old-key: id[integer]:1 new-tuple: id[integer]:2 name[text]:'b'
    table public.t: DELETE: id[integer]:2
    table public.a, public.b: TRUNCATE: (no-flags)

and ``BEGIN xid`` / ``COMMIT xid (at timestamp)`` around each transaction (the options
``include-xids`` and ``include-timestamp``). Column names are quoted as SQL identifiers when
they need it (``"Odd Col"``); values of integer, float and numeric types come bare, booleans
as ``true`` / ``false``, bit strings as ``B'0101'``, every other type as a quoted literal
(``'`` doubled); ``null`` is NULL and ``unchanged-toast-datum`` a TOASTed value the update
did not change (not logged: the column is left out, never written as NULL). The old key
(``old-key:``) leaves NULL columns out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final


class Unchanged:
    """The value of an unchanged TOASTed column (``unchanged-toast-datum``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNCHANGED_TOAST"


UNCHANGED_TOAST: Final = Unchanged()
Value = str | None | Unchanged
#: (column name, type name as format_type gives it, value)
Column = tuple[str, str, Value]


class DecodeError(ValueError):
    """A line that is not test_decoding's; one line with the offset."""


@dataclass(frozen=True, slots=True)
class Change:
    tables: tuple[str, ...]  # one, or several for a TRUNCATE (quoted qualified names)
    op: str  # INSERT | UPDATE | DELETE | TRUNCATE
    new: tuple[Column, ...] = ()
    old: tuple[Column, ...] = ()  # old-key (UPDATE), the old tuple (DELETE)
    flags: str = ""  # TRUNCATE's (no-flags) | restart_seqs | cascade

    @property
    def table(self) -> str:
        return self.tables[0]


@dataclass(frozen=True, slots=True)
class Begin:
    xid: str


@dataclass(frozen=True, slots=True)
class Commit:
    xid: str
    time: str  # as the server printed it (session time zone UTC: '...+00')


@dataclass(frozen=True, slots=True)
class Message:
    """A line this capture does not act on (a logical decoding message)."""

    text: str


Parsed = Change | Begin | Commit | Message


#: one column (``name[type]:value``) or a marker, after optional spaces: a quoted or bare
#: name, the type up to ``]:``, a quoted literal (``'`` doubled) or a bare word
_TOKEN = re.compile(
    r""" *(?:(old-key:|new-tuple:|\(no-tuple-data\))"""
    r"""|("(?:[^"]|"")*"|[^\s\[]+)\[((?:[^\]]|\](?!:))*)\]:('(?:[^']|'')*'(?=\s|$)|\S*))"""
)


def parse_line(data: str) -> Parsed:
    if data.startswith("table "):
        return parse_change(data)
    if data.startswith("BEGIN"):
        return Begin(data[6:].strip())
    if data.startswith("COMMIT"):
        rest = data[7:]
        xid, _, at = rest.partition(" (at ")
        return Commit(xid.strip(), at.rstrip(")"))
    return Message(data)


def _ident(s: str, i: int) -> tuple[str, int]:
    """An identifier at ``s[i]``: quoted (``""`` doubled, kept with its quotes) or bare (up
    to a ``.``, ``[``, ``:``, ``,`` or space); returns it and the offset after it."""
    if i < len(s) and s[i] == '"':
        j = i + 1
        while True:
            k = s.find('"', j)
            if k < 0:
                raise DecodeError(f"unterminated quoted identifier at offset {i}")
            if k + 1 < len(s) and s[k + 1] == '"':
                j = k + 2
                continue
            return s[i : k + 1], k + 1
    j = i
    n = len(s)
    while j < n and s[j] not in ".[:, ":
        j += 1
    if j == i:
        raise DecodeError(f"identifier expected at offset {i}")
    return s[i:j], j


def _qualified(s: str, i: int) -> tuple[str, int]:
    first, i = _ident(s, i)
    parts = [first]
    while i < len(s) and s[i] == ".":
        part, i = _ident(s, i + 1)
        parts.append(part)
    return ".".join(parts), i


def unquote_ident(name: str) -> str:
    return name[1:-1].replace('""', '"') if name.startswith('"') else name


def parse_change(s: str) -> Change:
    i = 6  # after "table "
    colon = s.find(": ", i)
    head = s[i:colon] if colon > 0 else ""
    if head and '"' not in head and "[" not in head:  # plain names: no quoting to undo
        tables = head.split(", ")
        i = colon
    else:
        tables = []
        while True:
            name, i = _qualified(s, i)
            tables.append(name)
            if s.startswith(", ", i):
                i += 2
                continue
            break
    if not s.startswith(": ", i):
        raise DecodeError(f"':' expected after the table name at offset {i}")
    i += 2
    colon = s.find(":", i)
    if colon < 0:
        raise DecodeError(f"operation expected at offset {i}")
    op = s[i:colon]
    i = colon + 1
    if op == "TRUNCATE":
        return Change(tuple(tables), op, flags=s[i:].strip())
    if op not in ("INSERT", "UPDATE", "DELETE"):
        raise DecodeError(f"unknown operation {op!r} at offset {i}")
    old: list[Column] = []
    new: list[Column] = []
    target = old if op == "DELETE" else new
    n = len(s)
    match = _TOKEN.match
    while i < n:
        m = match(s, i)
        if m is None:
            if not s[i:].strip():
                break
            raise DecodeError(f"column expected at offset {i}")
        i = m.end()
        marker, name, type_name, raw = m.groups()
        if marker is not None:
            if marker == "old-key:":
                target = old
            elif marker == "new-tuple:":
                target = new
            continue
        value: Value
        if raw[:1] == "'":
            value = raw[1:-1]
            if "''" in value:
                value = value.replace("''", "'")
        elif raw == "null":
            value = None
        elif raw == "unchanged-toast-datum":
            value = UNCHANGED_TOAST
        else:
            value = raw
        if name[0] == '"':
            name = name[1:-1].replace('""', '"')
        target.append((name, type_name, value))
    return Change(tuple(tables), op, tuple(new), tuple(old))
