"""Closing transactions inside a task's range: the events of each transaction that begins and
ends there become one :class:`~engine.extract.tasks.plan.Closed` (its trail records finished),
the changes of one left open a :class:`~engine.changes.Fragment`, and the rows left their
record templates (:func:`engine.trail.codec.row_record` with its defaults, which the driver
finishes). Which events go where is :func:`engine.extract.tasks.txngroup.group`'s; the
records are assembled in C (:mod:`engine._native.trailkit`) when it is built, in Python
(:func:`_records_py`, :func:`select_records_py`, its twins) otherwise.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from engine._native import load as load_native
from engine.changes import Fragment, Kind, Position
from engine.expr.rowrule import RowRule
from engine.extract.tasks.assemble import trans_ind
from engine.extract.tasks.plan import Closed, Event, Item, MinePlan
from engine.extract.tasks.rowselect import Cond, select_rows
from engine.extract.tasks.tablerules import (
    fragment_tables,
    one_call,
    rows_in_task,
    select_fragment,
    with_columns,
)
from engine.extract.tasks.txngroup import CLOSED, FRAGMENT, Step, group, table_ops
from engine.trail.codec import commit_tokens, row_record
from engine.trail.errors import RecordLimitError
from engine.trail.layout import IO_TYPE_NAMES, IOType, TransInd
from engine.trail.writer import seal

#: The C assembly of a transaction's trail records, when built.
_KIT: Final = load_native("trailkit")
_BEGIN_IND, _MIDDLE, _END, _WHOLE = (int(t) for t in TransInd)
_INDS: Final = (_BEGIN_IND, _MIDDLE, _END, _WHOLE)
_WHOLE_INDS: Final = (_WHOLE, _WHOLE, _WHOLE, _WHOLE)  # templates: every record whole
_DELETE: Final = int(IOType.DELETE)
_ROW, _ROLLBACK = int(Kind.ROW), int(Kind.ROLLBACK)


def close(events: Iterable[Event], plan: MinePlan, sequence: int) -> list[Item]:
    """Replace the events of every transaction that begins and ends in ``events`` by one
    :class:`Closed` at its end, and the changes of every other transaction whose rows can
    be encoded here by one :class:`~engine.changes.Fragment` at its last change (with
    ``plan.compact``; see the module docstring); the rows left get their record templates
    (:func:`engine.trail.codec.row_record` with its defaults, which the driver finishes).
    Which events go where is :func:`engine.extract.tasks.txngroup.group`'s (in C when built)."""
    rules = plan.rules
    out: list[Item] = []
    listed = events if isinstance(events, list) else list(events)
    # rows of these tables never go in a fragment (their rule needs the driver)
    kept_out = set(rules) - fragment_tables(rules) if rules else rules
    for s in group(listed, plan.compact, plan.fine_xids, kept_out, plan.horizon):
        tag = s[0]
        if tag == CLOSED:
            try:
                out.append(_closed(s, sequence, plan))
            except RecordLimitError:  # the driver finishes them, and says what is wrong
                out.extend(_one_by_one(m, sequence, rules) for m in s[1])
                out.append(s[2])
        elif tag == FRAGMENT:
            out.extend(_fragment(s, sequence, rules))
        else:
            out.append(_one_by_one(s, sequence, rules))
    return out


def _one_by_one(e: Event, sequence: int, rules: Mapping[str, RowRule]) -> Item:
    """An event the driver takes change by change: a row with its record template, or (a
    row of a table with TABLE row options: the driver applies them) with its columns."""
    if e[0] != _ROW or not e[17]:
        return e
    return with_columns(e) if e[9] in rules else _templated(e, sequence)


def _fragment(step: Step, sequence: int, rules: Mapping[str, RowRule]) -> list[Item]:
    """One :class:`Fragment` of a transaction's changes in this range (a
    :data:`~engine.extract.tasks.txngroup.FRAGMENT` step), the rules of its rows' tables applied
    (:func:`~engine.extract.tasks.tablerules.select_fragment`: WHERE and COLS / COLSEXCEPT here,
    the tokens marked for the driver to add at commit), or (a record past a limit, a
    selection that cannot say) the events one by one for the driver."""
    _, events, rows, sessions, refs, undone, ops = step
    marks = b""
    if rules and any(t in rules for t, _, _ in ops):
        selected = select_fragment(rows, rules, table_ops)
        if selected is None:
            return [_one_by_one(e, sequence, rules) for e in events]
        rows, ops, marks = selected
        refs = tuple(r[13] for r in rows)
    try:
        records = _templates(rows, sequence)
    except RecordLimitError:
        return [_one_by_one(e, sequence, rules) for e in events]
    first, end = events[0], events[-1]
    return [
        Fragment(
            first[1], Position(first[2], sequence, first[3]), end[4], end[5], end[6], end[7],
            first[5], first[7], sessions, records, len(rows), refs, undone, ops, len(events),
            marks,
        )
    ]  # fmt: skip


def _templates(rows: list[Event], sequence: int) -> bytes:
    """The record templates of ``rows`` (row_record with its defaults), concatenated: in C
    when the kernel is built; :class:`RecordLimitError` when one passes a limit."""
    if _KIT is not None:
        done = _KIT.records(rows, b"", sequence, 0, _WHOLE_INDS, _DELETE)
        if done is not None:
            return bytes(done)
    out = []
    for r in rows:
        name, data, before, rowid = r[17]
        out.append(row_record(r[8], name, data, before, rowid, sequence, r[3]))
    return b"".join(out)


def _templated(e: Event | Closed, sequence: int) -> Event | Closed:
    if isinstance(e, Closed) or e[0] != _ROW or not e[17]:
        return e
    name, data, before, rowid = e[17]
    return (*e[:17], row_record(e[8], name, data, before, rowid, sequence, e[3]))


