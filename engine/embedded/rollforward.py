"""Instance recovery's roll forward: the changes committed in the logs after the last
checkpoint applied to the tables, as Oracle applies the online redo to its blocks.

The tables (and ``_gg_state``, ``_gg_pieces``) are SQLite's as of the last checkpoint; the
redo after it (records with an SCN above the saved counter) was flushed at commits. The
records of every thread after that SCN are read with the framing reader and mined by the
redo room's :class:`engine.redo.capture.Miner` (the Extract's: rows in pieces bound into
one row change, savepoint rollbacks taking back the change they undo), merged across
threads by SCN (stable: log order within a thread). Each transaction's row changes are
kept until its 5.4: a commit applies them, in redo order, to the rows at their ROWIDs
(``_rid`` = block << 16 | slot); a rollback drops them; one still open at the end of the
logs is left to the rollback that follows (recovery.py). Row locks serialise the
transactions that change one row, so applying each at its commit is the redo order for
every row.

- INSERT (11.2, 11.11 array, and the embedded database's direct-path loads, 19.1, which
  the miner puts in the loader's transaction): the row at its ROWID with the redo's values
  (columns the redo leaves out are NULL: trailing NULLs are not logged). A row in several
  pieces (chained) gets its ``_gg_pieces`` entry when its insert is read, whatever becomes
  of the insert (as the writer keeps it): the head and the other pieces' ROWIDs (the
  miner's, in log order: the writer logs the last piece first, the head last) with the
  column ranges the writer cuts a row into (:func:`engine.embedded.rows.row_pieces`).
- UPDATE: the columns the redo sets (an 11.5 logs only the changed ones, plus the key from
  the supplemental data), on the row as the tables have it: its other columns are the
  before state. An update that re-chained the row (engine/embedded/chained.py ``rechain``:
  pieces in the redo that the row's ``_gg_pieces`` entry does not name, the new ones,
  logged last first) moves the entry to them, with the column ranges of its whole row,
  when it is applied (a re-chain rolled back leaves the old pieces, as the writer does).
- DELETE: the row goes (a chained row's ``_gg_pieces`` entry stays, as a DELETE leaves it).
- A savepoint rollback after the checkpoint that takes back a change of a transaction open
  at the checkpoint made before it (in the tables, not in the redo read: the miner finds
  nothing to take back): the saved session's undo entry of that change (by its UBA, which
  the writer's 5.6 names) is applied at the commit, in its place among the changes.
- The state that goes with them: every ROWID the redo used (committed or not) moves its
  table's space allocator and the block counter past it, so no ROWID is given out twice;
  the blocks a committed transaction changed are noted dirty (for the next reader's
  cleanout) and a 4.1 cleanout in the redo cleans them again; the session and audit
  session ids go past those of the 5.20s. The same pass gives
  recovery the :class:`Tail` (highest SCN, slot sequences, transactions begun and ended)
  and the latest redo time.

Idempotent: nothing of this is committed before recovery's checkpoint commits the tables,
the counters and the sessions in one SQLite transaction; recovery killed before that leaves
the tables as they were, and the next open applies the same redo to them again. A row the
redo inserts at a ROWID the tables already hold is ``GGS-SRC-0111`` (the tables are not
the checkpoint's), never overwritten.

Not applied: a savepoint rollback of a change from before the checkpoint whose undo entry
no saved session has (reported in :attr:`RollForward.missed`); changes of tables the
dictionary no longer has.
"""

from __future__ import annotations

import heapq
import sqlite3
import struct
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Protocol

