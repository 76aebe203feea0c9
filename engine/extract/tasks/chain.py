"""Chained rows in the task miner (:mod:`engine.extract.tasks.miner`): the pieces of a row
written over several records, held by transaction until the row binds, and a range that
ends inside them.

A row inserted in several pieces (Oracle logs the last piece, flag L, first and the head,
flag F, last; each piece's columns numbered from 0) is held until its head comes
(:meth:`Chains.insert_piece`); a chained row's update or delete (:mod:`rowpieces`: the
supplemental F ... L flags) until its last piece (:meth:`Chains.change_piece`). A range that
ends with pieces pending reads on past its end until they bind (:meth:`Chains.read_on`): the
row is that range's, and the next range drops the pieces it starts with (a piece with
nothing pending that does not open a row). The log ending first (a current log) cuts the
range where the first pending row's first record starts (:meth:`Chains.cut`).
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from engine.embedded.errors import RedoCorruptError
from engine.extract.tasks import rowpieces
from engine.extract.tasks.plan import Event
from engine.redo.pieces import join
from engine.redo.rowid import FB_F, FB_L
from engine.redo.scan import Scan

Raw = dict[int, bytes | None]  # column number -> Oracle bytes (None: NULL)
#: The task miner's reader of one record: (buf, lo, size, scan, offset, stop, LWN SCN,
#: LWN time, out)
Record = Callable[[bytes, int, int, Scan, int, int, int, int, list[Event]], None]


class Chains:
    """The chained rows pending in a range, by transaction (module docstring)."""

    def __init__(self) -> None:
        # pieces of a row being inserted: (the piece's columns, its ROWID, its flags, its
        # record's offset), the last piece first
        self.inserts: dict[str, list[tuple[Raw, str, int, int]]] = {}
        # pieces of a row's update or delete
        self.changes: dict[str, list[rowpieces.Piece]] = {}
        self.read = 0  # pieces of a pending row read (the read-on past a range's end)

    def pending(self) -> bool:
        return bool(self.inserts or self.changes)

    def read_on(
        self, path: str, at: int, limit: int | None, out: list[Event], record: Record
    ) -> tuple[int, int]:
        """A range that ends inside a chained row's pieces (the last piece read, the head
        not yet: Oracle logs the head last) reads on past its end from ``at``, record by
        record (``record``: the task miner's), until the head binds the row. The database
        writes a row's pieces one after another: a record that is not the next piece of a
        pending row is corrupt redo (never half a row); the log ending first leaves the
        pieces pending (:meth:`cut`). Returns (records read, offset past the last)."""
        scan = Scan(path, at, None, limit)
        n = 0
        resume = at
        for offset, stop, buf, lo, size, lwn_scn, lwn_time in scan:
            read = self.read
            got: list[Event] = []
            try:
                record(buf, lo, size, scan, offset, stop, lwn_scn, lwn_time, got)
            except (struct.error, IndexError, ValueError) as exc:
                raise RedoCorruptError(f"{path}: record at {offset} corrupt: {exc}") from exc
            if self.read == read:
                pending = ", ".join(
                    [f"{x} ({p[-1][1]})" for x, p in self.inserts.items()]
                    + [f"{x} ({p[-1].rowid})" for x, p in self.changes.items()]
                )
                raise RedoCorruptError(
                    f"{path}: record at {offset}: not the next piece of the chained row "
                    f"pending in transaction {pending}"
                )
            out += got
            n += 1
            resume = stop
            if not self.pending():
                break
        return n, resume

    def cut(self, out: list[Event]) -> int:
        """The range ends where the first pending chained row's first record starts: its
        events from there on are dropped (a later read takes them again, with the row) and
        the pieces forgotten. Returns that offset (the range's resume)."""
        at = min(
            [p[0][3] for p in self.inserts.values()] + [p[0].head[1] for p in self.changes.values()]
        )
        out[:] = [e for e in out if e[3] < at]
        self.inserts.clear()
        self.changes.clear()
        return at

    def change_piece(self, xid: str, got: rowpieces.Piece) -> rowpieces.Bound | None:
        """A piece of a chained row's update or delete (:mod:`rowpieces`): held until the
        piece with the supplemental L flag, then the bound change. A piece without F and
        nothing pending belongs to a change whose first piece lies before this range (the
        range before reads on to its end: :meth:`read_on`), so it is dropped here."""
        pending = self.changes.get(xid)
        if pending is None:
            if not got.flags & FB_F:
                return None
            pending = self.changes[xid] = []
        elif got.flags & FB_F:
            raise RedoCorruptError(
                f"transaction {xid}: a chained row's change starts at {got.rowid} while the "
                f"change of {pending[0].rowid} is pending"
            )
        pending.append(got)
        self.read += 1
        if not got.flags & FB_L:
            return None
        del self.changes[xid]
        return rowpieces.bind(pending)

    def insert_piece(
        self, xid: str, after: Raw, rid: str, fb: int, offset: int
    ) -> tuple[Raw, str] | None:
        """A piece of a row inserted in several: held until the head comes, then the row's
        columns (the head's first) and the head's ROWID, as engine/redo/capture.py binds
        them. A piece with no L and nothing pending is the tail of a row whose last piece
        lies before this range: the range before reads on to its head (:meth:`read_on`),
        so it is dropped here. ``offset``: the piece's record."""
        pending = self.inserts.get(xid)
        if pending is None:
            if not fb & FB_L:
                return None
            pending = self.inserts[xid] = []
        elif fb & FB_L:
            raise RedoCorruptError(
                f"transaction {xid}: a chained row's last piece ({rid}) before the head of "
                f"the row pending ({pending[-1][1]})"
            )
        pending.append((after, rid, fb, offset))
        self.read += 1
        if not fb & FB_F:
            return None
        del self.inserts[xid]
        # the head's columns first; a column cut over two pieces (N, then P) joined
        cols = join(((f, tuple(c.items())) for c, _rid, f, _at in reversed(pending)), laid=True)
        return cols, rid