def _closed(step: Step, sequence: int, plan: MinePlan) -> Closed:
    """The :class:`Closed` of a :data:`~engine.extract.tasks.txngroup.CLOSED` step: its records
    finished, with the rules of TABLE row options applied to its rows here."""
    _, _, end, rows, _, _, _, ops = step
    kind, xid, scn, time_us = end[0], end[1], end[5], end[7]
    tokens: list[bytes] | None = None
    if kind == _ROLLBACK:
        rows, ops = [], ()
    elif plan.rules and any(t in plan.rules for t, _, _ in ops):
        assert plan.process is not None
        one = one_call(rows, plan.rules, plan.process, xid, scn, time_us, sequence)
        if one is not None:  # usual: selected and assembled in one call
            done_ = _SELECT_RECORDS(rows, *one, commit_tokens(str(scn), xid), sequence,
                                    time_us, _INDS, _DELETE)  # fmt: skip
            if done_ is not None:
                records, count, counts = done_
                if count != len(rows):  # WHERE left some out
                    ops = tuple((one[0], k, v) for k, v in counts)
                return _closed_of(step, sequence, records, count, ops, plan.seal)
        done = rows_in_task(rows, plan.rules, plan.process, xid, scn, time_us, sequence)
        left = len(rows) != len(done)  # WHERE or FILTER left some out: count again
        rows = [r for r, _ in done]
        tokens = [t for _, t in done]
        if left:
            ops = table_ops(rows)
    return _closed_of(
        step,
        sequence,
        _records(rows, scn, xid, sequence, time_us, tokens),
        len(rows),
        ops,
        plan.seal,
    )


def _closed_of(
    step: Step, sequence: int, records: bytes, count: int, ops: Any, sealing: bool = False
) -> Closed:
    """The :class:`Closed` of a step with its finished ``records`` (``count`` of them) and
    their (table, io type, rows); sealed with ``sealing`` (unless a record would pass the
    limit with its checksum: the driver then seals them and says which)."""
    _, events, end, _, sessions, max_time, max_scn, _ = step
    kind, xid, thread, offset, stop, scn, subscn, time_us = end[:8]
    sealed = False
    if sealing and count:
        with contextlib.suppress(RecordLimitError):
            records, sealed = seal(records), True
    by_op: dict[int, int] = {}
    for _, k, v in ops:
        by_op[k] = by_op.get(k, 0) + v
    return Closed(
        xid, thread, sequence, offset, stop, scn, subscn, time_us, kind == _ROLLBACK, sessions,
        records, count,
        tuple((_io_name(k), v) for k, v in by_op.items()),
        tuple(dict.fromkeys(t for t, _, _ in ops)), len(events) + 1, max_time, max_scn,
        tuple((t, _io_name(k), v) for t, k, v in ops), sealed,
    )  # fmt: skip


def _io_name(io: int) -> str:
    return IO_TYPE_NAMES.get(io, f"IOType{io}")


def _records(
    rows: list[Event],
    scn: int,
    xid: str,
    sequence: int,
    time_us: int,
    user: list[bytes] | None = None,
) -> bytes:
    """The trail records of a transaction's rows (their parts made by the miner's
    :meth:`~engine.extract.tasks.miner.Miner._emit`), finished and concatenated: in C
    (:mod:`engine._native.trailkit`) when it is built and no record passes a limit; here
    otherwise, where ``row_record`` says which."""
    if not rows:
        return b""
    tokens = commit_tokens(str(scn), xid)
    if _KIT is not None:
        done = _KIT.records(rows, tokens, sequence, time_us, _INDS, _DELETE, user)
        if done is not None:
            return bytes(done)
    return _records_py(rows, tokens, sequence, time_us, user)


def _records_py(
    rows: list[Event], tokens: bytes, sequence: int, time_us: int, user: list[bytes] | None
) -> bytes:
    """:func:`_records` in Python (``tokens``: the commit tokens of record 0)."""
    records = []
    n = len(rows)
    for i, r in enumerate(rows):
        name, data, before, rowid = r[17]
        records.append(
            row_record(r[8], name, data, before, rowid, sequence, r[3], trans_ind(i, n), time_us,
                       (tokens if i == 0 else b"") + (user[i] if user else b""))
        )  # fmt: skip
    return b"".join(records)


def select_records_py(
    rows: list[Event],
    table: str,
    keep: bytes | None,
    conds: tuple[Cond, ...],
    make: Callable[[int], bytes] | None,
    tokens: bytes,
    sequence: int,
    time_us: int,
    inds: tuple[int, int, int, int] = _INDS,
    delete_io: int = _DELETE,
) -> tuple[bytes, int, tuple[tuple[int, int], ...]] | None:
    """``trailkit.select_records`` in Python (its twin): :func:`select_rows` then the
    transaction's records (:func:`_records_py`, ``tokens`` on record 0): (records, rows
    kept, (io type, rows) in order of first appearance), or None where select says None,
    a record passes a limit or the rows have more than 16 operations."""
    got = select_rows(rows, table, keep, conds, make)
    if got is None:
        return None
    counts: dict[int, int] = {}
    for e, _ in got:
        counts[e[8]] = counts.get(e[8], 0) + 1
    if len(counts) > 16:
        return None
    try:
        records = _records_py([e for e, _ in got], tokens, sequence, time_us, [t for _, t in got])
    except RecordLimitError:
        return None
    return records, len(got), tuple(counts.items())


#: select_records in C when built
_SELECT_RECORDS: Final[Callable[..., tuple[bytes, int, tuple[tuple[int, int], ...]] | None]] = (
    getattr(_KIT, "select_records", None) or select_records_py
)