from engine.embedded import redogen as rg
from engine.embedded.dictionary import ColumnDef, TableDef
from engine.embedded.errors import DatabaseError
from engine.embedded.logfile import micros_of_redo_time, read_head, read_raw
from engine.embedded.logs import list_logs
from engine.embedded.oradict import oracle_dictionary
from engine.embedded.rows import encode_row, row_pieces
from engine.embedded.state import Engine, UndoEntry
from engine.embedded.undo import apply_undo
from engine.embedded.values import to_sqlite
from engine.redo import capture as C
from engine.redo import framing as F
from engine.redo import vectors as V
from engine.redo.codecs import Value as EmbeddedValue
from engine.redo.errors import RedoError
from engine.redo.ids import Uba, make_dba
from engine.redo.rowid import parse_rowid
from engine.redo.values import Value
from engine.redo.vectors import Xid

Slot = tuple[int, int]  # (undo segment, slot)
XidKey = tuple[int, int, int]  # (undo segment, slot, sequence)


@dataclass
class Tail:
    """What instance recovery needs of the redo after the checkpoint besides its rows."""

    scn: int = 0  # the highest SCN there (0: none)
    sqn: dict[Slot, int] = field(default_factory=dict)  # highest sequence per slot
    begun: dict[XidKey, int] = field(default_factory=dict)  # xid -> thread of its 5.2
    ended: dict[XidKey, bool] = field(default_factory=dict)  # xid -> rolled back


@dataclass
class RollForward:
    """What a roll forward applied (and the :class:`Tail` it read)."""

    transactions: int = 0  # committed transactions applied
    undone: int = 0  # of them, saved undo entries (module docstring)
    last_us: int = 0  # the latest redo time (LWN) read, microseconds since 1970
    changes: int = 0  # row changes applied
    missed: list[str] = field(default_factory=list)  # see the module docstring
    tail: Tail = field(default_factory=Tail)


#: what the roll forward changes: the database's SQLite tables and chained rows, through the
#: session layer's protocol (``database.Database``)
Target = Engine


class Space(Protocol):
    """The counters the roll forward moves (``database.State``)."""

    space: dict[str, list[int]]
    next_block: int
    dirty: dict[int, list[tuple[int, int, int]]]
    next_sid: int  # the last session id given out
    audit: int  # the last audit session id given out


def tail_records(redo_dir: Path, after_scn: int, threads: int) -> Iterator[tuple[int, F.Record]]:
    """The records of every thread with an SCN above ``after_scn``, threads merged by SCN
    (stable: log order within a thread); only the logs that can hold one are read."""
    per_thread: list[Iterator[tuple[int, F.Record]]] = []
    for thread in range(1, threads + 1):
        logs = []
        for info in reversed(list_logs(redo_dir, thread)):
            if info.next_scn and info.next_scn <= after_scn:
                break
            mark = read_head(info.path)[1] if not info.next_scn else None
            if mark is not None and mark.scn <= after_scn:
                break
            logs.append(info.path)
            if info.first_scn <= after_scn:
                break
        per_thread.append(_records(thread, list(reversed(logs)), after_scn))
    yield from heapq.merge(*per_thread, key=lambda tr: tr[1].scn)


def _records(thread: int, logs: list[Path], after_scn: int) -> Iterator[tuple[int, F.Record]]:
    for path in logs:
        for r in read_raw(path, after_scn):
            yield thread, r


#: one change of an open transaction: a row change of the redo (its miner ref, the change,
#: its other pieces' ROWIDs), or an undo entry of a transaction open at the checkpoint that
#: a savepoint rollback after it applied
_Change = tuple[str, C.RowEvent, tuple[str, ...]] | UndoEntry


@dataclass
class _Open:
    changes: list[_Change] = field(default_factory=list)


def roll_forward(
    db: Target,
    state: Space,
    records: Iterator[tuple[int, F.Record]],
    saved: Mapping[tuple[int, int, int], Sequence[UndoEntry]] | None = None,
) -> RollForward:
    """Apply the committed changes of ``records`` (module docstring). ``saved``: the undo
    entries of the transactions open at the checkpoint (their sessions, saved with it), by
    transaction id: a savepoint rollback in the redo that takes back one of their changes
    from before the checkpoint applies that entry (it is in the tables, not in the redo)."""
    try:
        return _roll_forward(db, state, records, saved or {})
    except RedoError as exc:  # (the miner stops: a row it cannot bind or read)
        raise DatabaseError(
            f"instance recovery cannot roll forward: {exc.message}", "GGS-SRC-0111"
        ) from None


