"""Which of a redo range's events form which transaction: the per-change half of
:func:`engine.extract.tasks.closing.close`, in one pass of C (:mod:`engine._native.txngroup`) when
the kernel is built; :func:`group_py` here is its readable twin, and a property test holds
the two to the same steps.

:func:`group` reads the events of one range, in log order, and says what becomes of each:

- a transaction that begins (5.2) and ends (5.4) in the range, every change of it there, is
  *closed* in the task: one :data:`CLOSED` step at its end, with its changes, the rows left
  after its rollbacks to savepoint, and its counts;
- the changes of another transaction that can travel as one
  :class:`~engine.changes.Fragment` (every change a 5.2, 5.20, 5.6 or a row encoded here
  of a table not in ``rules``, the tables whose TABLE row options need the driver:
  ``closing.close`` passes those :func:`~engine.extract.tasks.tablerules.fragment_tables` leaves
  out; not restored by Bounded Recovery; below the thread merge's ``horizon``) become one
  :data:`FRAGMENT` step at the last of them;
- any other event is a step of its own (the event itself: the driver takes it one by one).

The steps hold everything that needs a look at each change (membership, rows, sessions,
highest SCN and time, counts per table and operation); what is left to do per transaction
(its trail records, the rules of TABLE row options, the objects) is closing.close's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Container, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, Final

from engine._native import load as load_native
from engine.changes import Kind

Event = tuple[Any, ...]
#: (table, io type, rows) in order of first appearance.
TableOps = tuple[tuple[str, int, int], ...]
#: (CLOSED, changes, end, rows, sessions, max time, max SCN, table ops): a closed
#: transaction; ``rows`` are its row events that no rollback to savepoint undid.
CLOSED: Final = -1
#: (FRAGMENT, changes, rows, sessions, row refs, undone refs, table ops).
FRAGMENT: Final = -2
Step = tuple[Any, ...]

_ROW, _BEGIN, _COMMIT, _ROLLBACK = (
    int(Kind.ROW),
    int(Kind.BEGIN),
    int(Kind.COMMIT),
    int(Kind.ROLLBACK),
)
_SESSION, _UNDO = int(Kind.SESSION), int(Kind.UNDO)
_ENDS: Final = frozenset({_COMMIT, _ROLLBACK})
_FRAGMENT_KINDS: Final = frozenset({_ROW, _BEGIN, _SESSION, _UNDO})
#: The kinds, in the order the kernel takes them.
KINDS: Final = (_ROW, _BEGIN, _COMMIT, _ROLLBACK, _SESSION, _UNDO)

_KERNEL: Final = load_native("txngroup")


def group(
    events: list[Event],
    compact: bool,
    fine_xids: AbstractSet[str],
    rules: Container[str],
    horizon: int | None,
) -> list[Step]:
    """The steps of ``events`` (see the module docstring), in log order. With ``compact``
    False, every event is a step of its own. ``fine_xids`` are never closed nor made
    fragments (Bounded Recovery restored them); rows of tables in ``rules`` never go in a
    fragment; a transaction ending above ``horizon`` is not closed, and its fragment ends
    before its first change above it."""
    if _KERNEL is not None:
        steps: list[Step] = _KERNEL.group(events, compact, fine_xids, rules, horizon, KINDS)
        return steps
    return group_py(events, compact, fine_xids, rules, horizon)


def group_py(
    events: Sequence[Event],
    compact: bool,
    fine_xids: AbstractSet[str],
    rules: Container[str],
    horizon: int | None,
) -> list[Step]:
    """:func:`group` in Python (the kernel's twin)."""
    if not compact:
        return list(events)
    closing = _closing(events, fine_xids, horizon)
    last = _fragmenting(events, fine_xids, rules, horizon, closing)
    held: dict[str, list[Event]] = {x: [] for x in closing}
    parts: dict[str, list[Event]] = {x: [] for x in last}
    out: list[Step] = []
    for i, e in enumerate(events):
        xid = e[1]
        if xid in closing:
            if e[0] in _ENDS:
                out.append(_closed(held.pop(xid), e))
            else:
                held[xid].append(e)
        elif xid in last and i <= last[xid]:
            mine = parts[xid]
            mine.append(e)
            if i == last[xid]:
                out.append(_fragment(mine))
        else:
            out.append(e)
    return out


def _closing(events: Sequence[Event], fine_xids: AbstractSet[str], horizon: int | None) -> set[str]:
    """The transactions whose every change is in ``events``, from 5.2 to 5.4."""
    begun: set[str] = set()
    ended: set[str] = set()
    blocked: set[str] = set(fine_xids)
    for e in events:
        k, xid = e[0], e[1]
        if k == _BEGIN:
            if xid in begun or xid in ended:
                blocked.add(xid)
            begun.add(xid)
        elif xid not in begun or xid in ended:
            blocked.add(xid)  # a change before its begin, or after its end
        elif k in _ENDS:
            if horizon is not None and e[5] > horizon:
                blocked.add(xid)
            ended.add(xid)
        elif k == _ROW and not e[17]:
            blocked.add(xid)  # a row the driver must see (hooked table, record too large)
    return ended - blocked


def _fragmenting(
    events: Sequence[Event],
    fine_xids: AbstractSet[str],
    rules: Container[str],
    horizon: int | None,
    closing: set[str],
) -> dict[str, int]:
    """The transactions (not closed here) whose changes in ``events`` become a fragment,
    with the index of the last of those changes: every change is a 5.2, a 5.20, an undo,
    or a row encoded here of a table without TABLE row options, and one at least is a
    row. With a thread-merge ``horizon``, a fragment ends before the first change above it
    (the changes from there on come one by one): the driver applies a fragment whole,
    never holds part of it above its watermark (capture.py)."""
    last: dict[str, int] = {}
    spoilt: set[str] = set(fine_xids) | closing  # no fragment
    cut: set[str] = set()  # the fragment ended: the changes after it come one by one
    rows: set[str] = set()
    ended: set[str] = set()
    for i, e in enumerate(events):
        k, xid = e[0], e[1]
        if xid in spoilt or xid in cut:
            continue
        if horizon is not None and e[5] > horizon:
            cut.add(xid)
        elif k in _ENDS:
            ended.add(xid)
        elif xid in ended or k not in _FRAGMENT_KINDS:
            spoilt.add(xid)  # a change after the end, a DDL
        elif k == _ROW:
            if not e[17] or e[9] in rules:
                spoilt.add(xid)
            else:
                rows.add(xid)
                last[xid] = i
        else:
            last[xid] = i
    return {x: i for x, i in last.items() if x in rows and x not in spoilt}


def _sessions(events: Sequence[Event]) -> tuple[tuple[str, str], ...]:
    return tuple(dict.fromkeys((e[14], e[15]) for e in events if e[0] == _SESSION))


def table_ops(rows: Sequence[Event]) -> TableOps:
    """(table, io type, rows) of ``rows``, in order of first appearance."""
    return tuple((t, k, v) for (t, k), v in Counter((r[9], r[8]) for r in rows).items())


def _closed(events: list[Event], end: Event) -> Step:
    undone = {e[13] for e in events if e[0] == _UNDO and e[13]}
    rows = [e for e in events if e[0] == _ROW and e[13] not in undone]
    max_time = max([end[7], *(e[7] for e in events)])
    max_scn = max([end[5], *(e[5] for e in events)])
    return (CLOSED, events, end, rows, _sessions(events), max_time, max_scn, table_ops(rows))


def _fragment(events: list[Event]) -> Step:
    rows = [e for e in events if e[0] == _ROW]
    refs = tuple(r[13] for r in rows)
    undone = tuple(e[13] for e in events if e[0] == _UNDO and e[13])
    return (FRAGMENT, events, rows, _sessions(events), refs, undone, table_ops(rows))
