"""The PostgreSQL Extract's hot loop: rows of ``pg_logical_slot_peek_changes`` (test_decoding
text) to runs of trail record templates, a transaction's worth of changes per call instead of
change by change.

:func:`scan` uses the C kernel ``engine._native.pgdecode`` when it is built; :func:`scan_py`
is its pure-Python twin, the readable statement of what it does and the reference the tests
hold it to (tests/postgres/test_fastpath.py). Both read ``rows[start:]`` and return
``(events, next)``:

* ``(BEGIN, lsn, xid)`` and ``(COMMIT, lsn, xid, time)`` for the transaction lines;
* ``(RUN, templates, count, ops, changes)`` for consecutive changes of tables in ``tables``:
  ``count`` record templates (:func:`~engine.trail.codec.row_record` with its defaults, as
  :meth:`~engine.postgres.capture.PgCapture._row` makes them) concatenated, ``ops`` the
  ``(qualified, io type, rows)`` they hold in order of first appearance, ``changes`` the
  change lines they cover (a table whose spec is None, not captured, adds lines, no records);
* ``(SLOW, lsn, data)`` for a line left to the Python path of
  :class:`~engine.postgres.capture.PgCapture`; the scan stops after it.

A line is left to Python whenever it is anything but the common case: a table missing from
``tables`` (the capture then reads its catalog and adds it), a TRUNCATE, a logical message, a
quoted table name, a column the spec does not name (added since), columns out of order,
``(no-tuple-data)``, a value a conversion must see that is not ASCII, anything malformed, or
a record past a trail limit (the Python path then says which).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, NamedTuple

from engine._native import load as load_native
from engine.postgres.types import CONVERSION_OF_CODE
from engine.trail.codec import column_entry, row_record
from engine.trail.errors import RecordLimitError
from engine.trail.layout import BEFORE_IMAGE, MAX_VALUE_LENGTH, IOType

BEGIN, COMMIT, RUN, SLOW = 0, 1, 2, 3
#: the modes of engine.extract.tasks.decode's BEFORES_* (0 none, 1 a before-image record,
#: 2 and 3 a unified record)
BEFORES_NONE, BEFORES_RECORD = 0, 1
#: distinct tables one call keeps (the next is left to Python, which calls again)
MAX_TABLES: Final = 64
#: (table, io type) pairs of one run (a change that adds more starts a new run)
MAX_OPS: Final = 16
#: template bytes after which a run is ended
RUN_LIMIT: Final = 8 << 20

_NATIVE: Final = load_native("pgdecode")
_WS: Final = frozenset(" \t\n\v\f\r")

Row = tuple[int, str]
Event = tuple[Any, ...]
Entry = tuple[int, str | None]


class TableSpec(NamedTuple):
    """What the kernel needs of a captured table (capture.PgCapture._spec makes it)."""

    qualified: str  # as test_decoding prints it (the trail's table name)
    name: bytes  # its bytes in records
    columns: tuple[str, ...]  # column names, unquoted, in column index order
    conversions: bytes  # per column: types.CONVERSION_CODES, 0 for one not written
    keys: tuple[int, ...]  # the key columns' indexes (capture._key_idx)
    full_old: bool  # a delete's key is every column (REPLICA IDENTITY FULL, no KEYCOLS)
    identity_full: bool  # REPLICA IDENTITY FULL
    befores: int  # how updates carry before images (BEFORES_*)


Tables = dict[str, TableSpec | None]


def scan(rows: Sequence[Row], start: int, tables: Tables) -> tuple[list[Event], int]:
    """``(events, next)`` of ``rows[start:]``: in C when the kernel is built."""
    if _NATIVE is not None:
        rows = rows if isinstance(rows, list) else list(rows)
        events, nxt = _NATIVE.scan(rows, start, tables)
        return events, nxt
    return scan_py(rows, start, tables)


class _Decline(Exception):
    """The line goes to the Python path."""


class _Run:
    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0
        self.count = 0
        self.changes = 0
        self.ops: dict[tuple[str, int], int] = {}

    def emit(self, events: list[Event]) -> None:
        if self.changes or self.count:
            ops = tuple((t, io, n) for (t, io), n in self.ops.items())
            events.append((RUN, b"".join(self.parts), self.count, ops, self.changes))
        self.__init__()  # type: ignore[misc]


def scan_py(rows: Sequence[Row], start: int, tables: Tables) -> tuple[list[Event], int]:
    """:func:`scan` in Python (the kernel's twin)."""
    events: list[Event] = []
    run = _Run()
    seen: set[str] = set()  # the tables this call found in ``tables`` (at most MAX_TABLES)
    i = max(0, start)
    n = len(rows)
    while i < n:
        lsn, data = rows[i]
        i += 1
        try:
            _line(events, run, seen, tables, lsn, data)
        except _Decline:
            run.emit(events)
            events.append((SLOW, lsn, data))
            break
        if run.size > RUN_LIMIT:
            run.emit(events)
    else:
        i = n
    run.emit(events)
    return events, i


def _digits(s: str) -> bool:
    return bool(s) and all("0" <= ch <= "9" for ch in s)


def _line(events: list[Event], run: _Run, seen: set[str], tables: Tables, lsn: int, s: str) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        raise _Decline from None
    if s.startswith("BEGIN ") and len(s) > 6:
        if not _digits(s[6:]):
            raise _Decline
        run.emit(events)
        events.append((BEGIN, lsn, s[6:]))
        return
    if s.startswith("COMMIT ") and len(s) > 7:
        k = 7
        while k < len(s) and "0" <= s[k] <= "9":
            k += 1
        at = s[k + 5 : -1]
        if (
            k == 7
            or len(s) - k < 7
            or not s.startswith(" (at ", k)
            or not s.endswith(")")
            or not at
            or any(ch not in "0123456789 :.+-" for ch in at)
        ):
            raise _Decline
        run.emit(events)
        events.append((COMMIT, lsn, s[7:k], at))
        return
    if not s.startswith("table "):
        raise _Decline
    colon = s.find(": ", 6)
    if colon <= 6:
        raise _Decline
    head = s[6:colon]
    if '"' in head or "[" in head or ", " in head:
        raise _Decline
    i = colon + 2
    op = s[i : i + 7]
    if op not in ("INSERT:", "UPDATE:", "DELETE:"):
        raise _Decline
    i += 7
    if head not in tables:
        raise _Decline
    if head not in seen:
        if len(seen) == MAX_TABLES:
            raise _Decline
        seen.add(head)
    spec = tables[head]
    if spec is None:
        run.changes += 1
        return
    new, old = _columns(spec, s, i, op == "DELETE:")
    records = _change(spec, op[0], lsn, new, old)
    ios = [io for io, _ in records]
    if len(run.ops) + len(ios) > MAX_OPS:  # a new run for what does not fit
        run.emit(events)
    for io, record in records:
        key = (spec.qualified, io)
        run.ops[key] = run.ops.get(key, 0) + 1
        run.parts.append(record)
        run.size += len(record)
    run.count += len(records)
    run.changes += 1


def _columns(spec: TableSpec, s: str, i: int, is_delete: bool) -> tuple[list[Entry], list[Entry]]:
    """The new and old images of a change line from ``s[i]``: (column index, value)."""
    new: list[Entry] = []
    old: list[Entry] = []
    target = old if is_delete else new
    n = len(s)
    hint = 0
    index = spec.columns
    while True:
        while i < n and s[i] == " ":
            i += 1
        if i >= n:
            break
        if s.startswith("old-key:", i):
            target = old
            i += 8
            continue
        if s.startswith("new-tuple:", i):
            target = new
            i += 10
            continue
        if s[i] == '"':
            j = _closing(s, i, '"')
            name = s[i + 1 : j].replace('""', '"')
            i = j + 1
        else:
            j = i
            while j < n and s[j] not in _WS and s[j] != "[":
                j += 1
            if j == i:
                raise _Decline
            name = s[i:j]
            i = j
        if i >= n or s[i] != "[":
            raise _Decline
        j = s.find("]:", i + 1)
        if j < 0:
            raise _Decline
        i = j + 2
        value: str | None
        null = toast = False
        if i < n and s[i] == "'":
            k = _closing(s, i, "'")
            value = s[i + 1 : k].replace("''", "'")
            i = k + 1
        else:
            k = i
            while k < n and s[k] not in _WS:
                k += 1
            value = s[i:k]
            i = k
            null = value == "null"
            toast = value == "unchanged-toast-datum"
        if i < n and s[i] != " ":
            raise _Decline
        c = -1
        ncols = len(index)
        for k in range(ncols):
            cand = (hint + k) % ncols
            if index[cand] == name:
                c = cand
                break
        if c < 0:
            raise _Decline  # a column the catalog did not have
        hint = c + 1
        if target and target[-1][0] >= c:
            raise _Decline
        code = spec.conversions[c]
        if code == 0 or toast:
            continue  # unsupported, or TOAST left alone
        if null:
            target.append((c, None))
            continue
        assert value is not None
        if code not in (1, 2) and not value.isascii():
            raise _Decline
        if code == 2 and value.startswith("\\x") and not value.isascii():
            raise _Decline
        converted = CONVERSION_OF_CODE[code](value)
        if len(converted.encode("utf-8")) > MAX_VALUE_LENGTH:
            raise _Decline
        target.append((c, converted))
    return new, old


def _closing(s: str, i: int, quote: str) -> int:
    """The closing quote of the quoted text at ``s[i]`` (the quote doubled inside)."""
    j = i + 1
    while True:
        j = s.find(quote, j)
        if j < 0:
            raise _Decline
        if s.startswith(quote, j + 1):
            j += 2
            continue
        return j


def _full_old(spec: TableSpec, image: list[Entry]) -> list[Entry]:
    have = dict(image)
    return [(c, have.get(c)) for c, code in enumerate(spec.conversions) if code]


def _change(
    spec: TableSpec, op: str, lsn: int, new: list[Entry], old: list[Entry]
) -> list[tuple[int, bytes]]:
    """The records of one change (capture.PgCapture._lcrs' shapes): (io type, template)."""

    def rec(io: int, data: Sequence[Entry], before: Sequence[Entry] = ()) -> tuple[int, bytes]:
        try:
            d = b"".join([column_entry(c, v) for c, v in data])
            b = b"".join([column_entry(c, v) for c, v in before])
            return io, row_record(io, spec.name, d, b, None, lsn >> 32, lsn & 0xFFFFFFFF)
        except RecordLimitError:
            raise _Decline from None

    if op == "I":
        return [rec(IOType.INSERT, new)]
    keys = spec.keys
    if op == "D":
        if spec.full_old:
            return [rec(IOType.DELETE, _full_old(spec, old))]
        kept = [(c, v) for c, v in old if c in keys]
        return [rec(IOType.DELETE, kept or old)]
    after = dict(new)
    before_full = _full_old(spec, old) if old and spec.identity_full else old
    before = dict(before_full)
    key_changed = bool(old) and any(
        c in before and c in after and before[c] != after[c] for c in keys
    )
    if key_changed:
        bimg = before_full if spec.befores else [(c, before[c]) for c in keys if c in before]
        return [rec(IOType.KEYFIELDCOMP, new, bimg)]
    if spec.befores == BEFORES_NONE:
        return [rec(IOType.FIELDCOMP, new)]
    bcols = before_full or [(c, after[c]) for c in keys if c in after]
    if spec.befores == BEFORES_RECORD:
        return [rec(IOType.FIELDCOMP | BEFORE_IMAGE, bcols), rec(IOType.FIELDCOMP, new)]
    return [rec(IOType.UNIFIED_UPDATE, new, bcols)]
