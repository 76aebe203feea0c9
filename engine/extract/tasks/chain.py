"""Rows in pieces in the task miner (:mod:`engine.extract.tasks.miner`): the records of a row
change written over several (a chained row's insert, update or delete; a migrated or
re-chained row), held by transaction until they bind, and a range that ends inside them.

The pieces (:mod:`rowpieces`) bind by the redo miner's rules (``engine/redo/pieces.py``):
:meth:`Chains.piece` keeps a transaction's open change until a piece completes it. A piece
that marks no first end with nothing pending belongs to a change whose first piece lies
before this range (the range before reads on to its end: :meth:`Chains.read_on`), so it is
dropped here. A range that ends with pieces pending reads on past its end until they bind:
the row is that range's. The log ending first (a current log) cuts the range where the first
pending row's first record starts (:meth:`Chains.cut`).
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from engine.embedded.errors import RedoCorruptError
from engine.extract.tasks import rowpieces
from engine.extract.tasks.plan import Event
from engine.redo import pieces as P
from engine.redo.scan import Scan

Raw = dict[int, bytes | None]  # column number -> Oracle bytes (None: NULL)
#: The task miner's reader of one record: (buf, lo, size, scan, offset, stop, LWN SCN,
#: LWN time, out)
Record = Callable[[bytes, int, int, Scan, int, int, int, int, list[Event]], None]


class Chains:
    """The rows in pieces pending in a range, by transaction (module docstring)."""

    def __init__(self) -> None:
        self.changes: dict[str, list[rowpieces.Piece]] = {}
        self.read = 0  # pieces of a pending row read (the read-on past a range's end)

    def pending(self) -> bool:
        return bool(self.changes)

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
                pending = ", ".join(f"{x} ({p[-1].rowid})" for x, p in self.changes.items())
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
        at = min(p[0].head[1] for p in self.changes.values())
        out[:] = [e for e in out if e[3] < at]
        self.changes.clear()
        return at

    def piece(self, xid: str, got: rowpieces.Piece) -> rowpieces.Bound | None:
        """A record of a row change in pieces: held until its change binds, then the bound
        change (the redo miner's rules, ``engine/redo/capture.py`` ``Miner._row``). A
        piece that marks no first end with nothing pending is dropped (module
        docstring); two changes overlapping is corrupt redo."""
        p = got.p
        pending = self.changes.get(xid)
        if pending and not any(q.p.carries for q in pending) and P.ends(p)[0]:
            pending = None  # (a lock that opened nothing: replaced)
        if not pending:
            first, last = P.ends(p, open_=False)
            if not first:
                return None
            self.read += 1
            if last:
                self.changes.pop(xid, None)
                return self._bind([got])
            self.changes[xid] = [got]
            return None
        if P.clashes([q.p for q in pending], p):
            raise RedoCorruptError(
                f"transaction {xid}: a row change in pieces starts at {got.rowid} while the "
                f"change of {pending[0].rowid} is pending"
            )
        pending.append(got)
        self.read += 1
        b = self._bind(pending)
        if b is not None:
            del self.changes[xid]
        return b

    @staticmethod
    def _bind(pieces: list[rowpieces.Piece]) -> rowpieces.Bound | None:
        try:
            return rowpieces.bind(pieces)
        except P.Unplaced as exc:
            raise RedoCorruptError(str(exc)) from exc
