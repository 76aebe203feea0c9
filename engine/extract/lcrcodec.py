"""Logical change records on disk: a fixed binary layout, data only (no pickle).

Used where Extract keeps rows of open transactions in files — cache page-out files in
``dirtmp/`` and Bounded Recovery persisted objects. A batch is ``u32 count`` followed by the
records; one record is::

    head   kind u8, rowid-is-NULL u8, thread, sequence, offset, end, scn, subscn, time_us,
           io_type (i64 each), the byte lengths of xid, table, rowid, ref, user, txn_name,
           text, record and the counts of columns and before-columns (u32 each)
    body   the eight strings / bytes (UTF-8), then each column as
           index i64, value length i32 (-1: NULL), value bytes

A :class:`~engine.changes.Fragment` (kind 8: the changes of one transaction in one
redo range, assembled in a task) is one record of its own layout::

    head   kind u8 (8), 0 u8, thread, sequence, offset, end, scn, subscn, time_us,
           first_scn, first_time_us (i64 each), count, lcrs, the number of sessions, refs,
           undone references and table counts, the byte lengths of xid, records, sessions,
           refs, undone and table counts (u32 each)
    body   xid, records (the row record templates), then four lists of texts, each as
           the byte length of every text (u32 each) then the texts: sessions (user, name,
           user, name ...), refs, undone, and table counts (table, io type, rows, table ...)

A fragment with ``marks`` (rows of a table with TOKENS, selected in the task) is kind 9:
the same, then the length of its marks (u32) and the marks, a byte per record.

It is one ``struct`` call per record and one per column: the page-out of a huge transaction
is on the capture's hot path. Every length is checked against what is left of the batch
before it is used; a bad batch is a :class:`~engine.home.datafile.DataError`.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Final

from engine.changes import Entry, Fragment, Kind, Lcr, Position
from engine.home.datafile import DataError
from engine.trail.model import Columns

_HEAD: Final = struct.Struct("<BB8q10I")
_COL: Final = struct.Struct("<qi")
_COUNT: Final = struct.Struct("<I")
_KINDS: Final = {k.value: k for k in Kind}
_FRAG: Final = struct.Struct("<BB9q12I")
_FRAGMENT_KIND: Final = 8
_MARKED_KIND: Final = 9  # a fragment with marks
_SEEN_MAX: Final = 1024  # distinct strings a batch's decoder keeps to share


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _joined(texts: Sequence[str]) -> bytes:
    raw = [_utf8(t) for t in texts]
    return struct.pack(f"<{len(raw)}I", *map(len, raw)) + b"".join(raw)


def _encode_fragment(f: Fragment, append: Callable[[bytes], None]) -> None:
    p = f.pos
    xid = _utf8(f.xid)
    sessions = _joined([t for pair in f.sessions for t in pair])
    refs, undone = _joined(f.refs), _joined(f.undone)
    ops = _joined([str(x) for op in f.table_ops for x in op])
    kind = _MARKED_KIND if f.marks else _FRAGMENT_KIND
    append(
        _FRAG.pack(
            kind, 0, p.thread, p.sequence, p.offset, f.end, f.scn, f.subscn, f.time_us,
            f.first_scn, f.first_time_us, f.count, f.lcrs, len(f.sessions), len(f.refs),
            len(f.undone), len(f.table_ops), len(xid), len(f.records), len(sessions), len(refs),
            len(undone), len(ops),
        )
    )  # fmt: skip
    append(b"".join((xid, f.records, sessions, refs, undone, ops)))
    if f.marks:
        append(_COUNT.pack(len(f.marks)) + f.marks)


def _split(raw: bytes, n: int, what: str) -> list[str]:
    if 4 * n > len(raw):
        raise DataError(f"{what}: {n} texts do not fit in {len(raw)} bytes")
    lengths = struct.unpack_from(f"<{n}I", raw)
    at = 4 * n
    if at + sum(lengths) != len(raw):
        raise DataError(f"{what}: the texts are not the {len(raw) - at} bytes the record holds")
    texts: list[str] = []
    for k in lengths:
        texts.append(raw[at : at + k].decode("utf-8", "surrogatepass"))
        at += k
    return texts


def _decode_fragment(data: bytes, at: int) -> tuple[Fragment, int]:
    if at + _FRAG.size > len(data):
        raise DataError(f"truncated fragment at byte {at}")
    head = _FRAG.unpack_from(data, at)
    (kind, pad, thread, sequence, offset, end, scn, subscn, time_us, first_scn, first_time_us,
     count, lcrs, n_sessions, n_refs, n_undone, n_ops, *lengths) = head  # fmt: skip
    at += _FRAG.size
    if pad or at + sum(lengths) > len(data):
        raise DataError(f"fragment at byte {at} is longer than the batch")
    parts: list[bytes] = []
    for n in lengths:
        parts.append(data[at : at + n])
        at += n
    xid, records, sessions, refs, undone, ops = parts
    flat = _split(sessions, 2 * n_sessions, "sessions")
    counts = _split(ops, 3 * n_ops, "table counts")
    try:
        table_ops = tuple(
            (counts[i], int(counts[i + 1]), int(counts[i + 2])) for i in range(0, len(counts), 3)
        )
    except ValueError as exc:
        raise DataError(f"table counts: {exc}") from exc
    ref_list = _split(refs, n_refs, "refs")
    if len(ref_list) != count:
        raise DataError(f"{len(ref_list)} undo references for {count} rows")
    marks = b""
    if kind == _MARKED_KIND:
        if at + _COUNT.size > len(data):
            raise DataError(f"truncated fragment marks at byte {at}")
        (n_marks,) = _COUNT.unpack_from(data, at)
        at += _COUNT.size
        marks = data[at : at + n_marks]
        at += n_marks
        if n_marks != count or len(marks) != count:
            raise DataError(f"{len(marks)} token marks for {count} rows")
        if max(marks, default=0) > len(table_ops):
            raise DataError(f"a token mark beyond the {len(table_ops)} table counts")
    fragment = Fragment(
        xid.decode("utf-8", "surrogatepass"), Position(thread, sequence, offset), end, scn,
        subscn, time_us, first_scn, first_time_us,
        tuple((flat[i], flat[i + 1]) for i in range(0, len(flat), 2)), records, count,
        tuple(ref_list), tuple(_split(undone, n_undone, "undone")), table_ops, lcrs, marks,
    )  # fmt: skip
    return fragment, at


def encode_lcrs(rows: Sequence[Entry]) -> bytes:
    """One batch holding ``rows`` (changes and fragments)."""
    out: list[bytes] = [_COUNT.pack(len(rows))]
    append = out.append
    try:
        for r in rows:
            if isinstance(r, Fragment):
                _encode_fragment(r, append)
                continue
            p = r.pos
            strings = (
                _utf8(r.xid),
                _utf8(r.table),
                _utf8(r.rowid or ""),
                _utf8(r.ref),
                _utf8(r.user),
                _utf8(r.txn_name),
                _utf8(r.text),
                r.record,
            )
            append(
                _HEAD.pack(
                    r.kind, r.rowid is None,
                    p.thread, p.sequence, p.offset, r.end, r.scn, r.subscn, r.time_us, r.io_type,
                    *map(len, strings), len(r.columns), len(r.before_columns),
                )
            )  # fmt: skip
            append(b"".join(strings))
            for cols in (r.columns, r.before_columns):
                for index, value in cols:
                    if value is None:
                        append(_COL.pack(index, -1))
                    else:
                        raw = _utf8(value)
                        append(_COL.pack(index, len(raw)))
                        append(raw)
    except struct.error as exc:
        raise DataError(f"a change record cannot be written: {exc}") from exc
    return b"".join(out)


def decode_lcrs(data: bytes) -> list[Entry]:
    """The records of one batch; :class:`DataError` unless ``data`` is exactly a batch."""
    size = len(data)
    if size < _COUNT.size:
        raise DataError("truncated batch")
    (count,) = _COUNT.unpack_from(data, 0)
    if count > (size - _COUNT.size) // min(_HEAD.size, _FRAG.size):
        raise DataError(f"batch of {count} records is longer than its {size} bytes")
    at = _COUNT.size
    rows: list[Entry] = []
    unpack_head = _HEAD.unpack_from
    # the same xid, table, user ... row after row: decoded once, one string object (memory)
    seen: dict[bytes, str] = {b"": ""}
    try:
        for _ in range(count):
            if at < size and data[at] in (_FRAGMENT_KIND, _MARKED_KIND):
                fragment, at = _decode_fragment(data, at)
                rows.append(fragment)
                continue
            if at + _HEAD.size > size:
                raise DataError(f"truncated record at byte {at}")
            (kind, null_rowid, thread, sequence, offset, end, scn, subscn, time_us, io_type,
             *lengths, l_record, n_cols, n_before) = unpack_head(data, at)  # fmt: skip
            at += _HEAD.size
            if at + sum(lengths) + l_record > size or (n_cols + n_before) * _COL.size > size - at:
                raise DataError(f"record at byte {at} is longer than the batch")
            k = _KINDS.get(kind)
            if k is None or null_rowid > 1:
                raise DataError(f"invalid record header at byte {at}")
            texts: list[str] = []
            for n in lengths:
                raw = data[at : at + n]
                at += n
                text = seen.get(raw)
                if text is None:
                    text = raw.decode("utf-8", "surrogatepass")
                    if len(seen) < _SEEN_MAX:
                        seen[raw] = text
                texts.append(text)
            record = data[at : at + l_record]
            at += l_record
            columns, at = _columns(data, at, n_cols) if n_cols else ((), at)
            before, at = _columns(data, at, n_before) if n_before else ((), at)
            rows.append(
                Lcr(
                    k, texts[0], Position(thread, sequence, offset), end, scn, subscn, time_us,
                    io_type, texts[1], None if null_rowid else texts[2], columns, before,
                    texts[3], texts[4], texts[5], texts[6], record,
                )
            )  # fmt: skip
    except UnicodeDecodeError as exc:
        raise DataError(f"invalid text in the record at byte {at}") from exc
    if at != size:
        raise DataError(f"{size - at} unexpected bytes after the batch")
    return rows


def _columns(view: bytes, at: int, n: int) -> tuple[Columns, int]:
    size = len(view)
    cols: list[tuple[int, str | None]] = []
    for _ in range(n):
        if at + _COL.size > size:
            raise DataError(f"truncated column at byte {at}")
        index, length = _COL.unpack_from(view, at)
        at += _COL.size
        if length < 0:
            if length != -1:
                raise DataError(f"invalid column length at byte {at}")
            cols.append((index, None))
            continue
        if at + length > size:
            raise DataError(f"column at byte {at} is longer than the batch")
        cols.append((index, view[at : at + length].decode("utf-8", "surrogatepass")))
        at += length
    return tuple(cols), at