def _roll_forward(
    db: Target,
    state: Space,
    records: Iterator[tuple[int, F.Record]],
    saved: Mapping[tuple[int, int, int], Sequence[UndoEntry]],
) -> RollForward:
    dictionary = oracle_dictionary(db.dictionary, 1 << 62)
    miner = C.Miner(dictionary, lambda _t: True, befores=False)
    out = RollForward()
    open_: dict[Xid, _Open] = {}
    missed: set[str] = set()
    tail = out.tail
    for thread, rec in records:
        if rec.scn > tail.scn:
            tail.scn = rec.scn
        if rec.lwn is not None:
            out.last_us = max(out.last_us, micros_of_redo_time(rec.lwn.time))
        applied = []
        for v in rec.vectors:
            layer, code = v.layer, v.code
            if layer == 4 and code == 1:  # a reader cleaned the block out
                state.dirty.pop(v.dba, None)
            elif layer == 5 and code in (6, 11, 20):
                if code == 20:
                    _session_seen(state, v)
                else:
                    applied.append(_undone(v))
        events = miner.feed(rec)
        for ev in events:
            if isinstance(ev, C.TxRow):
                row = ev.row
                _allocated(db, state, row, ev.pieces)
                if row.op == "INSERT" and ev.pieces:  # (kept whatever becomes of the insert)
                    _keep_pieces(db, row, ev.pieces)
                open_.setdefault(ev.xid, _Open()).changes.append((ev.ref, row, ev.pieces))
            elif isinstance(ev, C.TxUndo):
                t = open_.get(ev.xid)
                if t is not None:
                    t.changes = [c for c in t.changes if isinstance(c, UndoEntry) or c[0] != ev.ref]
            elif isinstance(ev, C.TxBegin):
                tail.begun[_seen(tail, ev.xid)] = thread
            elif isinstance(ev, C.TxEnd):
                tail.ended[_seen(tail, ev.xid)] = ev.rollback
                t = open_.pop(ev.xid, None)
                if t is None or ev.rollback or not t.changes:
                    continue
                blocks: set[int] = set()
                for change in t.changes:
                    blocks.add(_apply_change(db, change))
                out.transactions += 1
                out.changes += len(t.changes)
                out.undone += sum(isinstance(c, UndoEntry) for c in t.changes)
                db.note_commit(blocks - {0}, ev.commit_scn)
        if not applied:
            continue
        took = {ev.xid for ev in events if isinstance(ev, C.TxUndo)}
        for got in applied:
            if got is None or got[0] in took:
                continue
            xid, uba = got
            entry = next(
                (e for e in saved.get((xid.usn, xid.slt, xid.sqn), ()) if e.names(uba)), None
            )
            t = open_.setdefault(xid, _Open())
            if entry is None:
                missed.add(xid.text())
            elif entry not in t.changes:  # (a chained row's pieces: one entry, several records)
                t.changes.append(entry)
    out.missed = sorted(missed)
    return out


def _session_seen(state: Space, v: F.Vector) -> None:
    """A 5.20's session id and audit session id (fields 0 and 4 of the embedded database's
    writer: :data:`engine.redo.vectors.SESSION_AT`, ``SESSION_AUDIT_AT``): the counters go
    past them, so a session made after recovery is not taken for one of the redo's."""
    f0 = v.fields[0] if v.fields else b""
    off, fmt = V.SESSION_AT["session"]
    if len(f0) >= off + struct.calcsize(fmt):
        state.next_sid = max(state.next_sid, struct.unpack_from(v.order + fmt, f0, off)[0])
    f4 = v.fields[4] if len(v.fields) > 4 else b""
    off, fmt = V.SESSION_AUDIT_AT["audit_sid"]
    if len(f4) >= off + struct.calcsize(fmt):
        state.audit = max(state.audit, struct.unpack_from(v.order + fmt, f4, off)[0])


