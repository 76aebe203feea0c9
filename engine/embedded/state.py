"""What a session's statements work on: the database, seen through a small protocol, and the
open transaction with its undo entries. Shared by sessions (:mod:`engine.embedded.session`),
row helpers (:mod:`engine.embedded.rows`), DML and undo, which import this and not each other.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from engine.embedded import redogen as rg
from engine.embedded.dictionary import Dictionary, TableDef
from engine.redo.codecs import Value
from engine.redo.ids import Uba, Xid
from engine.redo.model import ChangeVector

Row = tuple[Value, ...]
#: where a chained row's pieces are, head first: (rid, first column, column past the last,
#: bytes of the first column in the pieces before, where the last column's part ends: 0, 0
#: for whole columns; :data:`engine.embedded.rows.Part`)
Pieces = tuple[tuple[int, int, int, int, int], ...]
#: the records a change of a chained row wrote a piece each (engine/embedded/chained.py), in
#: the order written: the piece's index in the row's :data:`Pieces` and its record's undo
#: address (what that piece's compensation names when the change is rolled back)
PieceUndos = tuple[tuple[int, Uba], ...]


class OnThread(Protocol):
    """A session as undo sees it: the redo thread its compensation is written to."""

    @property
    def thread(self) -> int: ...


class Writer(OnThread, Protocol):
    """A session as a chained row's writer sees it (engine/embedded/chained.py)."""

    def first_cvs(self, txn: Txn, scn: int) -> tuple[list[ChangeVector], list[ChangeVector]]: ...

    def session_cv(self, txn: Txn) -> list[ChangeVector]: ...


class Engine(Protocol):
    """What a session needs from its database."""

    conn: sqlite3.Connection
    dictionary: Dictionary
    locks: dict[tuple[int, int], str]
    table_locks: dict[int, str]
    key_locks: dict[tuple[int, str, tuple[bytes | None, ...]], str]
    #: the chained rows of each table (object number): head rid -> :data:`Pieces`
    chained: dict[int, dict[int, Pieces]]

    def keep_pieces(self, table: TableDef, rid: int, pieces: Pieces) -> None: ...  # (): forget

    def next_scn(self) -> int: ...

    def note_commit(self, blocks: set[int], scn: int) -> None: ...

    @property
    def dirty_blocks(self) -> dict[int, list[tuple[int, int, int]]]: ...

    def now(self) -> datetime: ...

    def new_xid(self) -> Xid: ...

    def release_xid(self, xid: Xid) -> None: ...

    def allocate(self, table: TableDef, n: int, fresh_block: bool = False) -> list[int]: ...

    def emit(
        self, thread: int, scn: int, changes: Sequence[ChangeVector], *, switch: bool = True
    ) -> None: ...

    def end_transaction(self, thread: int) -> None: ...


@dataclass
class UndoEntry:
    """How to undo one change: ``ins``/``load`` (rows ``rids`` were added), ``del`` (row
    ``rids[0]`` had values ``before``), ``upd`` (columns ``cols`` had values ``before``).
    A change of a chained row written a record per piece: the row's ``pieces`` and, per
    record, its piece and undo address (``undos``): its rollback writes a compensation per
    piece, each naming its piece's undo record (engine/embedded/chained.py); ``uba``: the
    head's record's (empty ``undos``: written whole, one record at ``uba``). An update that
    re-chained the row (chained.rechain): ``moved`` its new pieces, ``pieces`` its old ones
    (one: it was a row in one piece), ``cols`` every column, ``before`` the whole old row;
    an ``undos`` piece index counts the old pieces, then the new ones."""

    kind: str
    table: str
    rids: tuple[int, ...]
    uba: Uba
    before: Row = ()
    cols: tuple[int, ...] = ()
    pieces: Pieces = ()
    undos: PieceUndos = ()
    moved: Pieces = ()

    def names(self, uba: Uba) -> bool:
        """Whether ``uba`` is one of this change's undo records (a compensation names it)."""
        return uba == self.uba or any(u == uba for _, u in self.undos)


@dataclass
class Txn:
    ids: rg.TxnIds
    start_scn: int
    start_time: datetime
    entries: list[UndoEntry] = field(default_factory=list)
    savepoints: dict[str, int] = field(default_factory=dict)
    locked: set[tuple[int, int]] = field(default_factory=set)
    # unique-key locks, each with the number of undo entries when it was first taken
    keys: dict[tuple[int, str, tuple[bytes | None, ...]], int] = field(default_factory=dict)
    direct_tables: set[int] = field(default_factory=set)
    info_written: bool = False

    @property
    def xid(self) -> Xid:
        return self.ids.xid
