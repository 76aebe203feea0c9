"""Oracle's own redo (engine/redo) as the Extract's logical change records.

The seam between the redo room and the Extract: :class:`OracleLcrs` turns each record of an
Oracle log into the :class:`~engine.changes.Lcr` records the Extract's transaction cache,
trail writer, checkpoints and Bounded Recovery consume (BEGIN, SESSION, ROW, UNDO, COMMIT,
ROLLBACK), positioned by (thread, sequence, byte offset of the record in its log), with
column values as the trail's text (:func:`engine.extract.tasks.decode.text_of`) and column
indexes in the dictionary's column order. Driver side, in process: archived logs are
complete files, read in order.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from engine.changes import Kind, Lcr, Position
from engine.extract.tasks.decode import text_of
from engine.redo import capture as C
from engine.redo import layout as L
from engine.redo.dictionary import Dictionary, Table
from engine.redo.framing import Record
from engine.redo.values import Value
from engine.trail.layout import IOType
from engine.trail.model import Columns, TableDef, datetime_to_micros

IO_TYPES = {"INSERT": IOType.INSERT, "DELETE": IOType.DELETE, "UPDATE": IOType.FIELDCOMP}


def redo_micros(t: int) -> int:
    """Oracle's redo time as the trail's IO time (microseconds since 1970, source-local)."""
    return datetime_to_micros(datetime(*L.redo_time(t))) if t else 0


def table_def(t: Table) -> TableDef:
    return TableDef(t.full_name, tuple(c.name for c in t.columns))


def record_end(rec: Record, block_size: int) -> int:
    """The byte offset just past a record in its log (block headers crossed included)."""
    payload = block_size - L.BLOCK_HEADER.size
    start = rec.rba.block * block_size + rec.rba.offset
    room = block_size - rec.rba.offset
    if rec.size <= room:
        return start + rec.size
    rest = rec.size - room
    k = -(-rest // payload)
    return (rec.rba.block + k) * block_size + L.BLOCK_HEADER.size + rest - (k - 1) * payload


class OracleLcrs:
    def __init__(
        self,
        dictionary: Dictionary,
        captured: Callable[[Table], bool],
        thread: int,
        block_size: int,
        warn: Callable[[str], None] = lambda _m: None,
    ) -> None:
        self.miner = C.Miner(dictionary, captured, warn)
        self.thread = thread
        self.block_size = block_size
        self._index = {
            t.full_name: {c.name: i for i, c in enumerate(t.columns)}
            for t in self.miner.tables.values()
        }

    def _columns(self, table: Table, values: tuple[tuple[str, Value], ...]) -> Columns:
        idx = self._index[table.full_name]
        types = {c.name: c.type for c in table.columns}
        cols = {idx[n]: text_of(types[n], v) for n, v in values}
        return tuple(sorted(cols.items()))

    def lcrs(self, rec: Record) -> list[Lcr]:
        pos = Position(
            self.thread, rec.rba.sequence, rec.rba.block * self.block_size + rec.rba.offset
        )
        end = record_end(rec, self.block_size)
        time_us = redo_micros(self.miner.lwn_time if not rec.lwn else rec.lwn.time)
        out: list[Lcr] = []

        def lcr(kind: Kind, xid: str, **kw: Any) -> Lcr:
            return Lcr(kind, xid, pos, end, rec.scn, rec.subscn, time_us, **kw)

        for ev in self.miner.feed(rec):
            xid = ev.xid.text()
            if isinstance(ev, C.TxBegin):
                out.append(lcr(Kind.BEGIN, xid))
            elif isinstance(ev, C.TxSession):
                out.append(lcr(Kind.SESSION, xid, user=ev.user, txn_name=ev.name))
            elif isinstance(ev, C.TxRow):
                r = ev.row
                image = r.after if r.op != "DELETE" else r.before
                out.append(
                    lcr(
                        Kind.ROW,
                        xid,
                        io_type=int(IO_TYPES[r.op]),
                        table=r.table.full_name,
                        rowid=r.rowid,
                        columns=self._columns(r.table, image),
                        ref=ev.ref,
                    )
                )
            elif isinstance(ev, C.TxUndo):
                out.append(lcr(Kind.UNDO, xid, ref=ev.ref))
            else:
                kind = Kind.ROLLBACK if ev.rollback else Kind.COMMIT
                out.append(
                    Lcr(kind, xid, pos, end, ev.commit_scn, rec.subscn, redo_micros(ev.time))
                )
        return out