def _seen(tail: Tail, xid: Xid) -> XidKey:
    """A transaction id the redo used: its slot's sequence is at least its."""
    slot = (xid.usn, xid.slt)
    tail.sqn[slot] = max(tail.sqn.get(slot, 0), xid.sqn)
    return xid.usn, xid.slt, xid.sqn


def _undone(v: F.Vector) -> tuple[Xid, Uba] | None:
    """The transaction and undo address a 5.6 / 5.11 of the embedded database's writer
    names in its field 1 (:data:`engine.redo.vectors.UNDO_APPLIED_AT`)."""
    f = v.fields[1] if len(v.fields) > 1 else b""
    if len(f) < V.UNDO_APPLIED_SIZE:
        return None
    got = {
        k: struct.unpack_from(v.order + fmt, f, off)[0]
        for k, (off, fmt) in V.UNDO_APPLIED_AT.items()
    }
    xid = Xid(got["usn"], got["slt"], got["sqn"])
    return xid, Uba(got["uba_dba"], got["uba_seq"], got["uba_rec"])


def _apply_change(db: Target, change: _Change) -> int:
    if isinstance(change, UndoEntry):
        table = db.dictionary.tables.get(change.table)
        if table is None:
            return 0
        apply_undo(db, table, change)
        return make_dba(table.file_no, change.rids[0] >> 16)
    _ref, row, pieces = change
    dba = apply(db, row, pieces)
    if row.op == "UPDATE" and pieces:
        table = _table(db, row)
        rid = _rid(row.rowid)[1]
        had = {r for r, *_ in (db.chained.get(table.obj, {}).get(rid, ()) if table else ())}
        moved = tuple(p for p in pieces if _rid(p)[1] not in had)
        if moved:  # a re-chain (its new pieces: the ones the row did not have)
            _keep_pieces(db, row, moved)
    return dba


def _table(db: Target, row: C.RowEvent) -> TableDef | None:
    return db.dictionary.tables.get(f"{row.table.owner}.{row.table.name}")


_RIDS: dict[str, tuple[int, int]] = {}  # ROWID texts parsed (an insert's: twice)


def _rid(rowid: str) -> tuple[int, int]:
    """(block, rid) of a ROWID text."""
    got = _RIDS.get(rowid)
    if got is None:
        _obj, _file, block, slot = parse_rowid(rowid)
        if len(_RIDS) > 65_536:
            _RIDS.clear()
        got = _RIDS[rowid] = (block, block << 16 | slot)
    return got


#: a table's columns by name, by the table's id (the table kept: its id stays its own)
_COLUMNS: dict[int, tuple[TableDef, dict[str, ColumnDef]]] = {}
#: the statements apply runs, by (table, operation, the columns it sets)
_SQL: dict[tuple[str, str, tuple[str, ...]], str] = {}


def _columns(table: TableDef) -> dict[str, ColumnDef]:
    got = _COLUMNS.get(id(table))
    if got is None or got[0] is not table:
        if len(_COLUMNS) > 4096:
            _COLUMNS.clear()
        got = _COLUMNS[id(table)] = (table, {c.name: c for c in table.columns})
    return got[1]


def _sql(table: TableDef, op: str, names: tuple[str, ...]) -> str:
    key = (table.sqlite_name, op, names)
    text = _SQL.get(key)
    if text is None:
        name = f'"{table.sqlite_name}"'
        if op == "INSERT":
            cols = ", ".join(f'"{n}"' for n in names)
            text = (
                f'INSERT INTO {name} ("_rid", {cols}) VALUES ({", ".join("?" * (len(names) + 1))})'
            )
        elif op == "UPDATE":
            sets = ", ".join(f'"{k}" = ?' for k in names)
            text = f'UPDATE {name} SET {sets} WHERE "_rid" = ?'
        else:
            text = f'DELETE FROM {name} WHERE "_rid" = ?'
        if len(_SQL) > 4096:
            _SQL.clear()
        _SQL[key] = text
    return text


def apply(db: Target, row: C.RowEvent, pieces: tuple[str, ...]) -> int:
    """One row change applied to the tables; the dba of its row's block (0: no table)."""
    table = _table(db, row)
    if table is None:
        return 0
    block, rid = _rid(row.rowid)
    cols = _columns(table)
    values = {k: to_sqlite(cols[k], _stored(table, row, v)) for k, v in row.after if k in cols}
    op = row.op
    try:
        if op == "INSERT":
            names = tuple(cols)
            db.conn.execute(_sql(table, op, names), (rid, *(values.get(c) for c in names)))
        elif op == "UPDATE":
            if values:
                db.conn.execute(_sql(table, op, tuple(values)), (*values.values(), rid))
        else:
            db.conn.execute(_sql(table, op, ()), (rid,))
    except sqlite3.IntegrityError as exc:
        raise DatabaseError(
            f"instance recovery cannot apply the {op} of {table.qualified} at ROWID "
            f"{row.rowid} (SCN {row.scn}): {exc}; the tables disagree with the redo",
            "GGS-SRC-0111",
        ) from None
    return make_dba(table.file_no, block)


def _stored(table: TableDef, row: C.RowEvent, value: Value) -> EmbeddedValue:
    """A decoded value of a type the embedded database stores (it has no RAW or INTERVAL
    columns: one would mean the redo is not this database's)."""
    if isinstance(value, bytes | timedelta):
        raise DatabaseError(
            f"instance recovery: a {type(value).__name__} value in the redo of "
            f"{table.qualified} at SCN {row.scn}, a type its tables do not store",
            "GGS-SRC-0111",
        )
    return value


def _keep_pieces(db: Target, row: C.RowEvent, pieces: tuple[str, ...]) -> None:
    """A chained row's ``_gg_pieces`` entry (module docstring): its head and ``pieces`` (in
    log order: the last first), cut as the writer cuts the row's values. Kept when an insert
    is read, as the insert kept it (a rolled-back insert's stays too: ROWIDs are not given
    out again), and when a re-chain is applied."""
    table = _table(db, row)
    if table is None:
        return
    rid = _rid(row.rowid)[1]
    after = dict(row.after)
    enc = encode_row(table, tuple(_stored(table, row, after.get(c.name)) for c in table.columns))
    ranges = row_pieces(rg.columns_of_row(enc))
    rids = [rid, *(_rid(p)[1] for p in reversed(pieces))]
    if len(ranges) != len(rids):
        raise DatabaseError(
            f"instance recovery: the chained row of {table.qualified} at ROWID {row.rowid} "
            f"(SCN {row.scn}) has {len(rids)} pieces in the redo, its values make "
            f"{len(ranges)}",
            "GGS-SRC-0111",
        )
    db.keep_pieces(table, rid, tuple((r, *part) for r, part in zip(rids, ranges, strict=True)))


def _allocated(db: Target, state: Space, row: C.RowEvent, pieces: tuple[str, ...]) -> None:
    """Every ROWID an insert or a re-chain used moves its table's allocator and the block
    counter past it (what ``Database.allocate`` did before the kill)."""
    if row.op != "INSERT" and not pieces:
        return
    table = _table(db, row)
    if table is None:
        return
    sp = state.space.get(str(table.obj))
    for each in (row.rowid, *reversed(pieces)):
        block, rid = _rid(each)
        slot = rid & 0xFFFF
        state.next_block = max(state.next_block, block)
        if sp is not None and (block, slot) >= (sp[0], sp[1]):
            sp[0], sp[1] = block, slot + 1
